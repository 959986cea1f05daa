package persistence_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// people bundles the account repositories over one database.
type people struct {
	repos
	users       *persistence.UserRepository
	members     *persistence.MembershipRepository
	invitations *persistence.InvitationRepository
	sessions    *persistence.SessionRepository
	audit       *persistence.AuditLog
	throttle    *persistence.SignInThrottle
	usage       *persistence.UsageReader
	tokens      *persistence.UserTokenRepository
}

func eachPeople(t *testing.T, fn func(t *testing.T, p people)) {
	each(t, func(t *testing.T, r repos) {
		fn(t, people{repos: r,
			users:       persistence.NewUserRepository(r.db),
			members:     persistence.NewMembershipRepository(r.db),
			invitations: persistence.NewInvitationRepository(r.db),
			sessions:    persistence.NewSessionRepository(r.db),
			audit:       persistence.NewAuditLog(r.db),
			throttle:    persistence.NewSignInThrottle(r.db),
			usage:       persistence.NewUsageReader(r.db),
			tokens:      persistence.NewUserTokenRepository(r.db),
		})
	})
}

func buildUser(t testing.TB, email string, at time.Time) *user.User {
	t.Helper()
	u, err := user.New(newID("usr"), email, "Ada", at)
	noErr(t, err)
	return u
}

func mustUser(t testing.TB, p people, email string, at time.Time) *user.User {
	t.Helper()
	u := buildUser(t, email, at)
	noErr(t, p.users.Create(context.Background(), u, nil))
	return u
}

func mustMember(t testing.TB, p people, workspaceID, userID string, role member.Role, at time.Time) *member.Membership {
	t.Helper()
	m, err := member.New(newID("mem"), workspaceID, userID, role, at)
	noErr(t, err)
	noErr(t, p.members.Create(context.Background(), m))
	return m
}

func auditEvent(t testing.TB, workspaceID string, action audit.Action, at time.Time) audit.Event {
	t.Helper()
	e, err := audit.New(newID("aud"), workspaceID, action, audit.System, &audit.Target{Type: "thing", ID: "t1"}, "", map[string]any{"k": "v"}, at)
	noErr(t, err)
	return e
}

// actions lists the workspace's audit actions, newest first.
func actions(t testing.TB, p people, workspaceID string) []audit.Action {
	t.Helper()
	events, err := p.audit.List(context.Background(), workspaceID, ports.AuditQuery{Page: ports.Page{Limit: 1000}})
	noErr(t, err)
	out := make([]audit.Action, len(events))
	for i, e := range events {
		out[i] = e.Action
	}
	return out
}

func wantActions(t testing.TB, p people, workspaceID string, want ...audit.Action) {
	t.Helper()
	if got := actions(t, p, workspaceID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("audit actions = %v, want %v", got, want)
	}
}

func TestUserRepository(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		n, err := p.users.Count(ctx)
		noErr(t, err)
		if n != 0 {
			t.Fatalf("count = %d on an empty database", n)
		}
		w := mustWorkspace(t, p.repos, base)
		u := buildUser(t, "Ada@Example.com", base)
		m, err := member.New(newID("mem"), w.ID(), u.ID(), member.RoleOwner, base)
		noErr(t, err)
		noErr(t, p.users.Create(ctx, u, m, auditEvent(t, w.ID(), audit.MemberJoined, base)))

		got, err := p.users.Get(ctx, u.ID())
		noErr(t, err)
		if got.Email() != "ada@example.com" || got.Name() != "Ada" || !got.CreatedAt().Equal(base) || got.PasswordHash() != "" ||
			got.TwoFactorEnabled() || got.RecoveryCodesLeft() != 0 || got.OIDCSubject() != "" || got.PasswordChangedAt() != nil {
			t.Fatalf("got %+v", got)
		}
		got, err = p.users.FindByEmail(ctx, " ADA@example.com")
		noErr(t, err)
		if got.ID() != u.ID() {
			t.Fatalf("find by email = %s", got.ID())
		}
		_, err = p.users.FindByEmail(ctx, "bob@example.com")
		wantErr(t, err, domain.ErrNotFound)
		_, err = p.users.Get(ctx, "usr_missing")
		wantErr(t, err, domain.ErrNotFound)
		_, err = p.users.FindByOIDCSubject(ctx, "")
		wantErr(t, err, domain.ErrNotFound)
		found, err := p.members.Find(ctx, w.ID(), u.ID())
		noErr(t, err)
		if found.ID() != m.ID() || found.Role() != member.RoleOwner {
			t.Fatalf("membership = %+v", found)
		}
		wantActions(t, p, w.ID(), audit.MemberJoined)

		// The same email again: conflict, and nothing of that transaction stays.
		dup := buildUser(t, "ada@example.com", base)
		dm, _ := member.New(newID("mem"), w.ID(), dup.ID(), member.RoleViewer, base)
		wantErr(t, p.users.Create(ctx, dup, dm, auditEvent(t, w.ID(), audit.MemberJoined, base)), user.ErrEmailTaken)
		wantActions(t, p, w.ID(), audit.MemberJoined)
		if c, _ := p.members.Count(ctx, w.ID()); c != 1 {
			t.Fatalf("members = %d after a refused user", c)
		}
		// A first membership of an unknown workspace: the user is not created either.
		orphan := buildUser(t, "orphan@example.com", base)
		om, _ := member.New(newID("mem"), "ws_missing", orphan.ID(), member.RoleOwner, base)
		wantErr(t, p.users.Create(ctx, orphan, om), domain.ErrNotFound)
		_, err = p.users.Get(ctx, orphan.ID())
		wantErr(t, err, domain.ErrNotFound)
		n, err = p.users.Count(ctx)
		noErr(t, err)
		if n != 1 {
			t.Fatalf("count = %d, want 1", n)
		}

		// Update stores every field and the events; a failing change stores nothing.
		later := base.Add(time.Hour)
		codes := [][]byte{user.HashRecoveryCode("aaaa-bbbb"), user.HashRecoveryCode("cccc-dddd")}
		updated, err := p.users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
			u.SetPasswordHash("$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA", later)
			u.EnableTwoFactor([]byte{0, 1, 2, 3}, codes)
			u.LinkOIDC("sub-123")
			noErr(t, u.Rename("Ada Lovelace"))
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.UserTwoFactorOn, later)}}, nil
		})
		noErr(t, err)
		if updated.Name() != "Ada Lovelace" {
			t.Fatalf("updated = %+v", updated)
		}
		got, err = p.users.FindByOIDCSubject(ctx, "sub-123")
		noErr(t, err)
		if got.ID() != u.ID() || got.Name() != "Ada Lovelace" || got.PasswordHash() == "" || !got.PasswordChangedAt().Equal(later) ||
			!bytes.Equal(got.TOTPSecret(), []byte{0, 1, 2, 3}) || got.RecoveryCodesLeft() != 2 {
			t.Fatalf("after update %+v", got)
		}
		for i, c := range got.RecoveryCodes() {
			if !bytes.Equal(c, codes[i]) {
				t.Fatalf("recovery code %d = %x, want %x", i, c, codes[i])
			}
		}
		wantActions(t, p, w.ID(), audit.UserTwoFactorOn, audit.MemberJoined)

		// A spent recovery code stays spent.
		_, err = p.users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
			if !u.UseRecoveryCode("AAAA-BBBB") {
				t.Fatal("recovery code refused")
			}
			return ports.Effects{}, nil
		})
		noErr(t, err)
		got, _ = p.users.Get(ctx, u.ID())
		if got.RecoveryCodesLeft() != 1 || got.UseRecoveryCode("aaaa-bbbb") {
			t.Fatalf("recovery codes after spending one: %d left", got.RecoveryCodesLeft())
		}

		boom := errors.New("boom")
		_, err = p.users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
			u.DisableTwoFactor()
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.UserTwoFactorOff, later)}}, boom
		})
		wantErr(t, err, boom)
		got, _ = p.users.Get(ctx, u.ID())
		if !got.TwoFactorEnabled() {
			t.Fatal("a failed change was stored")
		}
		wantActions(t, p, w.ID(), audit.UserTwoFactorOn, audit.MemberJoined)

		// Two-factor off stores NULL and an empty code list.
		_, err = p.users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
			u.DisableTwoFactor()
			return ports.Effects{}, nil
		})
		noErr(t, err)
		got, _ = p.users.Get(ctx, u.ID())
		if got.TwoFactorEnabled() || got.TOTPSecret() != nil || got.RecoveryCodes() != nil {
			t.Fatalf("after disabling two-factor %+v", got)
		}

		_, err = p.users.Update(ctx, "usr_missing", func(*user.User) (ports.Effects, error) { return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)

		// Another user may not take the same OpenID subject.
		other := buildUser(t, "other@example.com", base)
		other.LinkOIDC("sub-123")
		wantErr(t, p.users.Create(ctx, other, nil), user.ErrIdentityTaken)
	})
}

func TestMembershipRepository(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w1, w2 := mustWorkspace(t, p.repos, base), mustWorkspace(t, p.repos, base.Add(time.Second))
		ada := mustUser(t, p, "ada@example.com", base)
		bob := mustUser(t, p, "bob@example.com", base)
		cy := mustUser(t, p, "cy@example.com", base)
		mAda := mustMember(t, p, w1.ID(), ada.ID(), member.RoleOwner, base)
		mBob := mustMember(t, p, w1.ID(), bob.ID(), member.RoleEditor, base.Add(time.Minute))
		mCy := mustMember(t, p, w1.ID(), cy.ID(), member.RoleViewer, base.Add(2*time.Minute))
		mAda2 := mustMember(t, p, w2.ID(), ada.ID(), member.RoleViewer, base.Add(time.Hour))

		dup, _ := member.New(newID("mem"), w1.ID(), bob.ID(), member.RoleAdmin, base)
		wantErr(t, p.members.Create(ctx, dup), member.ErrAlreadyMember)
		ghost, _ := member.New(newID("mem"), w1.ID(), "usr_missing", member.RoleAdmin, base)
		wantErr(t, p.members.Create(ctx, ghost), domain.ErrNotFound)

		got, err := p.members.Get(ctx, w1.ID(), mBob.ID())
		noErr(t, err)
		if got.Membership.UserID() != bob.ID() || got.Membership.Role() != member.RoleEditor || got.User.Email() != "bob@example.com" ||
			!got.Membership.CreatedAt().Equal(base.Add(time.Minute)) {
			t.Fatalf("get = %+v %+v", got.Membership, got.User)
		}
		_, err = p.members.Get(ctx, w2.ID(), mBob.ID()) // another workspace's membership
		wantErr(t, err, domain.ErrNotFound)
		_, err = p.members.Find(ctx, w2.ID(), bob.ID())
		wantErr(t, err, domain.ErrNotFound)

		// Oldest first, in pages.
		page, err := p.members.List(ctx, w1.ID(), ports.Page{Limit: 2})
		noErr(t, err)
		if len(page) != 2 || page[0].Membership.ID() != mAda.ID() || page[1].Membership.ID() != mBob.ID() || page[1].User.ID() != bob.ID() {
			t.Fatalf("first page = %v", page)
		}
		last := page[1].Membership
		page, err = p.members.List(ctx, w1.ID(), ports.Page{Limit: 2, After: &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}})
		noErr(t, err)
		if len(page) != 1 || page[0].Membership.ID() != mCy.ID() || page[0].User.Email() != "cy@example.com" {
			t.Fatalf("second page = %v", page)
		}
		if n, _ := p.members.Count(ctx, w1.ID()); n != 3 {
			t.Fatalf("count = %d", n)
		}

		ws, err := p.members.ForUser(ctx, ada.ID())
		noErr(t, err)
		if len(ws) != 2 || ws[0].Workspace.ID() != w1.ID() || ws[0].Membership.ID() != mAda.ID() ||
			ws[1].Workspace.ID() != w2.ID() || ws[1].Membership.Role() != member.RoleViewer || ws[1].Workspace.Name() != "Acme" {
			t.Fatalf("for user = %+v", ws)
		}
		none, err := p.members.ForUser(ctx, "usr_missing")
		noErr(t, err)
		if len(none) != 0 {
			t.Fatalf("for unknown user = %v", none)
		}

		// Update passes the owner count and stores the role with its event.
		owner := member.RoleOwner
		updated, err := p.members.Update(ctx, w1.ID(), mBob.ID(), func(m *member.Membership, owners int) (ports.Effects, error) {
			if owners != 1 {
				t.Fatalf("owners = %d, want 1", owners)
			}
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w1.ID(), audit.MemberRoleChanged, base)}}, m.ChangeRole(member.RoleOwner, owner, owners)
		})
		noErr(t, err)
		if updated.Membership.Role() != member.RoleOwner || updated.User.ID() != bob.ID() {
			t.Fatalf("updated = %+v", updated)
		}
		// An editor may not take the owner role away.
		_, err = p.members.Update(ctx, w1.ID(), mBob.ID(), func(m *member.Membership, owners int) (ports.Effects, error) {
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w1.ID(), audit.MemberRoleChanged, base)}}, m.ChangeRole(member.RoleViewer, member.RoleEditor, owners)
		})
		wantErr(t, err, member.ErrOwnersOnly)
		_, err = p.members.Update(ctx, w1.ID(), mAda2.ID(), func(*member.Membership, int) (ports.Effects, error) { return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound) // not a membership of w1
		wantActions(t, p, w1.ID(), audit.MemberRoleChanged)

		// The last owner of w2 can neither be demoted nor removed.
		_, err = p.members.Update(ctx, w2.ID(), mAda2.ID(), func(m *member.Membership, owners int) (ports.Effects, error) {
			return ports.Effects{}, m.ChangeRole(member.RoleOwner, owner, owners)
		})
		noErr(t, err)
		_, err = p.members.Update(ctx, w2.ID(), mAda2.ID(), func(m *member.Membership, owners int) (ports.Effects, error) {
			return ports.Effects{}, m.ChangeRole(member.RoleAdmin, owner, owners)
		})
		wantErr(t, err, member.ErrLastOwner)
		err = p.members.Delete(ctx, w2.ID(), mAda2.ID(), func(m *member.Membership, owners int) ([]audit.Event, error) {
			return []audit.Event{auditEvent(t, w2.ID(), audit.MemberRemoved, base)}, m.CheckRemoval(owner, owners)
		})
		wantErr(t, err, member.ErrLastOwner)
		if got, _ := p.members.Find(ctx, w2.ID(), ada.ID()); got == nil || got.Role() != member.RoleOwner {
			t.Fatalf("last owner after refused changes: %+v", got)
		}
		wantActions(t, p, w2.ID())

		// Removing Bob from w1 ends his sessions in w1 only; Cy's stay.
		sBobW1 := session.New(newID("ses"), session.HashToken(newID("tok")), bob.ID(), w1.ID(), base)
		sBobW2 := session.New(newID("ses"), session.HashToken(newID("tok")), bob.ID(), w2.ID(), base)
		sBobNone := session.New(newID("ses"), session.HashToken(newID("tok")), bob.ID(), "", base)
		sCyW1 := session.New(newID("ses"), session.HashToken(newID("tok")), cy.ID(), w1.ID(), base)
		for _, s := range []*session.Session{sBobW1, sBobW2, sBobNone, sCyW1} {
			noErr(t, p.sessions.Create(ctx, s))
		}
		// And forgets his column choices in w1 only.
		columns := persistence.NewResponseColumnsRepository(p.db)
		f1, f2 := mustForm(t, p.repos, w1.ID(), base), mustForm(t, p.repos, w2.ID(), base)
		for _, c := range []ports.ResponseColumns{{WorkspaceID: w1.ID(), UserID: bob.ID(), FormID: f1.ID()},
			{WorkspaceID: w2.ID(), UserID: bob.ID(), FormID: f2.ID()}, {WorkspaceID: w1.ID(), UserID: cy.ID(), FormID: f1.ID()}} {
			c.Shown, c.UpdatedAt = []string{"fld_a"}, base
			noErr(t, columns.Put(ctx, c))
		}
		noErr(t, p.members.Delete(ctx, w1.ID(), mBob.ID(), func(m *member.Membership, owners int) ([]audit.Event, error) {
			if owners != 2 || m.UserID() != bob.ID() {
				t.Fatalf("check got %s with %d owners", m.UserID(), owners)
			}
			return []audit.Event{auditEvent(t, w1.ID(), audit.MemberRemoved, base.Add(time.Second))}, m.CheckRemoval(owner, owners)
		}))
		_, err = p.members.Get(ctx, w1.ID(), mBob.ID())
		wantErr(t, err, domain.ErrNotFound)
		_, err = p.sessions.FindByToken(ctx, sBobW1.TokenHash())
		wantErr(t, err, domain.ErrNotFound)
		for _, s := range []*session.Session{sBobW2, sBobNone, sCyW1} {
			if _, err := p.sessions.FindByToken(ctx, s.TokenHash()); err != nil {
				t.Fatalf("session %s of workspace %q: %v", s.ID(), s.WorkspaceID(), err)
			}
		}
		_, err = columns.Get(ctx, w1.ID(), bob.ID(), f1.ID())
		wantErr(t, err, domain.ErrNotFound)
		for _, k := range [][3]string{{w2.ID(), bob.ID(), f2.ID()}, {w1.ID(), cy.ID(), f1.ID()}} {
			if _, err := columns.Get(ctx, k[0], k[1], k[2]); err != nil {
				t.Fatalf("column choice %v after removing Bob from w1: %v", k, err)
			}
		}
		wantActions(t, p, w1.ID(), audit.MemberRemoved, audit.MemberRoleChanged)
		wantErr(t, p.members.Delete(ctx, w1.ID(), mBob.ID(), func(*member.Membership, int) ([]audit.Event, error) { return nil, nil }), domain.ErrNotFound)
	})
}

// TestMembershipLastOwnerLock demotes the last two owners concurrently: exactly one demotion
// passes. The first holds its lock while the second starts; without the lock the second would
// read two owners and finish first.
func TestMembershipLastOwnerLock(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		owner := member.RoleOwner
		demote := func(m *member.Membership, owners int) (ports.Effects, error) {
			if err := m.ChangeRole(member.RoleAdmin, owner, owners); err != nil {
				return ports.Effects{}, err
			}
			return ports.Effects{Audit: []audit.Event{auditEvent(t, m.WorkspaceID(), audit.MemberRoleChanged, base)}}, nil
		}
		ownersOf := func(workspaceID string) int {
			list, err := p.members.List(ctx, workspaceID, ports.Page{Limit: 10})
			noErr(t, err)
			n := 0
			for _, m := range list {
				if m.Membership.Role() == member.RoleOwner {
					n++
				}
			}
			return n
		}

		// Held: the second demotion starts while the first holds the lock.
		w := mustWorkspace(t, p.repos, base)
		a := mustMember(t, p, w.ID(), mustUser(t, p, "a@example.com", base).ID(), member.RoleOwner, base)
		b := mustMember(t, p, w.ID(), mustUser(t, p, "b@example.com", base).ID(), member.RoleOwner, base)
		secondDone := make(chan error, 1)
		_, err := p.members.Update(ctx, w.ID(), a.ID(), func(m *member.Membership, owners int) (ports.Effects, error) {
			go func() {
				_, err := p.members.Update(ctx, w.ID(), b.ID(), demote)
				secondDone <- err
			}()
			select {
			case err := <-secondDone:
				secondDone <- err
				t.Errorf("second demotion finished while the first held the lock: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			return demote(m, owners)
		})
		noErr(t, err)
		wantErr(t, <-secondDone, member.ErrLastOwner)
		if n := ownersOf(w.ID()); n != 1 {
			t.Fatalf("owners = %d, want 1", n)
		}
		wantActions(t, p, w.ID(), audit.MemberRoleChanged)

		// Raced: both start together, a few times over.
		for round := range 5 {
			w := mustWorkspace(t, p.repos, base)
			ms := []*member.Membership{
				mustMember(t, p, w.ID(), mustUser(t, p, fmt.Sprintf("x%d@example.com", round), base).ID(), member.RoleOwner, base),
				mustMember(t, p, w.ID(), mustUser(t, p, fmt.Sprintf("y%d@example.com", round), base).ID(), member.RoleOwner, base),
			}
			errs := race(len(ms), func(i int) error {
				if i == 0 {
					_, err := p.members.Update(ctx, w.ID(), ms[i].ID(), demote)
					return err
				}
				return p.members.Delete(ctx, w.ID(), ms[i].ID(), func(m *member.Membership, owners int) ([]audit.Event, error) {
					return nil, m.CheckRemoval(owner, owners)
				})
			})
			ok := winners(t, errs, member.ErrLastOwner)
			if ok != 1 || ownersOf(w.ID()) != 1 {
				t.Fatalf("round %d: %d changes passed (%v), %d owners left", round, ok, errs, ownersOf(w.ID()))
			}
		}
	})
}

func acceptAs(name string, now time.Time, ids func() string) func(inv *invitation.Invitation, existing *user.User) (ports.InvitationAcceptance, error) {
	return func(inv *invitation.Invitation, existing *user.User) (ports.InvitationAcceptance, error) {
		if err := inv.Accept(now); err != nil {
			return ports.InvitationAcceptance{}, err
		}
		var acc ports.InvitationAcceptance
		u := existing
		if u == nil {
			nu, err := user.New(ids(), inv.Email(), name, now)
			if err != nil {
				return acc, err
			}
			acc.NewUser, u = nu, nu
		}
		m, err := member.New(newID("mem"), inv.WorkspaceID(), u.ID(), inv.Role(), now)
		if err != nil {
			return acc, err
		}
		e, err := audit.New(newID("aud"), inv.WorkspaceID(), audit.MemberJoined, audit.Actor{Type: audit.ActorUser, ID: u.ID(), Name: u.Email()},
			&audit.Target{Type: "membership", ID: m.ID()}, "", nil, now)
		if err != nil {
			return acc, err
		}
		acc.Membership, acc.Events = m, []audit.Event{e}
		return acc, nil
	}
}

func mustInvitation(t testing.TB, p people, workspaceID, email string, role member.Role, token string, at time.Time) *invitation.Invitation {
	t.Helper()
	inv, err := invitation.New(newID("inv"), workspaceID, email, role, invitation.HashToken(token), "usr_inviter", at)
	noErr(t, err)
	noErr(t, p.invitations.Create(context.Background(), inv, auditEvent(t, workspaceID, audit.MemberInvited, at)))
	return inv
}

func TestInvitationRepository(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w := mustWorkspace(t, p.repos, base)
		now := base.Add(10 * 24 * time.Hour)
		expired := mustInvitation(t, p, w.ID(), "old@example.com", member.RoleViewer, "tok-old", now.Add(-invitation.Validity))
		first := mustInvitation(t, p, w.ID(), "new@example.com", member.RoleEditor, "tok-new", now.Add(-time.Hour))
		second := mustInvitation(t, p, w.ID(), "Ada@Example.com", member.RoleAdmin, "tok-ada", now.Add(-time.Minute))
		third := mustInvitation(t, p, w.ID(), "gone@example.com", member.RoleAdmin, "tok-gone", now.Add(-time.Second))
		ada := mustUser(t, p, "ada@example.com", base)

		got, err := p.invitations.Get(ctx, w.ID(), first.ID())
		noErr(t, err)
		if got.Email() != "new@example.com" || got.Role() != member.RoleEditor || got.InvitedBy() != "usr_inviter" ||
			!got.ExpiresAt().Equal(first.ExpiresAt()) || got.AcceptedAt() != nil || !got.Matches("tok-new") {
			t.Fatalf("get = %+v", got)
		}
		_, err = p.invitations.Get(ctx, "ws_other", first.ID())
		wantErr(t, err, domain.ErrNotFound)
		got, err = p.invitations.FindByToken(ctx, invitation.HashToken("tok-ada"))
		noErr(t, err)
		if got.ID() != second.ID() {
			t.Fatalf("find by token = %s", got.ID())
		}
		_, err = p.invitations.FindByToken(ctx, invitation.HashToken("tok-unknown"))
		wantErr(t, err, domain.ErrNotFound)
		orphan, _ := invitation.New(newID("inv"), "ws_missing", "x@example.com", member.RoleViewer, invitation.HashToken("tok-x"), "usr_inviter", now)
		wantErr(t, p.invitations.Create(ctx, orphan), domain.ErrNotFound)

		// Withdrawing one; it is gone from the pending list, and withdrawing again is not found.
		noErr(t, p.invitations.Delete(ctx, w.ID(), third.ID(), auditEvent(t, w.ID(), audit.InvitationWithdrawn, now)))
		wantErr(t, p.invitations.Delete(ctx, w.ID(), third.ID(), auditEvent(t, w.ID(), audit.InvitationWithdrawn, now)), domain.ErrNotFound)

		pending, err := p.invitations.ListPending(ctx, w.ID(), now, ports.Page{Limit: 1})
		noErr(t, err)
		if len(pending) != 1 || pending[0].ID() != second.ID() {
			t.Fatalf("pending page 1 = %v", pending)
		}
		pending, err = p.invitations.ListPending(ctx, w.ID(), now, ports.Page{Limit: 10, After: &ports.Position{CreatedAt: second.CreatedAt(), ID: second.ID()}})
		noErr(t, err)
		if len(pending) != 1 || pending[0].ID() != first.ID() {
			t.Fatalf("pending page 2 = %v (the expired one must not show)", pending)
		}

		// Unknown and expired tokens are not usable; nothing is written.
		_, err = p.invitations.Accept(ctx, invitation.HashToken("tok-unknown"), acceptAs("X", now, func() string { return newID("usr") }))
		wantErr(t, err, invitation.ErrNotUsable)
		_, err = p.invitations.Accept(ctx, expired.TokenHash(), acceptAs("X", now, func() string { return newID("usr") }))
		wantErr(t, err, invitation.ErrNotUsable)

		// A new person: the user, the membership and the event are created with the acceptance.
		acc, err := p.invitations.Accept(ctx, first.TokenHash(), acceptAs("Newcomer", now, func() string { return newID("usr") }))
		noErr(t, err)
		if acc.NewUser == nil || acc.Membership.Role() != member.RoleEditor {
			t.Fatalf("acceptance = %+v", acc)
		}
		nu, err := p.users.FindByEmail(ctx, "new@example.com")
		noErr(t, err)
		if nu.ID() != acc.NewUser.ID() || nu.Name() != "Newcomer" {
			t.Fatalf("new user = %+v", nu)
		}
		m, err := p.members.Find(ctx, w.ID(), nu.ID())
		noErr(t, err)
		if m.Role() != member.RoleEditor {
			t.Fatalf("membership role = %s", m.Role())
		}
		got, _ = p.invitations.Get(ctx, w.ID(), first.ID())
		if got.AcceptedAt() == nil || !got.AcceptedAt().Equal(now) {
			t.Fatalf("accepted_at = %v, want %v", got.AcceptedAt(), now)
		}
		_, err = p.invitations.Accept(ctx, first.TokenHash(), acceptAs("Again", now, func() string { return newID("usr") }))
		wantErr(t, err, invitation.ErrNotUsable)
		wantErr(t, p.invitations.Delete(ctx, w.ID(), first.ID()), domain.ErrNotFound) // accepted: no longer withdrawable

		// An existing account is passed in; a membership it already has is a conflict that
		// leaves the invitation unspent.
		mustMember(t, p, w.ID(), ada.ID(), member.RoleViewer, base)
		var seen *user.User
		_, err = p.invitations.Accept(ctx, second.TokenHash(), func(inv *invitation.Invitation, existing *user.User) (ports.InvitationAcceptance, error) {
			seen = existing
			return acceptAs("", now, nil)(inv, existing)
		})
		wantErr(t, err, member.ErrAlreadyMember)
		if seen == nil || seen.ID() != ada.ID() {
			t.Fatalf("existing user = %v, want %s", seen, ada.ID())
		}
		got, _ = p.invitations.Get(ctx, w.ID(), second.ID())
		if got.AcceptedAt() != nil {
			t.Fatal("a refused acceptance spent the invitation")
		}
		// An accept that does not spend the invitation is refused.
		_, err = p.invitations.Accept(ctx, second.TokenHash(), func(*invitation.Invitation, *user.User) (ports.InvitationAcceptance, error) {
			return ports.InvitationAcceptance{}, nil
		})
		if err == nil {
			t.Fatal("an acceptance that did not spend the invitation was stored")
		}
		wantActions(t, p, w.ID(), audit.MemberJoined, audit.InvitationWithdrawn,
			audit.MemberInvited, audit.MemberInvited, audit.MemberInvited, audit.MemberInvited)
	})
}

func TestInvitationAcceptOnce(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w := mustWorkspace(t, p.repos, base)
		now := base.Add(time.Hour)
		inv := mustInvitation(t, p, w.ID(), "race@example.com", member.RoleEditor, "tok-race", base)
		errs := race(10, func(i int) error {
			_, err := p.invitations.Accept(ctx, inv.TokenHash(), acceptAs(fmt.Sprint("racer ", i), now, func() string { return newID("usr") }))
			return err
		})
		if won := winners(t, errs, invitation.ErrNotUsable); won != 1 {
			t.Fatalf("%d acceptances succeeded: %v", won, errs)
		}
		if c, _ := p.users.Count(ctx); c != 1 {
			t.Fatalf("users = %d", c)
		}
		if c, _ := p.members.Count(ctx, w.ID()); c != 1 {
			t.Fatalf("members = %d", c)
		}
		wantActions(t, p, w.ID(), audit.MemberJoined, audit.MemberInvited)
	})
}

func TestSessionRepository(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w1, w2 := mustWorkspace(t, p.repos, base), mustWorkspace(t, p.repos, base)
		ada := mustUser(t, p, "ada@example.com", base)
		bob := mustUser(t, p, "bob@example.com", base)
		s1 := session.New(newID("ses"), session.HashToken("t1"), ada.ID(), w1.ID(), base)
		s2 := session.New(newID("ses"), session.HashToken("t2"), ada.ID(), "", base)
		s3 := session.New(newID("ses"), session.HashToken("t3"), ada.ID(), w1.ID(), base)
		sb := session.New(newID("ses"), session.HashToken("tb"), bob.ID(), w1.ID(), base)
		for _, s := range []*session.Session{s1, s2, s3, sb} {
			noErr(t, p.sessions.Create(ctx, s))
		}
		wantErr(t, p.sessions.Create(ctx, session.New(newID("ses"), session.HashToken("tx"), "usr_missing", "", base)), domain.ErrNotFound)

		got, err := p.sessions.FindByToken(ctx, session.HashToken("t1"))
		noErr(t, err)
		if got.ID() != s1.ID() || got.UserID() != ada.ID() || got.WorkspaceID() != w1.ID() || !got.CreatedAt().Equal(base) || !got.LastSeenAt().Equal(base) {
			t.Fatalf("find = %+v", got)
		}
		_, err = p.sessions.FindByToken(ctx, session.HashToken("nope"))
		wantErr(t, err, domain.ErrNotFound)

		// Touch moves last_seen forward only, and switches the workspace when asked.
		noErr(t, p.sessions.Touch(ctx, s1.ID(), base.Add(time.Hour), ""))
		noErr(t, p.sessions.Touch(ctx, s1.ID(), base.Add(time.Minute), w2.ID()))
		got, _ = p.sessions.FindByToken(ctx, session.HashToken("t1"))
		if !got.LastSeenAt().Equal(base.Add(time.Hour)) || got.WorkspaceID() != w2.ID() {
			t.Fatalf("after touch: last seen %v, workspace %s", got.LastSeenAt(), got.WorkspaceID())
		}
		wantErr(t, p.sessions.Touch(ctx, "ses_missing", base, ""), domain.ErrNotFound)

		noErr(t, p.sessions.Delete(ctx, s3.ID()))
		noErr(t, p.sessions.Delete(ctx, s3.ID()))
		_, err = p.sessions.FindByToken(ctx, session.HashToken("t3"))
		wantErr(t, err, domain.ErrNotFound)

		// Ending every other session of Ada keeps the current one and Bob's.
		s4 := session.New(newID("ses"), session.HashToken("t4"), ada.ID(), w1.ID(), base)
		noErr(t, p.sessions.Create(ctx, s4))
		noErr(t, p.sessions.DeleteForUser(ctx, ada.ID(), s1.ID()))
		for tok, want := range map[string]bool{"t1": true, "t2": false, "t4": false, "tb": true} {
			_, err := p.sessions.FindByToken(ctx, session.HashToken(tok))
			if (err == nil) != want {
				t.Fatalf("session %s present = %v, want %v", tok, err == nil, want)
			}
		}
		noErr(t, p.sessions.DeleteForUser(ctx, ada.ID(), ""))
		_, err = p.sessions.FindByToken(ctx, session.HashToken("t1"))
		wantErr(t, err, domain.ErrNotFound)

		// Purge removes idle and too old sessions only.
		now := base.Add(40 * 24 * time.Hour)
		fresh := session.New(newID("ses"), session.HashToken("fresh"), bob.ID(), "", now.Add(-time.Hour))
		idle := session.New(newID("ses"), session.HashToken("idle"), bob.ID(), "", now.Add(-session.IdleTimeout))
		old := session.New(newID("ses"), session.HashToken("old"), bob.ID(), "", now.Add(-session.AbsoluteTimeout))
		for _, s := range []*session.Session{fresh, idle, old} {
			noErr(t, p.sessions.Create(ctx, s))
		}
		noErr(t, p.sessions.Touch(ctx, old.ID(), now.Add(-time.Minute), "")) // active, but too old
		n, err := p.sessions.Purge(ctx, now)
		noErr(t, err)
		if n != 3 { // idle, old, and tb (created at base, idle long ago)
			t.Fatalf("purged %d, want 3", n)
		}
		got, err = p.sessions.FindByToken(ctx, session.HashToken("fresh"))
		noErr(t, err)
		if !got.Valid(now) {
			t.Fatal("a kept session is not valid")
		}
		for _, tok := range []string{"idle", "old", "tb"} {
			_, err := p.sessions.FindByToken(ctx, session.HashToken(tok))
			wantErr(t, err, domain.ErrNotFound)
		}
	})
}

func TestAuditLog(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w := mustWorkspace(t, p.repos, base)
		other := mustWorkspace(t, p.repos, base)
		noErr(t, p.audit.Append(ctx))
		var all []audit.Event
		for i := range 6 {
			action := audit.UserSignedIn
			if i%2 == 1 {
				action = audit.UserSignInFailed
			}
			e := auditEvent(t, w.ID(), action, base.Add(time.Duration(i)*time.Minute))
			all = append(all, e)
		}
		same := auditEvent(t, w.ID(), audit.UserSignedIn, base.Add(5*time.Minute)) // same time as the last: id breaks the tie
		all = append(all, same)
		e, err := audit.New(newID("aud"), w.ID(), audit.UserSignedIn, audit.Actor{Type: audit.ActorUser, ID: "usr_1", Name: "ada@example.com"}, nil, "iphash", nil, base.Add(6*time.Minute))
		noErr(t, err)
		all = append(all, e)
		noErr(t, p.audit.Append(ctx, all...))
		noErr(t, p.audit.Append(ctx, auditEvent(t, other.ID(), audit.UserSignedIn, base)))

		list, err := p.audit.List(ctx, w.ID(), ports.AuditQuery{Page: ports.Page{Limit: 3}})
		noErr(t, err)
		if len(list) != 3 || list[0].ID != e.ID || list[1].ID != same.ID || list[2].ID != all[5].ID {
			t.Fatalf("first page = %v", list)
		}
		if list[0].Target != nil || list[0].IPHash != "iphash" || list[0].Actor.Name != "ada@example.com" || len(list[0].Details) != 0 {
			t.Fatalf("event = %+v", list[0])
		}
		if list[1].Target == nil || list[1].Target.ID != "t1" || list[1].Details["k"] != "v" || !list[1].CreatedAt.Equal(base.Add(5*time.Minute)) {
			t.Fatalf("event = %+v", list[1])
		}
		list, err = p.audit.List(ctx, w.ID(), ports.AuditQuery{Page: ports.Page{Limit: 10, After: &ports.Position{CreatedAt: list[2].CreatedAt, ID: list[2].ID}}})
		noErr(t, err)
		if len(list) != 5 || list[0].ID != all[4].ID || list[4].ID != all[0].ID {
			t.Fatalf("second page = %v", list)
		}

		after, before := base.Add(time.Minute), base.Add(5*time.Minute)
		list, err = p.audit.List(ctx, w.ID(), ports.AuditQuery{Page: ports.Page{Limit: 10}, Action: string(audit.UserSignedIn), CreatedAfter: &after, CreatedBefore: &before})
		noErr(t, err)
		if len(list) != 2 || list[0].ID != all[4].ID || list[1].ID != all[2].ID {
			t.Fatalf("filtered = %v", list)
		}
		list, err = p.audit.List(ctx, w.ID(), ports.AuditQuery{Page: ports.Page{Limit: 10}, Action: string(audit.UserSignInFailed)})
		noErr(t, err)
		if len(list) != 3 {
			t.Fatalf("failures = %d", len(list))
		}

		n, err := p.audit.Purge(ctx, base.Add(2*time.Minute))
		noErr(t, err)
		if n != 3 { // two of w, one of other
			t.Fatalf("purged %d, want 3", n)
		}
		if got := actions(t, p, w.ID()); len(got) != 6 {
			t.Fatalf("left %d events", len(got))
		}
	})
}

// TestAuditEventsInChangeTransactions checks that the repositories of changes write their audit
// events in the change's transaction: with the change, and not without it.
func TestAuditEventsInChangeTransactions(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w := mustWorkspace(t, p.repos, base)

		// Workspace update: a failing change writes nothing.
		boom := errors.New("boom")
		_, err := p.workspaces.Update(ctx, w.ID(), func(ws *workspace.Workspace) (ports.Effects, error) {
			name := "Renamed"
			_, err := ws.Change(workspace.Settings{Name: &name}, base)
			noErr(t, err)
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.WorkspaceUpdated, base)}}, boom
		})
		wantErr(t, err, boom)
		got, _ := p.workspaces.Get(ctx, w.ID())
		if got.Name() != "Acme" {
			t.Fatal("a failed workspace change was stored")
		}
		wantActions(t, p, w.ID())
		_, err = p.workspaces.Update(ctx, w.ID(), func(ws *workspace.Workspace) (ports.Effects, error) {
			plan := "free"
			_, err := ws.Change(workspace.Settings{Plan: &plan}, base)
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.WorkspaceUpdated, base)}}, err
		})
		noErr(t, err)
		got, _ = p.workspaces.Get(ctx, w.ID())
		if got.Plan() != workspace.PlanFree || got.RetainedPlan() != workspace.PlanBusiness || got.DataDeletionAt() == nil ||
			!got.DataDeletionAt().Equal(base.Add(workspace.GracePeriod)) {
			t.Fatalf("after downgrade %+v", got.Record())
		}
		wantActions(t, p, w.ID(), audit.WorkspaceUpdated)

		// API keys: a refused create and a revoke of a missing or already revoked key write nothing.
		k, err := apikey.New(newID("key"), w.ID(), "ci", apikey.ScopeAdmin, apikey.HashSecret("s"), audit.System, base)
		noErr(t, err)
		noErr(t, p.keys.Create(ctx, k, auditEvent(t, w.ID(), audit.APIKeyCreated, base.Add(time.Second))))
		wantErr(t, p.keys.Create(ctx, k, auditEvent(t, w.ID(), audit.APIKeyCreated, base.Add(time.Second))), domain.ErrConflict)
		noErr(t, p.keys.Revoke(ctx, w.ID(), k.ID(), base, auditEvent(t, w.ID(), audit.APIKeyRevoked, base.Add(2*time.Second))))
		noErr(t, p.keys.Revoke(ctx, w.ID(), k.ID(), base, auditEvent(t, w.ID(), audit.APIKeyRevoked, base.Add(2*time.Second))))
		wantErr(t, p.keys.Revoke(ctx, w.ID(), "key_missing", base, auditEvent(t, w.ID(), audit.APIKeyRevoked, base)), domain.ErrNotFound)
		wantActions(t, p, w.ID(), audit.APIKeyRevoked, audit.APIKeyCreated, audit.WorkspaceUpdated)

		// Forms and submissions: deleting a missing one writes nothing.
		f := mustForm(t, p.repos, w.ID(), base)
		s := mustAdd(t, p.repos, f, base, subOpts{})
		wantErr(t, p.submissions.Delete(ctx, w.ID(), f.ID(), "sub_missing", auditEvent(t, w.ID(), audit.SubmissionDeleted, base)), domain.ErrNotFound)
		noErr(t, p.submissions.Delete(ctx, w.ID(), f.ID(), s.ID(), auditEvent(t, w.ID(), audit.SubmissionDeleted, base.Add(3*time.Second))))
		wantErr(t, p.forms.Delete(ctx, w.ID(), "frm_missing", auditEvent(t, w.ID(), audit.FormDeleted, base)), domain.ErrNotFound)
		noErr(t, p.forms.Delete(ctx, w.ID(), f.ID(), auditEvent(t, w.ID(), audit.FormDeleted, base.Add(4*time.Second))))
		wantActions(t, p, w.ID(), audit.FormDeleted, audit.SubmissionDeleted, audit.APIKeyRevoked, audit.APIKeyCreated, audit.WorkspaceUpdated)

		// An event that cannot be written (its ID is taken) rolls the change back.
		dupEvent := auditEvent(t, w.ID(), audit.FormDeleted, base)
		noErr(t, p.audit.Append(ctx, dupEvent))
		f2 := mustForm(t, p.repos, w.ID(), base)
		if err := p.forms.Delete(ctx, w.ID(), f2.ID(), dupEvent); err == nil {
			t.Fatal("delete with an unwritable event succeeded")
		}
		_, err = p.forms.Get(ctx, w.ID(), f2.ID())
		noErr(t, err)
	})
}

func TestSignInThrottle(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		reserve := func(id string, at time.Time, limit int, subjects ...string) (bool, time.Time) {
			t.Helper()
			ok, freeFrom, err := p.throttle.Reserve(ctx, id, at, at.Add(-10*time.Minute), limit, subjects...)
			noErr(t, err)
			return ok, freeFrom
		}
		release := func(id string) (contested bool) {
			t.Helper()
			contested, err := p.throttle.Release(ctx, id, "")
			noErr(t, err)
			return contested
		}
		if ok, _ := reserve("try_1", base, 3, "email:a", "ip:1"); !ok {
			t.Fatal("the first attempt was refused")
		}
		reserve("try_2", base.Add(time.Minute), 3, "email:a")
		reserve("try_3", base.Add(2*time.Minute), 3, "email:a", "ip:1")
		// email:a holds three places: full, and the first frees one when it leaves the window.
		ok, freeFrom := reserve("try_4", base.Add(3*time.Minute), 3, "email:a", "ip:1")
		if ok || !freeFrom.Equal(base) {
			t.Fatalf("a full subject: ok %v, frees a place with the one taken at %v, want %v", ok, freeFrom, base)
		}
		// Nothing was taken for ip:1 by the refused attempt: it holds two.
		if ok, _ := reserve("try_5", base.Add(3*time.Minute), 3, "ip:1"); !ok {
			t.Fatal("ip:1 with two places was refused")
		}
		if ok, _ := reserve("try_6", base.Add(3*time.Minute), 3, "ip:1"); ok {
			t.Fatal("ip:1 took a fourth place")
		}
		// Giving back try_2 frees a place of email:a, and is contested: its place was taken
		// before email:a refused try_4 (the count filled up while try_2 was evaluated).
		if !release("try_2") {
			t.Fatal("a place taken before its subject refused an attempt was given back uncontested")
		}
		if release("try_unknown") {
			t.Fatal("an unknown attempt is contested")
		}
		if ok, _ := reserve("try_7", base.Add(4*time.Minute), 3, "email:a"); !ok {
			t.Fatal("a released place was not given back")
		}
		// Places leave the window: only those strictly after since count.
		if ok, _ := reserve("try_8", base.Add(10*time.Minute), 3, "email:a"); !ok {
			t.Fatal("the place taken at base still counts ten minutes later")
		}
		// Beyond the limit (after a lower limit), the place that frees one is the (n-limit+1)-th oldest.
		ok, freeFrom = reserve("try_9", base.Add(10*time.Minute), 2, "email:a")
		if ok || !freeFrom.Equal(base.Add(4*time.Minute)) {
			t.Fatalf("three places, limit two: ok %v, frees at %v, want the second oldest (%v)", ok, freeFrom, base.Add(4*time.Minute))
		}

		noErr(t, p.throttle.Purge(ctx, base.Add(150*time.Second)))
		var left int
		noErr(t, p.db.SQL().QueryRow("SELECT COUNT(*) FROM sign_in_failures").Scan(&left))
		if left != 3 { // try_7, try_8 for email:a and try_5 for ip:1
			t.Fatalf("after purge: %d places, want 3", left)
		}
	})
}

// TestSignInThrottleReleaseIsContestedInABurst: an attempt given back after another attempt on
// the watched account took a place later is contested; one alone, or watched on another
// subject, is not.
func TestSignInThrottleReleaseIsContestedInABurst(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		for i, id := range []string{"try_a", "try_b"} {
			at := base.Add(time.Duration(i) * time.Millisecond)
			ok, _, err := p.throttle.Reserve(ctx, id, at, at.Add(-time.Minute), 10, "email:ada", "ip:"+id)
			noErr(t, err)
			if !ok {
				t.Fatalf("%s refused", id)
			}
		}
		contested, err := p.throttle.Release(ctx, "try_a", "ip:try_a")
		noErr(t, err)
		if contested {
			t.Fatal("an attempt alone on its watched subject is contested")
		}
		ok, _, err := p.throttle.Reserve(ctx, "try_c", base, base.Add(-time.Minute), 10, "email:ada")
		noErr(t, err)
		if !ok {
			t.Fatal("try_c refused")
		}
		if contested, err = p.throttle.Release(ctx, "try_c", "email:ada"); err != nil || !contested {
			t.Fatalf("an attempt on the account with a later one in the window: contested %v (%v), want true", contested, err)
		}
		if contested, err = p.throttle.Release(ctx, "try_b", "email:ada"); err != nil || contested {
			t.Fatalf("the latest attempt on the account: contested %v (%v), want false", contested, err)
		}
	})
}

// TestSignInThrottleIsExactUnderConcurrency: attempts that reserve at once, with separate
// connections, get exactly limit places among them, per subject and across subjects.
func TestSignInThrottleIsExactUnderConcurrency(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		const attempts, limit = 40, 10
		// burst starts the attempts at once, attempt i naming subjects(i), and counts the places granted.
		burst := func(prefix string, subjects func(i int) []string) int64 {
			var granted atomic.Int64
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range attempts {
				wg.Go(func() {
					<-start
					ok, _, err := p.throttle.Reserve(context.Background(), fmt.Sprintf("%s%d", prefix, i), base, base.Add(-time.Minute), limit,
						subjects(i)...)
					if err != nil {
						t.Error(err)
					}
					if ok {
						granted.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			return granted.Load()
		}
		// Every attempt names the account; each from one of four addresses.
		if n := burst("try_", func(i int) []string { return []string{"email:ada", fmt.Sprintf("ip:%d", i%4)} }); n != limit {
			t.Fatalf("%d of %d concurrent attempts got a place, want exactly %d", n, attempts, limit)
		}
		var rows int
		noErr(t, p.db.SQL().QueryRow("SELECT COUNT(*) FROM sign_in_failures WHERE subject = 'email:ada'").Scan(&rows))
		if rows != limit {
			t.Fatalf("%d places stored for the account, want %d", rows, limit)
		}

		// Four addresses, one account each: per-address limits hold at once as well.
		// ip:shared held none before: ten of the forty get a place.
		if n := burst("try_b", func(i int) []string { return []string{fmt.Sprintf("email:%d", i), "ip:shared"} }); n != limit {
			t.Fatalf("%d of %d concurrent attempts from one address got a place, want exactly %d", n, attempts, limit)
		}
	})
}

// TestAccountMailOutbox: items are claimed oldest first, hidden for the lease, rescheduled and
// forgotten; two senders claiming at once never take the same item.
func TestAccountMailOutbox(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		o := persistence.NewAccountMailOutbox(p.db)
		for i := range 3 {
			noErr(t, o.Add(ctx, ports.QueuedAccountMail{ID: fmt.Sprintf("aml_%d", i), Kind: "password_link",
				Payload: []byte{0, 1, byte(i)}, CreatedAt: base.Add(time.Duration(i) * time.Second)}))
		}
		got, err := o.Claim(ctx, base.Add(time.Second), time.Minute, 10)
		noErr(t, err)
		if len(got) != 2 || got[0].ID != "aml_0" || got[1].ID != "aml_1" || got[0].Kind != "password_link" ||
			!bytes.Equal(got[1].Payload, []byte{0, 1, 1}) || got[0].Attempts != 0 || !got[0].CreatedAt.Equal(base) {
			t.Fatalf("claimed %+v, want aml_0 and aml_1 (due by then)", got)
		}
		got, err = o.Claim(ctx, base.Add(2*time.Second), time.Minute, 10)
		noErr(t, err)
		if len(got) != 1 || got[0].ID != "aml_2" {
			t.Fatalf("claimed %+v, want aml_2 only: the others are leased", got)
		}
		noErr(t, o.Retry(ctx, "aml_0", 1, base.Add(30*time.Second)))
		noErr(t, o.Delete(ctx, "aml_1"))
		noErr(t, o.Delete(ctx, "aml_gone"))
		got, err = o.Claim(ctx, base.Add(30*time.Second), time.Minute, 10)
		noErr(t, err)
		if len(got) != 1 || got[0].ID != "aml_0" || got[0].Attempts != 1 {
			t.Fatalf("claimed %+v, want aml_0 again with one attempt", got)
		}
		// The lease of aml_2 ends a minute after its claim.
		got, err = o.Claim(ctx, base.Add(62*time.Second), time.Minute, 10)
		noErr(t, err)
		if len(got) != 1 || got[0].ID != "aml_2" {
			t.Fatalf("claimed %+v, want aml_2 after its lease", got)
		}

		// Two senders at once over fifty due items: each item is claimed once.
		for i := range 50 {
			noErr(t, o.Add(ctx, ports.QueuedAccountMail{ID: fmt.Sprintf("aml_x%02d", i), Kind: "password_link", Payload: []byte{1}, CreatedAt: base}))
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for {
					items, err := o.Claim(ctx, base.Add(time.Hour), time.Hour, 7)
					if err != nil {
						t.Error(err)
						return
					}
					if len(items) == 0 {
						return
					}
					mu.Lock()
					for _, it := range items {
						seen[it.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("%s claimed %d times", id, n)
			}
		}
		if len(seen) != 50+2 { // the fifty, and aml_0 and aml_2 whose leases ended
			t.Fatalf("%d items claimed, want 52", len(seen))
		}
	})
}

func TestUsageReader(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w, other := mustWorkspace(t, p.repos, base), mustWorkspace(t, p.repos, base)
		u, err := p.usage.Usage(ctx, w.ID())
		noErr(t, err)
		if u != (workspace.Usage{}) {
			t.Fatalf("empty usage = %+v", u)
		}
		f1, f2 := mustForm(t, p.repos, w.ID(), base), mustForm(t, p.repos, w.ID(), base)
		fo := mustForm(t, p.repos, other.ID(), base)
		for range 3 {
			mustAdd(t, p.repos, f1, base, subOpts{})
		}
		gone := mustAdd(t, p.repos, f2, base, subOpts{})
		mustAdd(t, p.repos, f2, base, subOpts{})
		mustAdd(t, p.repos, fo, base, subOpts{})
		noErr(t, p.submissions.Delete(ctx, w.ID(), f2.ID(), gone.ID()))
		mustMember(t, p, w.ID(), mustUser(t, p, "a@example.com", base).ID(), member.RoleOwner, base)
		mustMember(t, p, w.ID(), mustUser(t, p, "b@example.com", base).ID(), member.RoleViewer, base)

		u, err = p.usage.Usage(ctx, w.ID())
		noErr(t, err)
		if u != (workspace.Usage{Forms: 2, Submissions: 4, Members: 2}) {
			t.Fatalf("usage = %+v", u)
		}
		u, err = p.usage.Usage(ctx, other.ID())
		noErr(t, err)
		if u != (workspace.Usage{Forms: 1, Submissions: 1}) {
			t.Fatalf("other usage = %+v", u)
		}
	})
}

func TestUserTokenRepository(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		h := func(s string) []byte { return session.HashToken(s) }
		exp := base.Add(time.Hour)
		noErr(t, p.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenSetup, TokenHash: h("setup1"), ExpiresAt: exp}))
		noErr(t, p.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenSetup, TokenHash: h("setup2"), ExpiresAt: exp}))
		_, err := p.tokens.Peek(ctx, ports.TokenSetup, h("setup1"), base)
		wantErr(t, err, domain.ErrNotFound) // replaced
		got, err := p.tokens.Peek(ctx, ports.TokenSetup, h("setup2"), base)
		noErr(t, err)
		if got.UserID != "" || got.Data != nil || !got.ExpiresAt.Equal(exp) || got.Purpose != ports.TokenSetup || !bytes.Equal(got.TokenHash, h("setup2")) {
			t.Fatalf("peek = %+v", got)
		}
		_, err = p.tokens.Peek(ctx, ports.TokenPassword, h("setup2"), base) // another purpose
		wantErr(t, err, domain.ErrNotFound)
		_, err = p.tokens.Peek(ctx, ports.TokenSetup, h("setup2"), exp) // expired
		wantErr(t, err, domain.ErrNotFound)

		// Per user: a second two-factor token replaces the first; other users' stay.
		noErr(t, p.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenTwoFactor, TokenHash: h("2fa-a1"), UserID: "usr_a", Data: []byte{1}, ExpiresAt: exp}))
		noErr(t, p.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenTwoFactor, TokenHash: h("2fa-b"), UserID: "usr_b", Data: []byte{2}, ExpiresAt: exp}))
		noErr(t, p.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenTwoFactor, TokenHash: h("2fa-a2"), UserID: "usr_a", Data: []byte{3, 0}, ExpiresAt: exp}))
		noErr(t, p.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenPassword, TokenHash: h("pw-a"), UserID: "usr_a", ExpiresAt: exp}))
		got, err = p.tokens.ForUser(ctx, ports.TokenTwoFactor, "usr_a", base)
		noErr(t, err)
		if !bytes.Equal(got.TokenHash, h("2fa-a2")) || !bytes.Equal(got.Data, []byte{3, 0}) {
			t.Fatalf("for user = %+v", got)
		}
		got, err = p.tokens.ForUser(ctx, ports.TokenTwoFactor, "usr_b", base)
		noErr(t, err)
		if !bytes.Equal(got.Data, []byte{2}) {
			t.Fatalf("other user's token = %+v", got)
		}
		_, err = p.tokens.ForUser(ctx, ports.TokenTwoFactor, "usr_a", exp)
		wantErr(t, err, domain.ErrNotFound)
		_, err = p.tokens.Peek(ctx, ports.TokenPassword, h("pw-a"), base)
		noErr(t, err)

		// Spend: expired tokens do not spend; of concurrent spends exactly one gets the token.
		_, err = p.tokens.Spend(ctx, ports.TokenPassword, h("pw-a"), exp)
		wantErr(t, err, domain.ErrNotFound)
		toks := make([]ports.UserToken, 10)
		errs := race(len(toks), func(i int) (err error) {
			toks[i], err = p.tokens.Spend(ctx, ports.TokenPassword, h("pw-a"), base)
			return err
		})
		for i, err := range errs {
			if err == nil && (toks[i].UserID != "usr_a" || toks[i].Purpose != ports.TokenPassword) {
				t.Fatalf("spent %+v", toks[i])
			}
		}
		if won := winners(t, errs, domain.ErrNotFound); won != 1 {
			t.Fatalf("%d spends succeeded", won)
		}
		_, err = p.tokens.Peek(ctx, ports.TokenPassword, h("pw-a"), base)
		wantErr(t, err, domain.ErrNotFound)
	})
}
