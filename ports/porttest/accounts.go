package porttest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

func buildUser(t *testing.T) *user.User {
	t.Helper()
	u, err := user.New(newID("usr"), newID("ada")+"@example.com", "Ada", base)
	noErr(t, err)
	return u
}

func newUser(t *testing.T, r Repos) *user.User {
	t.Helper()
	u := buildUser(t)
	noErr(t, r.Users.Create(ctx, u, nil))
	return u
}

func newMembership(t *testing.T, r Repos, workspaceID, userID string, role member.Role, at time.Time) *member.Membership {
	t.Helper()
	m, err := member.New(newID("mem"), workspaceID, userID, role, at)
	noErr(t, err)
	noErr(t, r.Memberships.Create(ctx, m))
	return m
}

// users: emails are unique; Create stores the first membership and the audit events with the
// user; Update stores the change with its audit events, or nothing when change fails.
func users(t *testing.T, r Repos) {
	w := newWorkspace(t, r)
	before, err := r.Users.Count(ctx)
	noErr(t, err)
	u := buildUser(t)
	m, err := member.New(newID("mem"), w.ID(), u.ID(), member.RoleOwner, base)
	noErr(t, err)
	joined := auditEvent(t, w.ID(), audit.MemberJoined, base)
	noErr(t, r.Users.Create(ctx, u, m, joined))
	if n, err := r.Users.Count(ctx); err != nil || n != before+1 {
		t.Fatalf("count %d (%v), want %d", n, err, before+1)
	}
	wantAudit(t, r, w.ID(), joined.ID)
	if got, err := r.Memberships.Find(ctx, w.ID(), u.ID()); err != nil || got.ID() != m.ID() || got.Role() != member.RoleOwner {
		t.Fatalf("first membership: %v, %v", got, err)
	}

	twin, err := user.New(newID("usr"), u.Email(), "Twin", base)
	noErr(t, err)
	wantErr(t, r.Users.Create(ctx, twin, nil), user.ErrEmailTaken)
	wantErr(t, r.Users.Create(ctx, twin, nil), domain.ErrConflict)
	_, err = r.Users.Get(ctx, twin.ID())
	wantErr(t, err, domain.ErrNotFound)

	got, err := r.Users.Get(ctx, u.ID())
	noErr(t, err)
	if got.Email() != u.Email() || got.Name() != "Ada" {
		t.Fatalf("got %s <%s>", got.Name(), got.Email())
	}
	got, err = r.Users.FindByEmail(ctx, u.Email())
	noErr(t, err)
	if got.ID() != u.ID() {
		t.Fatalf("by email: %s", got.ID())
	}
	_, err = r.Users.FindByEmail(ctx, newID("nobody")+"@example.com")
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Users.FindByOIDCSubject(ctx, newID("sub"))
	wantErr(t, err, domain.ErrNotFound)

	subject := newID("sub")
	on := auditEvent(t, w.ID(), audit.UserTwoFactorOn, base)
	updated, err := r.Users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
		u.LinkOIDC(subject)
		u.EnableTwoFactor([]byte("sealed"), [][]byte{[]byte("code")})
		return ports.Effects{Audit: []audit.Event{on}}, u.Rename("Ada L.")
	})
	noErr(t, err)
	if updated.Name() != "Ada L." || !updated.TwoFactorEnabled() {
		t.Fatalf("update returned %q, two factor %v", updated.Name(), updated.TwoFactorEnabled())
	}
	got, err = r.Users.FindByOIDCSubject(ctx, subject)
	noErr(t, err)
	if got.ID() != u.ID() || got.Name() != "Ada L." || !bytes.Equal(got.TOTPSecret(), []byte("sealed")) || got.RecoveryCodesLeft() != 1 {
		t.Fatalf("stored %s %q, secret %q, %d codes", got.ID(), got.Name(), got.TOTPSecret(), got.RecoveryCodesLeft())
	}
	_, err = r.Users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
		u.DisableTwoFactor()
		_ = u.Rename("Refused")
		return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.UserTwoFactorOff, base)}}, errChange
	})
	wantErr(t, err, errChange)
	got, err = r.Users.Get(ctx, u.ID())
	noErr(t, err)
	if got.Name() != "Ada L." || !got.TwoFactorEnabled() {
		t.Fatalf("a refused change was stored: %q, two factor %v", got.Name(), got.TwoFactorEnabled())
	}
	wantAudit(t, r, w.ID(), joined.ID, on.ID)
	_, err = r.Users.Update(ctx, newID("usr"), func(*user.User) (ports.Effects, error) {
		t.Fatal("change called for a missing user")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)
}

// memberships: one per user and workspace; Update and Delete see the number of owners and
// store nothing when refused; Delete ends the user's sessions in that workspace only.
func memberships(t *testing.T, r Repos) {
	w1, w2 := newWorkspace(t, r), newWorkspace(t, r)
	ada, bob := newUser(t, r), newUser(t, r)
	owner := newMembership(t, r, w1.ID(), ada.ID(), member.RoleOwner, base)
	editor := newMembership(t, r, w1.ID(), bob.ID(), member.RoleEditor, base.Add(time.Minute))
	elsewhere := newMembership(t, r, w2.ID(), bob.ID(), member.RoleOwner, base.Add(-time.Minute))
	dup, err := member.New(newID("mem"), w1.ID(), bob.ID(), member.RoleViewer, base)
	noErr(t, err)
	wantErr(t, r.Memberships.Create(ctx, dup), member.ErrAlreadyMember)

	got, err := r.Memberships.Find(ctx, w1.ID(), bob.ID())
	noErr(t, err)
	if got.ID() != editor.ID() || got.Role() != member.RoleEditor {
		t.Fatalf("found %s as %s", got.ID(), got.Role())
	}
	_, err = r.Memberships.Find(ctx, w1.ID(), newID("usr"))
	wantErr(t, err, domain.ErrNotFound)
	one, err := r.Memberships.Get(ctx, w1.ID(), editor.ID())
	noErr(t, err)
	if one.Membership.ID() != editor.ID() || one.User.ID() != bob.ID() {
		t.Fatalf("get: %s of %s", one.Membership.ID(), one.User.ID())
	}
	_, err = r.Memberships.Get(ctx, w2.ID(), editor.ID())
	wantErr(t, err, domain.ErrNotFound)
	members, err := r.Memberships.List(ctx, w1.ID(), ports.Page{Limit: 10})
	noErr(t, err)
	var listed []string
	for _, m := range members {
		listed = append(listed, m.Membership.ID()+"/"+m.User.ID())
	}
	sameIDs(t, "members, oldest first", listed, owner.ID()+"/"+ada.ID(), editor.ID()+"/"+bob.ID())
	if n, err := r.Memberships.Count(ctx, w1.ID()); err != nil || n != 2 {
		t.Fatalf("count %d, %v", n, err)
	}
	mine, err := r.Memberships.ForUser(ctx, bob.ID())
	noErr(t, err)
	var ws []string
	for _, m := range mine {
		ws = append(ws, m.Membership.ID()+"/"+m.Workspace.ID())
	}
	sameIDs(t, "bob's workspaces, oldest first", ws, elsewhere.ID()+"/"+w2.ID(), editor.ID()+"/"+w1.ID())

	changed := auditEvent(t, w1.ID(), audit.MemberRoleChanged, base)
	updated, err := r.Memberships.Update(ctx, w1.ID(), editor.ID(), func(m *member.Membership, owners int) (ports.Effects, error) {
		if owners != 1 {
			t.Errorf("owners = %d, want 1", owners)
		}
		return ports.Effects{Audit: []audit.Event{changed}}, m.ChangeRole(member.RoleAdmin, member.RoleOwner, owners)
	})
	noErr(t, err)
	if updated.Membership.Role() != member.RoleAdmin || updated.User.ID() != bob.ID() {
		t.Fatalf("update returned %s of %s", updated.Membership.Role(), updated.User.ID())
	}
	_, err = r.Memberships.Update(ctx, w1.ID(), owner.ID(), func(m *member.Membership, owners int) (ports.Effects, error) {
		return ports.Effects{Audit: []audit.Event{auditEvent(t, w1.ID(), audit.MemberRoleChanged, base)}},
			m.ChangeRole(member.RoleViewer, member.RoleOwner, owners)
	})
	wantErr(t, err, member.ErrLastOwner)
	if got, _ := r.Memberships.Find(ctx, w1.ID(), ada.ID()); got.Role() != member.RoleOwner {
		t.Fatalf("a refused change was stored: %s", got.Role())
	}
	_, err = r.Memberships.Update(ctx, w2.ID(), editor.ID(), func(*member.Membership, int) (ports.Effects, error) {
		t.Fatal("change called for a membership of another workspace")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)

	inW1 := newSession(t, r, bob.ID(), w1.ID(), base)
	inW2 := newSession(t, r, bob.ID(), w2.ID(), base)
	err = r.Memberships.Delete(ctx, w1.ID(), owner.ID(), func(m *member.Membership, owners int) ([]audit.Event, error) {
		return nil, m.CheckRemoval(member.RoleOwner, owners)
	})
	wantErr(t, err, member.ErrLastOwner)
	removed := auditEvent(t, w1.ID(), audit.MemberRemoved, base)
	noErr(t, r.Memberships.Delete(ctx, w1.ID(), editor.ID(), func(m *member.Membership, owners int) ([]audit.Event, error) {
		return []audit.Event{removed}, m.CheckRemoval(member.RoleOwner, owners)
	}))
	_, err = r.Memberships.Find(ctx, w1.ID(), bob.ID())
	wantErr(t, err, domain.ErrNotFound)
	if _, err := r.Memberships.Find(ctx, w1.ID(), ada.ID()); err != nil {
		t.Fatalf("the refused removal removed the owner: %v", err)
	}
	_, err = r.Sessions.FindByToken(ctx, inW1.TokenHash())
	wantErr(t, err, domain.ErrNotFound)
	if _, err := r.Sessions.FindByToken(ctx, inW2.TokenHash()); err != nil {
		t.Fatalf("the session in the other workspace ended: %v", err)
	}
	wantErr(t, r.Memberships.Delete(ctx, w1.ID(), editor.ID(), func(*member.Membership, int) ([]audit.Event, error) {
		t.Fatal("check called for a missing membership")
		return nil, nil
	}), domain.ErrNotFound)
	wantAudit(t, r, w1.ID(), changed.ID, removed.ID)
}

func newSession(t *testing.T, r Repos, userID, workspaceID string, at time.Time) *session.Session {
	t.Helper()
	s := session.New(newID("ses"), []byte(newID("token")), userID, workspaceID, at)
	noErr(t, r.Sessions.Create(ctx, s))
	return s
}

// sessions: found by token hash; Touch moves last seen and may switch workspace; Delete,
// DeleteForUser and Purge end them.
func sessions(t *testing.T, r Repos) {
	w1, w2 := newWorkspace(t, r), newWorkspace(t, r)
	u := newUser(t, r)
	s := newSession(t, r, u.ID(), w1.ID(), base)
	_, err := r.Sessions.FindByToken(ctx, []byte(newID("token")))
	wantErr(t, err, domain.ErrNotFound)
	got, err := r.Sessions.FindByToken(ctx, s.TokenHash())
	noErr(t, err)
	if got.ID() != s.ID() || got.UserID() != u.ID() || got.WorkspaceID() != w1.ID() || !got.LastSeenAt().Equal(base) {
		t.Fatalf("got %s of %s in %s seen %v", got.ID(), got.UserID(), got.WorkspaceID(), got.LastSeenAt())
	}

	seen := base.Add(time.Hour)
	noErr(t, r.Sessions.Touch(ctx, s.ID(), seen, ""))
	got, err = r.Sessions.FindByToken(ctx, s.TokenHash())
	noErr(t, err)
	if got.WorkspaceID() != w1.ID() || !got.LastSeenAt().Equal(seen) {
		t.Fatalf("after touch: in %s seen %v", got.WorkspaceID(), got.LastSeenAt())
	}
	noErr(t, r.Sessions.Touch(ctx, s.ID(), seen, w2.ID()))
	got, err = r.Sessions.FindByToken(ctx, s.TokenHash())
	noErr(t, err)
	if got.WorkspaceID() != w2.ID() {
		t.Fatalf("after switching: in %s", got.WorkspaceID())
	}

	noErr(t, r.Sessions.Delete(ctx, s.ID()))
	_, err = r.Sessions.FindByToken(ctx, s.TokenHash())
	wantErr(t, err, domain.ErrNotFound)

	keep, other, last := newSession(t, r, u.ID(), w1.ID(), base), newSession(t, r, u.ID(), w1.ID(), base), newSession(t, r, u.ID(), w2.ID(), base)
	noErr(t, r.Sessions.DeleteForUser(ctx, u.ID(), keep.ID()))
	for _, s := range []*session.Session{other, last} {
		_, err = r.Sessions.FindByToken(ctx, s.TokenHash())
		wantErr(t, err, domain.ErrNotFound)
	}
	noErr(t, r.Sessions.DeleteForUser(ctx, u.ID(), ""))
	_, err = r.Sessions.FindByToken(ctx, keep.TokenHash())
	wantErr(t, err, domain.ErrNotFound)

	now := base.Add(session.IdleTimeout + time.Hour)
	idle := newSession(t, r, u.ID(), w1.ID(), base)
	fresh := newSession(t, r, u.ID(), w1.ID(), now.Add(-time.Minute))
	n, err := r.Sessions.Purge(ctx, now)
	noErr(t, err)
	if n < 1 {
		t.Fatalf("purged %d", n)
	}
	_, err = r.Sessions.FindByToken(ctx, idle.TokenHash())
	wantErr(t, err, domain.ErrNotFound)
	if _, err := r.Sessions.FindByToken(ctx, fresh.TokenHash()); err != nil {
		t.Fatalf("purge ended a valid session: %v", err)
	}
}

// userTokens: one token per purpose and user; expired tokens are not found; Spend spends once.
func userTokens(t *testing.T, r Repos) {
	u := newUser(t, r)
	tok := func(purpose string, expires time.Time) ports.UserToken {
		return ports.UserToken{Purpose: purpose, TokenHash: []byte(newID("hash")), UserID: u.ID(), Data: []byte("data"), ExpiresAt: expires}
	}
	first := tok(ports.TokenPassword, base.Add(time.Hour))
	noErr(t, r.Tokens.Put(ctx, first))
	second := tok(ports.TokenPassword, base.Add(time.Hour))
	noErr(t, r.Tokens.Put(ctx, second))
	_, err := r.Tokens.Peek(ctx, ports.TokenPassword, first.TokenHash, base)
	wantErr(t, err, domain.ErrNotFound)
	got, err := r.Tokens.Peek(ctx, ports.TokenPassword, second.TokenHash, base)
	noErr(t, err)
	if got.UserID != u.ID() || !bytes.Equal(got.Data, []byte("data")) || !got.ExpiresAt.Equal(second.ExpiresAt) {
		t.Fatalf("peeked %+v", got)
	}
	_, err = r.Tokens.Peek(ctx, ports.TokenSetup, second.TokenHash, base)
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Tokens.Peek(ctx, ports.TokenPassword, second.TokenHash, second.ExpiresAt)
	wantErr(t, err, domain.ErrNotFound)
	got, err = r.Tokens.ForUser(ctx, ports.TokenPassword, u.ID(), base)
	noErr(t, err)
	if !bytes.Equal(got.TokenHash, second.TokenHash) {
		t.Fatalf("for user: %q", got.TokenHash)
	}
	_, err = r.Tokens.ForUser(ctx, ports.TokenTwoFactor, u.ID(), base)
	wantErr(t, err, domain.ErrNotFound)

	twoFactor := tok(ports.TokenTwoFactor, base.Add(time.Hour))
	noErr(t, r.Tokens.Put(ctx, twoFactor))
	_, err = r.Tokens.Spend(ctx, ports.TokenPassword, second.TokenHash, second.ExpiresAt)
	wantErr(t, err, domain.ErrNotFound)
	got, err = r.Tokens.Spend(ctx, ports.TokenPassword, second.TokenHash, base)
	noErr(t, err)
	if got.UserID != u.ID() {
		t.Fatalf("spent %+v", got)
	}
	_, err = r.Tokens.Spend(ctx, ports.TokenPassword, second.TokenHash, base)
	wantErr(t, err, domain.ErrNotFound)
	if _, err := r.Tokens.Peek(ctx, ports.TokenTwoFactor, twoFactor.TokenHash, base); err != nil {
		t.Fatalf("a token of another purpose went too: %v", err)
	}
}

// auditLog: a workspace's events, newest first, filtered by action; Purge removes old ones.
func auditLog(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	old := auditEvent(t, w.ID(), audit.UserSignedIn, base)
	newer := auditEvent(t, w.ID(), audit.UserSignInFailed, base.Add(time.Minute))
	newest := auditEvent(t, w.ID(), audit.UserSignedIn, base.Add(2*time.Minute))
	noErr(t, r.Audit.Append(ctx, old, newer))
	noErr(t, r.Audit.Append(ctx, newest, auditEvent(t, other.ID(), audit.UserSignedIn, base)))
	list := func(q ports.AuditQuery) []string {
		t.Helper()
		q.Page.Limit = 10
		out, err := r.Audit.List(ctx, w.ID(), q)
		noErr(t, err)
		var got []string
		for _, e := range out {
			got = append(got, e.ID)
		}
		return got
	}
	sameIDs(t, "events", list(ports.AuditQuery{}), newest.ID, newer.ID, old.ID)
	sameIDs(t, "sign-ins", list(ports.AuditQuery{Action: string(audit.UserSignedIn)}), newest.ID, old.ID)
	if _, err := r.Audit.Purge(ctx, base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "after purge", list(ports.AuditQuery{}), newest.ID, newer.ID)
}

// signInThrottle: at most limit places per subject in the window; a refusal says when a place
// frees; Release gives places back and reports whether the attempt was contested.
func signInThrottle(t *testing.T, r Repos) {
	account, ip := newID("account"), newID("ip")
	since := base.Add(-time.Hour)
	reserve := func(id string, at time.Time, subjects ...string) (bool, time.Time) {
		t.Helper()
		ok, freeFrom, err := r.Throttle.Reserve(ctx, id, at, since, 2, subjects...)
		noErr(t, err)
		return ok, freeFrom
	}
	first, second := newID("att"), newID("att")
	if ok, _ := reserve(first, base, account, ip); !ok {
		t.Fatal("first attempt refused")
	}
	if contested, err := r.Throttle.Release(ctx, first, account); err != nil || contested {
		t.Fatalf("uncontested release: %v, %v", contested, err)
	}
	if ok, _ := reserve(first, base, account, ip); !ok {
		t.Fatal("attempt refused after a release")
	}
	if ok, _ := reserve(second, base.Add(time.Minute), account); !ok {
		t.Fatal("second attempt refused")
	}
	ok, freeFrom := reserve(newID("att"), base.Add(2*time.Minute), account, ip)
	if ok || !freeFrom.Equal(base) {
		t.Fatalf("third attempt: ok %v, free from %v, want refused until %v", ok, freeFrom, base)
	}
	if ok, _ := reserve(newID("att"), base.Add(2*time.Minute), ip); !ok {
		t.Fatal("the refused attempt took a place on the ip")
	}
	if contested, err := r.Throttle.Release(ctx, second, account); err != nil || !contested {
		t.Fatalf("release after a refusal: contested %v, %v", contested, err)
	}
	if contested, err := r.Throttle.Release(ctx, newID("att"), account); err != nil || contested {
		t.Fatalf("releasing nothing: %v, %v", contested, err)
	}
	noErr(t, r.Throttle.Purge(ctx, base.Add(time.Second)))
	if ok, _ := reserve(newID("att"), base.Add(3*time.Minute), account); !ok {
		t.Fatal("purged places still count")
	}
}

// accountMail: claimed mail is hidden for the lease; Retry makes it due again; Delete forgets it.
func accountMail(t *testing.T, r Repos) {
	m := ports.QueuedAccountMail{ID: newID("mail"), Kind: "password", Payload: []byte("sealed"), CreatedAt: base}
	noErr(t, r.AccountMail.Add(ctx, m))
	claim := func(now time.Time) []string {
		t.Helper()
		got, err := r.AccountMail.Claim(ctx, now, time.Minute, 100)
		noErr(t, err)
		var out []string
		for _, g := range got {
			if g.ID == m.ID {
				if g.Kind != m.Kind || !bytes.Equal(g.Payload, m.Payload) {
					t.Fatalf("claimed %+v", g)
				}
				out = append(out, g.ID)
			}
		}
		return out
	}
	sameIDs(t, "first claim", claim(base), m.ID)
	sameIDs(t, "claim within the lease", claim(base.Add(30*time.Second)))
	noErr(t, r.AccountMail.Retry(ctx, m.ID, 1, base.Add(10*time.Minute)))
	sameIDs(t, "claim before the retry", claim(base.Add(5*time.Minute)))
	got, err := r.AccountMail.Claim(ctx, base.Add(10*time.Minute), time.Minute, 100)
	noErr(t, err)
	if i := slices.IndexFunc(got, func(g ports.QueuedAccountMail) bool { return g.ID == m.ID }); i < 0 || got[i].Attempts != 1 {
		t.Fatalf("retried claim %+v", got)
	}
	noErr(t, r.AccountMail.Delete(ctx, m.ID))
	sameIDs(t, "claim after delete", claim(base.Add(time.Hour)))
}

// dataKeys: one current key per workspace; a second insert gets the first; Rewrap replaces the
// wrapping.
func dataKeys(t *testing.T, r Repos) {
	w := newWorkspace(t, r)
	_, err := r.DataKeys.Current(ctx, w.ID())
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.DataKeys.Get(ctx, newID("dk"))
	wantErr(t, err, domain.ErrNotFound)
	k := ports.WrappedKey{ID: newID("dk"), WorkspaceID: w.ID(), MasterKeyID: "m1", Wrapped: []byte("wrapped"), CreatedAt: base}
	got, err := r.DataKeys.Insert(ctx, k)
	noErr(t, err)
	if got.ID != k.ID {
		t.Fatalf("inserted %s", got.ID)
	}
	loser := ports.WrappedKey{ID: newID("dk"), WorkspaceID: w.ID(), MasterKeyID: "m1", Wrapped: []byte("other"), CreatedAt: base}
	got, err = r.DataKeys.Insert(ctx, loser)
	noErr(t, err)
	if got.ID != k.ID || !bytes.Equal(got.Wrapped, k.Wrapped) {
		t.Fatalf("the second insert got %s", got.ID)
	}
	got, err = r.DataKeys.Current(ctx, w.ID())
	noErr(t, err)
	if got.ID != k.ID {
		t.Fatalf("current %s", got.ID)
	}
	noErr(t, r.DataKeys.Rewrap(ctx, k.ID, "m2", []byte("rewrapped")))
	got, err = r.DataKeys.Get(ctx, k.ID)
	noErr(t, err)
	if got.MasterKeyID != "m2" || !bytes.Equal(got.Wrapped, []byte("rewrapped")) {
		t.Fatalf("after rewrap: %s %q", got.MasterKeyID, got.Wrapped)
	}
	all, err := r.DataKeys.All(ctx)
	noErr(t, err)
	if !slices.ContainsFunc(all, func(o ports.WrappedKey) bool { return o.ID == k.ID }) {
		t.Fatalf("all keys miss %s", k.ID)
	}
}
