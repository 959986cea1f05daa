package application_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// In-memory fakes of the account ports. Repositories hand out copies, and Update applies change
// to a copy that is stored only when change succeeds, as a transaction would. Events returned by
// change (or passed to Create) land in the shared audit log.

func cloneUser(u *user.User) *user.User {
	codes := make([][]byte, len(u.RecoveryCodes()))
	for i, c := range u.RecoveryCodes() {
		codes[i] = slices.Clone(c)
	}
	var changed *time.Time
	if t := u.PasswordChangedAt(); t != nil {
		c := *t
		changed = &c
	}
	return user.UnmarshalFromDatabase(u.ID(), u.Email(), u.Name(), u.PasswordHash(), slices.Clone(u.TOTPSecret()), codes,
		u.OIDCSubject(), u.CreatedAt(), changed)
}

type memAudit struct {
	mu     sync.Mutex
	events []audit.Event
}

func (a *memAudit) Append(_ context.Context, events ...audit.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, events...)
	return nil
}

func (a *memAudit) List(_ context.Context, workspaceID string, q ports.AuditQuery) ([]audit.Event, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []audit.Event
	for i := len(a.events) - 1; i >= 0; i-- {
		if e := a.events[i]; e.WorkspaceID == workspaceID && (q.Action == "" || string(e.Action) == q.Action) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (a *memAudit) Purge(_ context.Context, before time.Time) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := a.events[:0]
	for _, e := range a.events {
		if !e.CreatedAt.Before(before) {
			kept = append(kept, e)
		}
	}
	n := int64(len(a.events) - len(kept))
	a.events = kept
	return n, nil
}

// of returns the events with the action, oldest first.
func (a *memAudit) of(action audit.Action) []audit.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []audit.Event
	for _, e := range a.events {
		if e.Action == action {
			out = append(out, e)
		}
	}
	return out
}

type memUsers struct {
	mu          sync.Mutex
	byID        map[string]*user.User
	memberships *memMemberships
	audit       *memAudit
}

func (r *memUsers) Create(ctx context.Context, u *user.User, m *member.Membership, events ...audit.Event) error {
	r.mu.Lock()
	for _, other := range r.byID {
		if other.Email() == u.Email() {
			r.mu.Unlock()
			return domain.ErrConflict
		}
	}
	r.byID[u.ID()] = cloneUser(u)
	r.mu.Unlock()
	if m != nil {
		if err := r.memberships.Create(ctx, m); err != nil {
			return err
		}
	}
	return r.audit.Append(ctx, events...)
}

func (r *memUsers) Get(_ context.Context, id string) (*user.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u, ok := r.byID[id]; ok {
		return cloneUser(u), nil
	}
	return nil, domain.ErrNotFound
}

func (r *memUsers) find(match func(*user.User) bool) (*user.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range r.byID {
		if match(u) {
			return cloneUser(u), nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *memUsers) FindByEmail(_ context.Context, email string) (*user.User, error) {
	return r.find(func(u *user.User) bool { return u.Email() == email })
}

func (r *memUsers) FindByOIDCSubject(_ context.Context, subject string) (*user.User, error) {
	return r.find(func(u *user.User) bool { return subject != "" && u.OIDCSubject() == subject })
}

func (r *memUsers) Count(context.Context) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.byID)), nil
}

func (r *memUsers) Update(ctx context.Context, id string, change func(*user.User) (ports.Effects, error)) (*user.User, error) {
	r.mu.Lock()
	u, ok := r.byID[id]
	if !ok {
		r.mu.Unlock()
		return nil, domain.ErrNotFound
	}
	c := cloneUser(u)
	fx, err := change(c)
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	r.byID[id] = cloneUser(c)
	r.mu.Unlock()
	return c, r.audit.Append(ctx, fx.Audit...)
}

type memMemberships struct {
	mu         sync.Mutex
	items      []*member.Membership
	workspaces *memWorkspaces
	sessions   *memSessions
	audit      *memAudit
}

func (r *memMemberships) Create(ctx context.Context, m *member.Membership, events ...audit.Event) error {
	r.mu.Lock()
	for _, o := range r.items {
		if o.WorkspaceID() == m.WorkspaceID() && o.UserID() == m.UserID() {
			r.mu.Unlock()
			return domain.ErrConflict
		}
	}
	r.items = append(r.items, m)
	r.mu.Unlock()
	return r.audit.Append(ctx, events...)
}

func (r *memMemberships) Get(context.Context, string, string) (ports.Member, error) {
	return ports.Member{}, errors.New("not used by these tests")
}

func (r *memMemberships) Find(_ context.Context, workspaceID, userID string) (*member.Membership, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.items {
		if m.WorkspaceID() == workspaceID && m.UserID() == userID {
			return m, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *memMemberships) List(context.Context, string, ports.Page) ([]ports.Member, error) {
	return nil, errors.New("not used by these tests")
}

func (r *memMemberships) ForUser(ctx context.Context, userID string) ([]ports.WorkspaceMembership, error) {
	r.mu.Lock()
	var ms []*member.Membership
	for _, m := range r.items {
		if m.UserID() == userID {
			ms = append(ms, m)
		}
	}
	r.mu.Unlock()
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].CreatedAt().Before(ms[j].CreatedAt()) })
	out := make([]ports.WorkspaceMembership, 0, len(ms))
	for _, m := range ms {
		w, err := r.workspaces.Get(ctx, m.WorkspaceID())
		if err != nil {
			return nil, err
		}
		out = append(out, ports.WorkspaceMembership{Membership: m, Workspace: w})
	}
	return out, nil
}

func (r *memMemberships) Update(context.Context, string, string, func(*member.Membership, int) (ports.Effects, error)) (ports.Member, error) {
	return ports.Member{}, errors.New("not used by these tests")
}

// Delete removes the membership and the user's sessions in that workspace, as the real one does.
func (r *memMemberships) Delete(ctx context.Context, workspaceID, id string, check func(*member.Membership, int) ([]audit.Event, error)) error {
	r.mu.Lock()
	i := slices.IndexFunc(r.items, func(m *member.Membership) bool { return m.WorkspaceID() == workspaceID && m.ID() == id })
	if i < 0 {
		r.mu.Unlock()
		return domain.ErrNotFound
	}
	m := r.items[i]
	owners := 0
	for _, o := range r.items {
		if o.WorkspaceID() == workspaceID && o.Role() == member.RoleOwner {
			owners++
		}
	}
	events, err := check(m, owners)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	r.items = slices.Delete(r.items, i, i+1)
	r.mu.Unlock()
	r.sessions.deleteWhere(func(s *session.Session) bool { return s.UserID() == m.UserID() && s.WorkspaceID() == workspaceID })
	return r.audit.Append(ctx, events...)
}

func (r *memMemberships) Count(_ context.Context, workspaceID string) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, m := range r.items {
		if m.WorkspaceID() == workspaceID {
			n++
		}
	}
	return n, nil
}

type memSessions struct {
	mu      sync.Mutex
	byID    map[string]*session.Session
	touches int
}

func (r *memSessions) Create(_ context.Context, s *session.Session) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.byID {
		if bytes.Equal(o.TokenHash(), s.TokenHash()) {
			return domain.ErrConflict
		}
	}
	r.byID[s.ID()] = s
	return nil
}

func (r *memSessions) FindByToken(_ context.Context, tokenHash []byte) (*session.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.byID {
		if bytes.Equal(s.TokenHash(), tokenHash) {
			return s, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *memSessions) Touch(_ context.Context, id string, at time.Time, workspaceID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byID[id]
	if !ok {
		return domain.ErrNotFound
	}
	if workspaceID == "" {
		workspaceID = s.WorkspaceID()
	}
	r.byID[id] = session.UnmarshalFromDatabase(s.ID(), s.TokenHash(), s.UserID(), workspaceID, s.CreatedAt(), at)
	r.touches++
	return nil
}

func (r *memSessions) Delete(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byID, id)
	return nil
}

func (r *memSessions) DeleteForUser(_ context.Context, userID, keepID string) error {
	r.deleteWhere(func(s *session.Session) bool { return s.UserID() == userID && s.ID() != keepID })
	return nil
}

func (r *memSessions) Purge(_ context.Context, now time.Time) (int64, error) {
	return r.deleteWhere(func(s *session.Session) bool { return !s.Valid(now) }), nil
}

func (r *memSessions) deleteWhere(match func(*session.Session) bool) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for id, s := range r.byID {
		if match(s) {
			delete(r.byID, id)
			n++
		}
	}
	return n
}

func (r *memSessions) forUser(userID string) []*session.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*session.Session
	for _, s := range r.byID {
		if s.UserID() == userID {
			out = append(out, s)
		}
	}
	return out
}

type memUserTokens struct {
	mu    sync.Mutex
	items []ports.UserToken
}

func (r *memUserTokens) Put(_ context.Context, t ports.UserToken) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = slices.DeleteFunc(r.items, func(o ports.UserToken) bool {
		return o.Purpose == t.Purpose && o.UserID == t.UserID || bytes.Equal(o.TokenHash, t.TokenHash)
	})
	t.TokenHash = slices.Clone(t.TokenHash)
	r.items = append(r.items, t)
	return nil
}

func (r *memUserTokens) Peek(_ context.Context, purpose string, tokenHash []byte, now time.Time) (ports.UserToken, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.items {
		if t.Purpose == purpose && bytes.Equal(t.TokenHash, tokenHash) && now.Before(t.ExpiresAt) {
			return t, nil
		}
	}
	return ports.UserToken{}, domain.ErrNotFound
}

func (r *memUserTokens) Spend(ctx context.Context, purpose string, tokenHash []byte, now time.Time) (ports.UserToken, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range r.items {
		if t.Purpose == purpose && bytes.Equal(t.TokenHash, tokenHash) && now.Before(t.ExpiresAt) {
			r.items = slices.Delete(r.items, i, i+1)
			return t, nil
		}
	}
	return ports.UserToken{}, domain.ErrNotFound
}

func (r *memUserTokens) ForUser(_ context.Context, purpose, userID string, now time.Time) (ports.UserToken, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.items {
		if t.Purpose == purpose && t.UserID == userID && now.Before(t.ExpiresAt) {
			return t, nil
		}
	}
	return ports.UserToken{}, domain.ErrNotFound
}

// memThrottle is the throttle store in memory: one mutex makes each Reserve's counts and
// insert one step, so it is exact under concurrency as the database's is.
type memThrottle struct {
	mu     sync.Mutex
	places map[string][]throttlePlace
	// refused is when each subject last refused an attempt because it was full.
	refused map[string]time.Time
}

type throttlePlace struct {
	id string
	at time.Time
}

func (t *memThrottle) Reserve(_ context.Context, id string, at, since time.Time, limit int, subjects ...string) (bool, time.Time, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ok, freeFrom := true, time.Time{}
	for _, s := range subjects {
		var ats []time.Time
		for _, p := range t.places[s] {
			if p.at.After(since) {
				ats = append(ats, p.at)
			}
		}
		if len(ats) < limit {
			continue
		}
		ok = false
		if t.refused == nil {
			t.refused = map[string]time.Time{}
		}
		if at.After(t.refused[s]) {
			t.refused[s] = at
		}
		slices.SortFunc(ats, time.Time.Compare)
		if f := ats[len(ats)-limit]; f.After(freeFrom) {
			freeFrom = f
		}
	}
	if !ok {
		return false, freeFrom, nil
	}
	for _, s := range subjects {
		t.places[s] = append(t.places[s], throttlePlace{id: id, at: at})
	}
	return true, time.Time{}, nil
}

func (t *memThrottle) Release(_ context.Context, id, watched string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	contested := false
	for s, ps := range t.places {
		for _, p := range ps {
			if refused, ok := t.refused[s]; ok && p.id == id && !refused.Before(p.at) {
				contested = true
			}
			if s == watched && p.id == id {
				for _, o := range ps {
					contested = contested || o.at.After(p.at)
				}
			}
		}
		t.places[s] = slices.DeleteFunc(ps, func(p throttlePlace) bool { return p.id == id })
	}
	return contested, nil
}

// count is how many places subject holds after since.
func (t *memThrottle) count(subject string, since time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.places[subject] {
		if p.at.After(since) {
			n++
		}
	}
	return n
}

func (t *memThrottle) Purge(_ context.Context, before time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s, ps := range t.places {
		t.places[s] = slices.DeleteFunc(ps, func(p throttlePlace) bool { return p.at.Before(before) })
	}
	return nil
}

// memAccountMail is the account mail outbox in memory.
type memAccountMail struct {
	mu    sync.Mutex
	items []memAccountMailItem
}

type memAccountMailItem struct {
	ports.QueuedAccountMail
	due time.Time
}

func (o *memAccountMail) Add(_ context.Context, m ports.QueuedAccountMail) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.items = append(o.items, memAccountMailItem{QueuedAccountMail: m, due: m.CreatedAt})
	return nil
}

func (o *memAccountMail) Claim(_ context.Context, now time.Time, lease time.Duration, limit int) ([]ports.QueuedAccountMail, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ports.QueuedAccountMail
	for i := range o.items {
		if len(out) < limit && !o.items[i].due.After(now) {
			o.items[i].due = now.Add(lease)
			out = append(out, o.items[i].QueuedAccountMail)
		}
	}
	return out, nil
}

func (o *memAccountMail) Retry(_ context.Context, id string, attempts int, at time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range o.items {
		if o.items[i].ID == id {
			o.items[i].Attempts, o.items[i].due = attempts, at
		}
	}
	return nil
}

func (o *memAccountMail) Delete(_ context.Context, id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.items = slices.DeleteFunc(o.items, func(m memAccountMailItem) bool { return m.ID == id })
	return nil
}

func (o *memAccountMail) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.items)
}

// memDataKeys is the data key store behind the real cipher.
type memDataKeys struct {
	mu   sync.Mutex
	keys []ports.WrappedKey
}

func (r *memDataKeys) Current(_ context.Context, workspaceID string) (ports.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.keys) - 1; i >= 0; i-- {
		if r.keys[i].WorkspaceID == workspaceID {
			return r.keys[i], nil
		}
	}
	return ports.WrappedKey{}, domain.ErrNotFound
}

func (r *memDataKeys) Get(_ context.Context, id string) (ports.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		if k.ID == id {
			return k, nil
		}
	}
	return ports.WrappedKey{}, domain.ErrNotFound
}

func (r *memDataKeys) Insert(_ context.Context, k ports.WrappedKey) (ports.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.keys {
		if o.WorkspaceID == k.WorkspaceID {
			return o, nil
		}
	}
	r.keys = append(r.keys, k)
	return k, nil
}

func (r *memDataKeys) All(context.Context) ([]ports.WrappedKey, error) { return r.keys, nil }

func (r *memDataKeys) Rewrap(context.Context, string, string, []byte) error { return nil }

// countingHasher is the real argon2id hasher (with cheap parameters) that remembers which
// hashes Verify was asked about, so tests can see that every path does the same work.
type countingHasher struct {
	*crypto.PasswordHasher
	mu       sync.Mutex
	verified []string
	entered  chan struct{} // see hold
	release  chan struct{}
}

func (h *countingHasher) Verify(encoded, password string) bool {
	h.mu.Lock()
	h.verified = append(h.verified, encoded)
	entered, release := h.entered, h.release
	h.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
		<-release
	}
	return h.PasswordHasher.Verify(encoded, password)
}

// hold makes every Verify from now on announce itself on the returned channel and wait until
// the returned release is called (at the latest when the test ends; Verify no longer waits
// after it), so a test sees how many passwords are being checked at once.
func (h *countingHasher) hold(t *testing.T) (entered <-chan struct{}, release func()) {
	ch, rel := make(chan struct{}, 100), make(chan struct{})
	h.mu.Lock()
	h.entered, h.release = ch, rel
	h.mu.Unlock()
	release = sync.OnceFunc(func() {
		h.mu.Lock()
		h.entered, h.release = nil, nil
		h.mu.Unlock()
		close(rel)
	})
	t.Cleanup(release)
	return ch, release
}

func (h *countingHasher) reset() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.verified
	h.verified = nil
	return v
}

// fakeOIDC stands in for the identity provider: each code maps to an identity, or to an error
// (as an unverified email is).
type fakeOIDC struct {
	identities map[string]ports.OIDCIdentity
	refusals   map[string]error
	// down makes AuthURL return "", as the adapter does while discovery fails.
	down bool
}

func (f *fakeOIDC) AuthURL(state, nonce, verifier string) string {
	if f.down {
		return ""
	}
	return "https://idp.example/authorize?state=" + state + "&nonce=" + nonce + "&challenge-of=" + verifier
}

func (f *fakeOIDC) Exchange(_ context.Context, code, verifier, nonce string) (ports.OIDCIdentity, error) {
	if verifier == "" || nonce == "" {
		return ports.OIDCIdentity{}, errors.New("missing verifier or nonce")
	}
	if err, ok := f.refusals[code]; ok {
		return ports.OIDCIdentity{}, err
	}
	id, ok := f.identities[code]
	if !ok {
		return ports.OIDCIdentity{}, errors.New("invalid_grant")
	}
	return id, nil
}

type memMailer struct {
	mu   sync.Mutex
	sent []ports.Mail
	// refuse is how many of the next sends fail, as a relay that is down does.
	refuse int
}

func (m *memMailer) Send(_ context.Context, mail ports.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refuse > 0 {
		m.refuse--
		return errors.New("451 try again later")
	}
	m.sent = append(m.sent, mail)
	return nil
}

// accountsHarness is one application with every account port faked in memory (the password
// hasher, TOTP and cipher are the real adapters).
type accountsHarness struct {
	app         *application.Application
	clock       *fixedClock
	ids         *seqIDs
	ipHasher    *hmacHasher
	workspaces  *memWorkspaces
	users       *memUsers
	memberships *memMemberships
	sessions    *memSessions
	tokens      *memUserTokens
	audit       *memAudit
	throttle    *memThrottle
	outbox      *memAccountMail
	passwords   *countingHasher
	oidc        *fakeOIDC
	mailer      *memMailer
}

func newAccountsHarness(t *testing.T) *accountsHarness {
	t.Helper()
	h := &accountsHarness{
		clock:      &fixedClock{now: testNow},
		ids:        &seqIDs{},
		ipHasher:   &hmacHasher{key: []byte("server secret")},
		workspaces: &memWorkspaces{},
		sessions:   &memSessions{byID: map[string]*session.Session{}},
		tokens:     &memUserTokens{},
		audit:      &memAudit{},
		throttle:   &memThrottle{places: map[string][]throttlePlace{}},
		outbox:     &memAccountMail{},
		passwords: &countingHasher{PasswordHasher: crypto.NewPasswordHasherWithParams(crypto.Argon2Params{
			Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})},
		oidc:   &fakeOIDC{identities: map[string]ports.OIDCIdentity{}, refusals: map[string]error{}},
		mailer: &memMailer{},
	}
	h.memberships = &memMemberships{workspaces: h.workspaces, sessions: h.sessions, audit: h.audit}
	h.users = &memUsers{byID: map[string]*user.User{}, memberships: h.memberships, audit: h.audit}
	cipher := crypto.NewCipher(crypto.NewKeyring(crypto.GenerateMasterKey()), &memDataKeys{}, h.ids, h.clock)
	h.app = application.New(application.Deps{
		Workspaces: h.workspaces, IDs: h.ids, Clock: h.clock, IPHasher: h.ipHasher,
		Users: h.users, Memberships: h.memberships, Sessions: h.sessions, Tokens: h.tokens, Audit: h.audit,
		Throttle: h.throttle, Passwords: h.passwords, TOTP: crypto.TOTP{}, OIDC: h.oidc, Mailer: h.mailer, AccountMail: h.outbox,
		Cipher: cipher,
	}, application.Settings{PublicURL: "https://forms.example.com/"})
	return h
}

// advance moves the fake clock.
func (h *accountsHarness) advance(d time.Duration) { h.clock.now = h.clock.now.Add(d) }

// addWorkspace creates a workspace.
func (h *accountsHarness) addWorkspace(t *testing.T, name string) string {
	t.Helper()
	w, err := h.app.Commands.CreateWorkspace.Handle(context.Background(), workspace.CreateWorkspace{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return w.ID()
}

// addUser creates a user with a password and a membership of each workspace given (owner of
// the first, editor of the others).
func (h *accountsHarness) addUser(t *testing.T, email, password string, workspaceIDs ...string) *user.User {
	t.Helper()
	u, err := user.New(h.ids.New(ports.PrefixUser), email, strings.Split(email, "@")[0], h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	hash, err := h.passwords.Hash(password)
	if err != nil {
		t.Fatal(err)
	}
	u.SetPasswordHash(hash, h.clock.Now())
	if err := h.users.Create(context.Background(), u, nil); err != nil {
		t.Fatal(err)
	}
	for i, w := range workspaceIDs {
		role := member.RoleOwner
		if i > 0 {
			role = member.RoleEditor
		}
		m, err := member.New(h.ids.New(ports.PrefixMembership), w, u.ID(), role, h.clock.Now().Add(time.Duration(i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.memberships.Create(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// Compile-time checks that the fakes satisfy the ports.
var (
	_ ports.UserRepository       = (*memUsers)(nil)
	_ ports.MembershipRepository = (*memMemberships)(nil)
	_ ports.SessionRepository    = (*memSessions)(nil)
	_ ports.UserTokenRepository  = (*memUserTokens)(nil)
	_ ports.AuditLog             = (*memAudit)(nil)
	_ ports.SignInThrottle       = (*memThrottle)(nil)
	_ ports.AccountMailOutbox    = (*memAccountMail)(nil)
	_ ports.DataKeyRepository    = (*memDataKeys)(nil)
	_ ports.PasswordHasher       = (*countingHasher)(nil)
	_ ports.OIDCProvider         = (*fakeOIDC)(nil)
	_ ports.Mailer               = (*memMailer)(nil)
)
