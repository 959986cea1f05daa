package accounts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/apptest"
	authapp "github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/ports"
)

const goodPassword = "plum tuesday lantern 42"

func signIn(t *testing.T, h *apptest.AccountsHarness, email, password string) accounts.SignedIn {
	t.Helper()
	in, err := h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: email, Password: password, IP: "203.0.113.7"})
	if err != nil {
		t.Fatalf("sign in %s: %v", email, err)
	}
	return in
}

// asSession returns a context carrying the principal of the session token, as the dashboard
// adapter builds it.
func asSession(t *testing.T, h *apptest.AccountsHarness, token string) context.Context {
	t.Helper()
	sp, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: token, IP: "203.0.113.7"})
	if err != nil {
		t.Fatalf("authenticate session: %v", err)
	}
	return authapp.WithPrincipal(context.Background(), sp.Principal)
}

func TestSignInStartsASessionKeptAsAHash(t *testing.T) {
	h := newAccountsHarness(t)
	w1, w2 := h.AddWorkspace(t, "Acme"), h.AddWorkspace(t, "Side project")
	u := h.AddUser(t, "ada@example.com", goodPassword, w1, w2)

	in, err := h.App.Commands.SignIn.Handle(context.Background(),
		accounts.SignIn{Email: "  Ada@Example.com ", Password: goodPassword, IP: "203.0.113.7"})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Token) < 43 || in.User.ID() != u.ID() || in.Session.UserID() != u.ID() || in.Session.WorkspaceID() != w1 {
		t.Fatalf("signed in = %+v", in)
	}
	if !strings.HasPrefix(in.Session.ID(), ports.PrefixSession+"_") {
		t.Fatalf("session ID %q", in.Session.ID())
	}
	stored := h.Sessions.ForUser(u.ID())
	if len(stored) != 1 || !bytes.Equal(stored[0].TokenHash(), session.HashToken(in.Token)) || bytes.Contains(stored[0].TokenHash(), []byte(in.Token)) {
		t.Fatal("the session is not stored by the hash of its token")
	}

	// user.signed_in in each workspace, with the IP's hash and never the address.
	events := h.Audit.Of(audit.UserSignedIn)
	if len(events) != 2 || events[0].WorkspaceID != w1 || events[1].WorkspaceID != w2 {
		t.Fatalf("signed_in events = %+v", events)
	}
	for _, e := range events {
		if e.IPHash != h.IPHasher.Hash("203.0.113.7") || e.Actor.ID != u.ID() || !strings.HasPrefix(e.ID, "aud_") {
			t.Fatalf("event %+v", e)
		}
	}

	sp, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token})
	if err != nil {
		t.Fatal(err)
	}
	p := sp.Principal
	if p.WorkspaceID != w1 || p.Role != member.RoleOwner || p.Actor.Type != audit.ActorUser || p.Actor.ID != u.ID() ||
		p.SessionID != in.Session.ID() || len(sp.Workspaces) != 2 {
		t.Fatalf("principal = %+v, workspaces %d", p, len(sp.Workspaces))
	}

	// Every sign-in is a new session with a new token.
	again := signIn(t, h, "ada@example.com", goodPassword)
	if again.Token == in.Token || again.Session.ID() == in.Session.ID() {
		t.Fatal("a second sign-in reused the session")
	}
}

// Unknown email and wrong password give the same error after the same work: one argon2id
// verification against a real hash.
func TestSignInGivesNothingAwayAboutAccounts(t *testing.T) {
	h, w, _ := adaAtAcme(t)

	ctx := context.Background()
	h.Passwords.Reset()
	_, wrongErr := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "ada@example.com", Password: "not the password", IP: "198.51.100.1"})
	wrong := h.Passwords.Reset()
	_, unknownErr := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "bob@example.com", Password: "not the password", IP: "198.51.100.1"})
	unknown := h.Passwords.Reset()

	if !errors.Is(wrongErr, accounts.ErrInvalidCredentials) || !errors.Is(unknownErr, accounts.ErrInvalidCredentials) {
		t.Fatalf("errors: %v / %v", wrongErr, unknownErr)
	}
	if wrongErr.Error() != unknownErr.Error() {
		t.Fatalf("messages differ: %q / %q", wrongErr, unknownErr)
	}
	if len(wrong) != 1 || len(unknown) != 1 || !strings.HasPrefix(unknown[0], "$argon2id$") ||
		strings.SplitN(unknown[0], "$", 5)[3] != strings.SplitN(wrong[0], "$", 5)[3] {
		t.Fatalf("verifications: wrong password %q, unknown email %q; want one each, same parameters", wrong, unknown)
	}
	// A second unknown email reuses the dummy hash computed once.
	h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "eve@example.com", Password: "x"})
	if again := h.Passwords.Reset(); len(again) != 1 || again[0] != unknown[0] {
		t.Fatalf("dummy hash not reused: %q vs %q", again, unknown)
	}

	// The known account's workspace records the failure, with the IP hash and no secret.
	failed := h.Audit.Of(audit.UserSignInFailed)
	if len(failed) != 1 || failed[0].WorkspaceID != w || failed[0].IPHash != h.IPHasher.Hash("198.51.100.1") ||
		failed[0].Details["reason"] != "password" || len(failed[0].Details) != 1 {
		t.Fatalf("sign_in_failed events = %+v", failed)
	}
	if len(h.Sessions.ByID) != 0 {
		t.Fatal("a failed sign-in made a session")
	}
}

func TestSignInThrottlesPerAccount(t *testing.T) {
	h, w, _ := adaAtAcme(t)
	ctx := context.Background()
	start := h.Clock.Now()
	// Ten failures a minute apart, each from another address.
	for i := range accounts.SignInFailureLimit {
		_, err := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "ada@example.com", Password: "wrong password",
			IP: fmt.Sprintf("192.0.2.%d", i+1)})
		if !errors.Is(err, accounts.ErrInvalidCredentials) {
			t.Fatalf("failure %d: %v", i+1, err)
		}
		h.Advance(time.Minute)
	}
	// Now even the right password is refused, until the oldest failure is 15 minutes old.
	_, err := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "ada@example.com", Password: goodPassword, IP: "192.0.2.200"})
	var te *accounts.ThrottledError
	if !errors.As(err, &te) || !errors.Is(err, accounts.ErrThrottled) {
		t.Fatalf("11th attempt: %v", err)
	}
	if want := start.Add(accounts.SignInWindow).Sub(h.Clock.Now()); te.RetryAfter != want {
		t.Fatalf("RetryAfter = %v, want %v", te.RetryAfter, want)
	}
	// Another account from the same addresses is not affected.
	h.AddUser(t, "bob@example.com", goodPassword, w)
	signIn(t, h, "bob@example.com", goodPassword)

	h.Advance(te.RetryAfter)
	signIn(t, h, "ada@example.com", goodPassword)
}

func TestSignInThrottlesPerIP(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	ctx := context.Background()
	start := h.Clock.Now()
	for i := range accounts.SignInFailureLimit {
		// A different (unknown) account every time, from one address.
		_, err := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: fmt.Sprintf("guess%d@example.com", i),
			Password: "wrong password", IP: "198.51.100.9"})
		if !errors.Is(err, accounts.ErrInvalidCredentials) {
			t.Fatal(err)
		}
		h.Advance(30 * time.Second)
	}
	_, err := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "ada@example.com", Password: goodPassword, IP: "198.51.100.9"})
	var te *accounts.ThrottledError
	if !errors.As(err, &te) {
		t.Fatalf("from the throttled address: %v", err)
	}
	if want := start.Add(accounts.SignInWindow).Sub(h.Clock.Now()); te.RetryAfter != want {
		t.Fatalf("RetryAfter = %v, want %v", te.RetryAfter, want)
	}
	// The same account from another address signs in.
	if _, err := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "ada@example.com", Password: goodPassword, IP: "198.51.100.10"}); err != nil {
		t.Fatal(err)
	}
}

func TestSessionExpiresWhenIdle(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	in := signIn(t, h, "ada@example.com", goodPassword)
	auth := func() error {
		_, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token})
		return err
	}
	// Activity within 12 hours keeps it alive.
	for range 3 {
		h.Advance(session.IdleTimeout - time.Minute)
		if err := auth(); err != nil {
			t.Fatalf("active session refused: %v", err)
		}
	}
	h.Advance(session.IdleTimeout)
	if err := auth(); !errors.Is(err, authapp.ErrUnauthenticated) {
		t.Fatalf("idle session: %v", err)
	}
	if len(h.Sessions.ByID) != 0 {
		t.Fatal("the expired session was not deleted")
	}
}

func TestSessionEndsAfterThirtyDaysWhateverTheActivity(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	in := signIn(t, h, "ada@example.com", goodPassword)
	started := h.Clock.Now()
	for h.Clock.Now().Add(10 * time.Hour).Before(started.Add(session.AbsoluteTimeout)) {
		h.Advance(10 * time.Hour)
		if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token}); err != nil {
			t.Fatalf("at %v: %v", h.Clock.Now().Sub(started), err)
		}
	}
	h.Clock.At = started.Add(session.AbsoluteTimeout)
	if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token}); !errors.Is(err, authapp.ErrUnauthenticated) {
		t.Fatalf("after 30 days: %v", err)
	}
}

func TestAuthenticateSessionTouchesAtMostOnceAMinute(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	in := signIn(t, h, "ada@example.com", goodPassword)
	for range 5 {
		h.Advance(10 * time.Second)
		if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token}); err != nil {
			t.Fatal(err)
		}
	}
	if h.Sessions.Touches != 0 {
		t.Fatalf("%d touches within the first minute", h.Sessions.Touches)
	}
	h.Advance(20 * time.Second)
	sp, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token})
	if err != nil {
		t.Fatal(err)
	}
	if h.Sessions.Touches != 1 || !sp.Session.LastSeenAt().Equal(h.Clock.Now()) {
		t.Fatalf("touches %d, last seen %v", h.Sessions.Touches, sp.Session.LastSeenAt())
	}
}

func TestAuthenticateSessionRefusesUnknownTokens(t *testing.T) {
	h := newAccountsHarness(t)
	for _, token := range []string{"", "nonsense", strings.Repeat("A", 43)} {
		if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: token}); !errors.Is(err, authapp.ErrUnauthenticated) {
			t.Fatalf("%q: %v", token, err)
		}
	}
}

func TestSwitchWorkspaceOnlyToAMembersWorkspace(t *testing.T) {
	h := newAccountsHarness(t)
	w1, w2, other := h.AddWorkspace(t, "Acme"), h.AddWorkspace(t, "Side"), h.AddWorkspace(t, "Not mine")
	h.AddUser(t, "ada@example.com", goodPassword, w1, w2)
	in := signIn(t, h, "ada@example.com", goodPassword)
	ctx := asSession(t, h, in.Token)

	if err := h.App.Commands.SwitchWorkspace.Handle(ctx, accounts.SwitchWorkspace{WorkspaceID: w2}); err != nil {
		t.Fatal(err)
	}
	sp, _ := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token})
	if sp.Principal.WorkspaceID != w2 || sp.Principal.Role != member.RoleEditor {
		t.Fatalf("after switching: %+v", sp.Principal)
	}
	for _, target := range []string{other, "wsp_missing", ""} {
		if err := h.App.Commands.SwitchWorkspace.Handle(ctx, accounts.SwitchWorkspace{WorkspaceID: target}); !errors.Is(err, authapp.ErrForbidden) {
			t.Fatalf("switch to %q: %v", target, err)
		}
	}
	sp, _ = h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token})
	if sp.Principal.WorkspaceID != w2 {
		t.Fatalf("a refused switch moved the session to %q", sp.Principal.WorkspaceID)
	}
	// An API key principal has no session to switch.
	keyCtx := authapp.WithPrincipal(context.Background(), authapp.Principal{WorkspaceID: w1, KeyID: "key_1",
		Actor: audit.Actor{Type: audit.ActorAPIKey, ID: "key_1"}})
	if err := h.App.Commands.SwitchWorkspace.Handle(keyCtx, accounts.SwitchWorkspace{WorkspaceID: w1}); !errors.Is(err, authapp.ErrForbidden) {
		t.Fatalf("API key: %v", err)
	}
}

// When the membership ends, its sessions end; a session without any workspace left sees only
// the "no workspace" page: an empty principal workspace and no role.
func TestSessionWithoutMembership(t *testing.T) {
	h := newAccountsHarness(t)
	w := h.AddWorkspace(t, "Acme")
	u := h.AddUser(t, "ada@example.com", goodPassword)
	in := signIn(t, h, "ada@example.com", goodPassword)
	sp, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Principal.WorkspaceID != "" || sp.Principal.Role != "" || sp.Principal.Allows("read") {
		t.Fatalf("principal without membership = %+v", sp.Principal)
	}
	// Invited later: the session moves to the new workspace.
	m, _ := member.New("mem_x", w, u.ID(), member.RoleViewer, h.Clock.Now())
	h.Memberships.Create(context.Background(), m)
	sp, _ = h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token})
	if sp.Principal.WorkspaceID != w || sp.Principal.Role != member.RoleViewer {
		t.Fatalf("after joining: %+v", sp.Principal)
	}
	// Removed: the membership's sessions end.
	if err := h.Memberships.Delete(context.Background(), w, "mem_x", func(*member.Membership, int) ([]audit.Event, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: in.Token}); !errors.Is(err, authapp.ErrUnauthenticated) {
		t.Fatalf("after removal: %v", err)
	}
}

func TestSignOutAndSignOutEverywhere(t *testing.T) {
	h, _, u := adaAtAcme(t)
	a, b, c := signIn(t, h, "ada@example.com", goodPassword), signIn(t, h, "ada@example.com", goodPassword), signIn(t, h, "ada@example.com", goodPassword)

	if err := h.App.Commands.SignOut.Handle(context.Background(), accounts.SignOut{Token: a.Token}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: a.Token}); !errors.Is(err, authapp.ErrUnauthenticated) {
		t.Fatalf("signed-out session: %v", err)
	}
	if err := h.App.Commands.SignOut.Handle(context.Background(), accounts.SignOut{Token: a.Token}); err != nil {
		t.Fatalf("signing out twice: %v", err)
	}
	if n := len(h.Sessions.ForUser(u.ID())); n != 2 {
		t.Fatalf("%d sessions left, want 2", n)
	}
	if err := h.App.Commands.SignOutEverywhere.Handle(asSession(t, h, b.Token), accounts.SignOutEverywhere{}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{b.Token, c.Token} {
		if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: tok}); !errors.Is(err, authapp.ErrUnauthenticated) {
			t.Fatalf("after signing out everywhere: %v", err)
		}
	}
	if err := h.App.Commands.SignOutEverywhere.Handle(context.Background(), accounts.SignOutEverywhere{}); !errors.Is(err, authapp.ErrForbidden) {
		t.Fatalf("without a principal: %v", err)
	}
}
