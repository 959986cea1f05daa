package apptest

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

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
		u.OIDCSubject(), u.CreatedAt(), changed, u.TimeZone())
}

type Audit struct {
	mu     sync.Mutex
	events []audit.Event
}

func (a *Audit) Append(_ context.Context, events ...audit.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, events...)
	return nil
}

func (a *Audit) List(_ context.Context, workspaceID string, q ports.AuditQuery) ([]audit.Event, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []audit.Event
	for i := len(a.events) - 1; i >= 0; i-- {
		if e := a.events[i]; e.WorkspaceID == workspaceID && (q.Action == "" || string(e.Action) == q.Action) && (q.ActorID == "" || e.Actor.ID == q.ActorID) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (a *Audit) Purge(_ context.Context, before time.Time) (int64, error) {
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

// Of returns the events with the action, oldest first.
func (a *Audit) Of(action audit.Action) []audit.Event {
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

type Users struct {
	mu          sync.Mutex
	ByID        map[string]*user.User
	Memberships *Memberships
	Audit       *Audit
}

func (r *Users) Create(ctx context.Context, u *user.User, m *member.Membership, events ...audit.Event) error {
	r.mu.Lock()
	for _, other := range r.ByID {
		if other.Email() == u.Email() {
			r.mu.Unlock()
			return user.ErrEmailTaken
		}
	}
	r.ByID[u.ID()] = cloneUser(u)
	r.mu.Unlock()
	if m != nil {
		if err := r.Memberships.Create(ctx, m); err != nil {
			return err
		}
	}
	return r.Audit.Append(ctx, events...)
}

func (r *Users) Get(_ context.Context, id string) (*user.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u, ok := r.ByID[id]; ok {
		return cloneUser(u), nil
	}
	return nil, domain.ErrNotFound
}

func (r *Users) find(match func(*user.User) bool) (*user.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range r.ByID {
		if match(u) {
			return cloneUser(u), nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *Users) FindByEmail(_ context.Context, email string) (*user.User, error) {
	return r.find(func(u *user.User) bool { return u.Email() == email })
}

func (r *Users) FindByOIDCSubject(_ context.Context, subject string) (*user.User, error) {
	return r.find(func(u *user.User) bool { return subject != "" && u.OIDCSubject() == subject })
}

func (r *Users) Count(context.Context) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.ByID)), nil
}

func (r *Users) Update(ctx context.Context, id string, change func(*user.User) (ports.Effects, error)) (*user.User, error) {
	r.mu.Lock()
	u, ok := r.ByID[id]
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
	r.ByID[id] = cloneUser(c)
	r.mu.Unlock()
	return c, r.Audit.Append(ctx, fx.Audit...)
}

type Memberships struct {
	mu         sync.Mutex
	Items      []*member.Membership
	Users      *Users
	Workspaces *Workspaces
	Sessions   *Sessions
	Audit      *Audit
}

func (r *Memberships) Create(ctx context.Context, m *member.Membership, events ...audit.Event) error {
	r.mu.Lock()
	for _, o := range r.Items {
		if o.WorkspaceID() == m.WorkspaceID() && o.UserID() == m.UserID() {
			r.mu.Unlock()
			return member.ErrAlreadyMember
		}
	}
	r.Items = append(r.Items, m)
	r.mu.Unlock()
	return r.Audit.Append(ctx, events...)
}

func (r *Memberships) Get(ctx context.Context, workspaceID, id string) (ports.Member, error) {
	r.mu.Lock()
	i := r.index(workspaceID, id)
	if i < 0 {
		r.mu.Unlock()
		return ports.Member{}, domain.ErrNotFound
	}
	m := r.Items[i]
	r.mu.Unlock()
	return r.withUser(ctx, m)
}

func (r *Memberships) index(workspaceID, id string) int {
	return slices.IndexFunc(r.Items, func(m *member.Membership) bool { return m.WorkspaceID() == workspaceID && m.ID() == id })
}

func (r *Memberships) withUser(ctx context.Context, m *member.Membership) (ports.Member, error) {
	u, err := r.Users.Get(ctx, m.UserID())
	if err != nil {
		return ports.Member{}, err
	}
	return ports.Member{Membership: m, User: u}, nil
}

// owners counts the owners of the workspace; the caller holds mu.
func (r *Memberships) owners(workspaceID string) int {
	n := 0
	for _, o := range r.Items {
		if o.WorkspaceID() == workspaceID && o.Role() == member.RoleOwner {
			n++
		}
	}
	return n
}

func (r *Memberships) Find(_ context.Context, workspaceID, userID string) (*member.Membership, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.Items {
		if m.WorkspaceID() == workspaceID && m.UserID() == userID {
			return m, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *Memberships) List(ctx context.Context, workspaceID string, page ports.Page) ([]ports.Member, error) {
	ms := r.where(func(m *member.Membership) bool { return m.WorkspaceID() == workspaceID })
	out := make([]ports.Member, 0, len(ms))
	for _, m := range ms[:min(len(ms), page.Limit)] {
		mu, err := r.withUser(ctx, m)
		if err != nil {
			return nil, err
		}
		out = append(out, mu)
	}
	return out, nil
}

// where returns the memberships match accepts, oldest first.
func (r *Memberships) where(match func(*member.Membership) bool) []*member.Membership {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ms []*member.Membership
	for _, m := range r.Items {
		if match(m) {
			ms = append(ms, m)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].CreatedAt().Before(ms[j].CreatedAt()) })
	return ms
}

func (r *Memberships) ForUser(ctx context.Context, userID string) ([]ports.WorkspaceMembership, error) {
	ms := r.where(func(m *member.Membership) bool { return m.UserID() == userID })
	out := make([]ports.WorkspaceMembership, 0, len(ms))
	for _, m := range ms {
		w, err := r.Workspaces.Get(ctx, m.WorkspaceID())
		if err != nil {
			return nil, err
		}
		out = append(out, ports.WorkspaceMembership{Membership: m, Workspace: w})
	}
	return out, nil
}

func (r *Memberships) Update(ctx context.Context, workspaceID, id string, change func(*member.Membership, int) (ports.Effects, error)) (ports.Member, error) {
	r.mu.Lock()
	i := r.index(workspaceID, id)
	if i < 0 {
		r.mu.Unlock()
		return ports.Member{}, domain.ErrNotFound
	}
	m := r.Items[i]
	c := member.UnmarshalFromDatabase(m.ID(), m.WorkspaceID(), m.UserID(), m.Role(), m.CreatedAt())
	fx, err := change(c, r.owners(workspaceID))
	if err != nil {
		r.mu.Unlock()
		return ports.Member{}, err
	}
	r.Items[i] = c
	r.mu.Unlock()
	if err := r.Audit.Append(ctx, fx.Audit...); err != nil {
		return ports.Member{}, err
	}
	return r.withUser(ctx, c)
}

// Delete removes the membership and the user's sessions in that workspace, as the real one does.
func (r *Memberships) Delete(ctx context.Context, workspaceID, id string, check func(*member.Membership, int) ([]audit.Event, error)) error {
	r.mu.Lock()
	i := r.index(workspaceID, id)
	if i < 0 {
		r.mu.Unlock()
		return domain.ErrNotFound
	}
	m := r.Items[i]
	events, err := check(m, r.owners(workspaceID))
	if err != nil {
		r.mu.Unlock()
		return err
	}
	r.Items = slices.Delete(r.Items, i, i+1)
	r.mu.Unlock()
	r.Sessions.deleteWhere(func(s *session.Session) bool { return s.UserID() == m.UserID() && s.WorkspaceID() == workspaceID })
	return r.Audit.Append(ctx, events...)
}

func (r *Memberships) Count(_ context.Context, workspaceID string) (int64, error) {
	return int64(len(r.where(func(m *member.Membership) bool { return m.WorkspaceID() == workspaceID }))), nil
}

type Sessions struct {
	mu      sync.Mutex
	ByID    map[string]*session.Session
	Touches int
}

func (r *Sessions) Create(_ context.Context, s *session.Session) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.ByID {
		if bytes.Equal(o.TokenHash(), s.TokenHash()) {
			return domain.ErrConflict
		}
	}
	r.ByID[s.ID()] = s
	return nil
}

func (r *Sessions) FindByToken(_ context.Context, tokenHash []byte) (*session.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.ByID {
		if bytes.Equal(s.TokenHash(), tokenHash) {
			return s, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *Sessions) Touch(_ context.Context, id string, at time.Time, workspaceID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.ByID[id]
	if !ok {
		return domain.ErrNotFound
	}
	if workspaceID == "" {
		workspaceID = s.WorkspaceID()
	}
	r.ByID[id] = session.UnmarshalFromDatabase(s.ID(), s.TokenHash(), s.UserID(), workspaceID, s.CreatedAt(), at)
	r.Touches++
	return nil
}

func (r *Sessions) Delete(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ByID, id)
	return nil
}

func (r *Sessions) DeleteForUser(_ context.Context, userID, keepID string) error {
	r.deleteWhere(func(s *session.Session) bool { return s.UserID() == userID && s.ID() != keepID })
	return nil
}

func (r *Sessions) Purge(_ context.Context, now time.Time) (int64, error) {
	return r.deleteWhere(func(s *session.Session) bool { return !s.Valid(now) }), nil
}

func (r *Sessions) deleteWhere(match func(*session.Session) bool) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for id, s := range r.ByID {
		if match(s) {
			delete(r.ByID, id)
			n++
		}
	}
	return n
}

func (r *Sessions) ForUser(userID string) []*session.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*session.Session
	for _, s := range r.ByID {
		if s.UserID() == userID {
			out = append(out, s)
		}
	}
	return out
}

type UserTokens struct {
	mu    sync.Mutex
	Items []ports.UserToken
}

func (r *UserTokens) Put(_ context.Context, t ports.UserToken) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Items = slices.DeleteFunc(r.Items, func(o ports.UserToken) bool {
		return o.Purpose == t.Purpose && o.UserID == t.UserID || bytes.Equal(o.TokenHash, t.TokenHash)
	})
	t.TokenHash = slices.Clone(t.TokenHash)
	r.Items = append(r.Items, t)
	return nil
}

func (r *UserTokens) Peek(_ context.Context, purpose string, tokenHash []byte, now time.Time) (ports.UserToken, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.Items {
		if t.Purpose == purpose && bytes.Equal(t.TokenHash, tokenHash) && now.Before(t.ExpiresAt) {
			return t, nil
		}
	}
	return ports.UserToken{}, domain.ErrNotFound
}

func (r *UserTokens) Spend(ctx context.Context, purpose string, tokenHash []byte, now time.Time) (ports.UserToken, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range r.Items {
		if t.Purpose == purpose && bytes.Equal(t.TokenHash, tokenHash) && now.Before(t.ExpiresAt) {
			r.Items = slices.Delete(r.Items, i, i+1)
			return t, nil
		}
	}
	return ports.UserToken{}, domain.ErrNotFound
}

func (r *UserTokens) ForUser(_ context.Context, purpose, userID string, now time.Time) (ports.UserToken, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.Items {
		if t.Purpose == purpose && t.UserID == userID && now.Before(t.ExpiresAt) {
			return t, nil
		}
	}
	return ports.UserToken{}, domain.ErrNotFound
}

// Throttle is the throttle store in memory: one mutex makes each Reserve's counts and
// insert one step, so it is exact under concurrency as the database's is.
type Throttle struct {
	mu     sync.Mutex
	Places map[string][]throttlePlace
	// refused is when each subject last refused an attempt because it was full.
	refused map[string]time.Time
}

type throttlePlace struct {
	id string
	at time.Time
}

func (t *Throttle) Reserve(_ context.Context, id string, at, since time.Time, limit int, subjects ...string) (bool, time.Time, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ok, freeFrom := true, time.Time{}
	for _, s := range subjects {
		var ats []time.Time
		for _, p := range t.Places[s] {
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
		t.Places[s] = append(t.Places[s], throttlePlace{id: id, at: at})
	}
	return true, time.Time{}, nil
}

func (t *Throttle) Release(_ context.Context, id, watched string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	contested := false
	for s, ps := range t.Places {
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
		t.Places[s] = slices.DeleteFunc(ps, func(p throttlePlace) bool { return p.id == id })
	}
	return contested, nil
}

// Count is how many places subject holds after since.
func (t *Throttle) Count(subject string, since time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.Places[subject] {
		if p.at.After(since) {
			n++
		}
	}
	return n
}

func (t *Throttle) Purge(_ context.Context, before time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s, ps := range t.Places {
		t.Places[s] = slices.DeleteFunc(ps, func(p throttlePlace) bool { return p.at.Before(before) })
	}
	return nil
}

// AccountMail is the account mail outbox in memory.
type AccountMail struct {
	mu    sync.Mutex
	Items []accountMailItem
}

type accountMailItem struct {
	ports.QueuedAccountMail
	due time.Time
}

func (o *AccountMail) Add(_ context.Context, m ports.QueuedAccountMail) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Items = append(o.Items, accountMailItem{QueuedAccountMail: m, due: m.CreatedAt})
	return nil
}

func (o *AccountMail) Claim(_ context.Context, now time.Time, lease time.Duration, limit int) ([]ports.QueuedAccountMail, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ports.QueuedAccountMail
	for i := range o.Items {
		if len(out) < limit && !o.Items[i].due.After(now) {
			o.Items[i].due = now.Add(lease)
			out = append(out, o.Items[i].QueuedAccountMail)
		}
	}
	return out, nil
}

func (o *AccountMail) Retry(_ context.Context, id string, attempts int, at time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range o.Items {
		if o.Items[i].ID == id {
			o.Items[i].Attempts, o.Items[i].due = attempts, at
		}
	}
	return nil
}

func (o *AccountMail) Delete(_ context.Context, id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Items = slices.DeleteFunc(o.Items, func(m accountMailItem) bool { return m.ID == id })
	return nil
}

func (o *AccountMail) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.Items)
}

// DataKeys is the data key store behind the real cipher.
type DataKeys struct {
	mu   sync.Mutex
	keys []ports.WrappedKey
}

func (r *DataKeys) Current(_ context.Context, workspaceID string) (ports.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.keys) - 1; i >= 0; i-- {
		if r.keys[i].WorkspaceID == workspaceID {
			return r.keys[i], nil
		}
	}
	return ports.WrappedKey{}, domain.ErrNotFound
}

func (r *DataKeys) Get(_ context.Context, id string) (ports.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		if k.ID == id {
			return k, nil
		}
	}
	return ports.WrappedKey{}, domain.ErrNotFound
}

func (r *DataKeys) Insert(_ context.Context, k ports.WrappedKey) (ports.WrappedKey, error) {
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

func (r *DataKeys) All(context.Context) ([]ports.WrappedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys), nil
}

func (r *DataKeys) Rewrap(_ context.Context, id, masterKeyID string, wrapped []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, k := range r.keys {
		if k.ID == id {
			r.keys[i].MasterKeyID, r.keys[i].Wrapped = masterKeyID, slices.Clone(wrapped)
		}
	}
	return nil
}

// Flashes are the one-time flashes in memory; Take deletes under the mutex, so of concurrent
// takes one gets the flash.
type Flashes struct {
	mu    sync.Mutex
	Items []ports.Flash
}

func (r *Flashes) Put(_ context.Context, f ports.Flash) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.Items {
		if o.ID == f.ID {
			return domain.ErrConflict
		}
	}
	f.Sealed = slices.Clone(f.Sealed)
	r.Items = append(r.Items, f)
	return nil
}

func (r *Flashes) Take(_ context.Context, id, sessionID, kind string, now time.Time) (ports.Flash, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, f := range r.Items {
		if f.ID == id && f.SessionID == sessionID && f.Kind == kind && now.Before(f.ExpiresAt) {
			r.Items = slices.Delete(r.Items, i, i+1)
			return f, nil
		}
	}
	return ports.Flash{}, domain.ErrNotFound
}

func (r *Flashes) Purge(_ context.Context, now time.Time) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.Items)
	r.Items = slices.DeleteFunc(r.Items, func(f ports.Flash) bool { return !now.Before(f.ExpiresAt) })
	return int64(n - len(r.Items)), nil
}

// ResponseColumns are the column choices in memory; a choice for a form the Forms fake no
// longer holds is gone, as the table's cascade deletes it.
type ResponseColumns struct {
	mu    sync.Mutex
	Forms *Forms
	items map[[3]string]ports.ResponseColumns
}

func (r *ResponseColumns) Get(ctx context.Context, workspaceID, userID, formID string) (ports.ResponseColumns, error) {
	if _, err := r.Forms.Get(ctx, workspaceID, formID); err != nil {
		return ports.ResponseColumns{}, domain.ErrNotFound
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.items[[3]string{workspaceID, userID, formID}]
	if !ok {
		return ports.ResponseColumns{}, domain.ErrNotFound
	}
	c.Shown, c.Hidden = slices.Clone(c.Shown), slices.Clone(c.Hidden)
	return c, nil
}

func (r *ResponseColumns) Put(ctx context.Context, c ports.ResponseColumns) error {
	if _, err := r.Forms.Get(ctx, c.WorkspaceID, c.FormID); err != nil {
		return domain.ErrNotFound
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.items == nil {
		r.items = map[[3]string]ports.ResponseColumns{}
	}
	c.Shown, c.Hidden = slices.Clone(c.Shown), slices.Clone(c.Hidden)
	r.items[[3]string{c.WorkspaceID, c.UserID, c.FormID}] = c
	return nil
}

func (r *ResponseColumns) Delete(_ context.Context, workspaceID, userID, formID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.items, [3]string{workspaceID, userID, formID})
	return nil
}
