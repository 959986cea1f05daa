package accounts_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/ports"
	"github.com/pquerna/otp/totp"
)

func TestSetupFirstOwnerWorksOnce(t *testing.T) {
	h := newAccountsHarness(t)
	ctx := context.Background()
	token, issued, err := h.App.Commands.IssueSetupToken.Handle(ctx, accounts.IssueSetupToken{})
	if err != nil || !issued || len(token) < 43 {
		t.Fatalf("issue: %q %v %v", token, issued, err)
	}
	setup := accounts.SetupFirstOwner{Token: token, Email: "Ada@Example.com", Name: "Ada", Password: goodPassword,
		WorkspaceName: "Acme", IP: "203.0.113.7"}

	wrong := setup
	wrong.Token = "not-the-token"
	if _, err := h.App.Commands.SetupFirstOwner.Handle(ctx, wrong); !errors.Is(err, accounts.ErrSetupClosed) {
		t.Fatalf("wrong token: %v", err)
	}
	weak := setup
	weak.Password = "short"
	var ve *domain.ValidationError
	if _, err := h.App.Commands.SetupFirstOwner.Handle(ctx, weak); !errors.As(err, &ve) || ve.Violations[0].Field != "password" {
		t.Fatalf("weak password: %v", err)
	}

	// The refused attempts did not spend the link.
	in, err := h.App.Commands.SetupFirstOwner.Handle(ctx, setup)
	if err != nil {
		t.Fatal(err)
	}
	if in.User.Email() != "ada@example.com" || !strings.HasPrefix(in.User.ID(), "usr_") || in.Token == "" {
		t.Fatalf("signed in = %+v", in)
	}
	sp, err := h.App.Queries.AuthenticateSession.Handle(ctx, accounts.AuthenticateSession{Token: in.Token})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Principal.Role != member.RoleOwner || len(sp.Workspaces) != 1 || sp.Workspaces[0].Workspace.Name() != "Acme" {
		t.Fatalf("after setup: %+v, %d workspaces", sp.Principal, len(sp.Workspaces))
	}
	if joined := h.Audit.Of(audit.MemberJoined); len(joined) != 1 || joined[0].WorkspaceID != sp.Principal.WorkspaceID {
		t.Fatalf("member.joined events = %+v", joined)
	}

	// Never twice: not with the same token, not with a new one.
	setup.Email = "mallory@example.com"
	if _, err := h.App.Commands.SetupFirstOwner.Handle(ctx, setup); !errors.Is(err, accounts.ErrSetupClosed) {
		t.Fatalf("second setup: %v", err)
	}
	if token, issued, err := h.App.Commands.IssueSetupToken.Handle(ctx, accounts.IssueSetupToken{}); err != nil || issued || token != "" {
		t.Fatalf("issue after setup: %q %v %v", token, issued, err)
	}
}

// An install that already has a workspace (it ran before accounts existed) gets its owner: the
// setup joins the oldest workspace and renames it.
func TestSetupFirstOwnerJoinsTheExistingWorkspace(t *testing.T) {
	h := newAccountsHarness(t)
	ctx := context.Background()
	w := h.AddWorkspace(t, "Default")
	token, _, _ := h.App.Commands.IssueSetupToken.Handle(ctx, accounts.IssueSetupToken{})

	h.Advance(accounts.SetupTokenValidity)
	if _, err := h.App.Commands.SetupFirstOwner.Handle(ctx, accounts.SetupFirstOwner{Token: token, Email: "ada@example.com",
		Password: goodPassword}); !errors.Is(err, accounts.ErrSetupClosed) {
		t.Fatalf("expired link: %v", err)
	}
	token, _, _ = h.App.Commands.IssueSetupToken.Handle(ctx, accounts.IssueSetupToken{})
	in, err := h.App.Commands.SetupFirstOwner.Handle(ctx, accounts.SetupFirstOwner{Token: token, Email: "ada@example.com",
		Password: goodPassword, WorkspaceName: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Session.WorkspaceID() != w || len(h.Workspaces.Items) != 1 || h.Workspaces.Items[0].Name() != "Acme" {
		t.Fatalf("session workspace %q, workspaces %d", in.Session.WorkspaceID(), len(h.Workspaces.Items))
	}
}

func TestCreateUserPrintsASetPasswordLink(t *testing.T) {
	h := newAccountsHarness(t)
	ctx := context.Background()
	w := h.AddWorkspace(t, "Acme")
	created, err := h.App.Commands.CreateUser.Handle(ctx, accounts.CreateUser{Email: "ops@example.com", WorkspaceID: w, Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if created.SetPasswordURL != "https://forms.example.com/app/reset-password?token="+url.QueryEscape(created.SetPasswordToken) {
		t.Fatalf("link %q", created.SetPasswordURL)
	}
	if m, err := h.Memberships.Find(ctx, w, created.User.ID()); err != nil || m.Role() != member.RoleAdmin {
		t.Fatalf("membership %v %v", m, err)
	}
	// No password yet: signing in fails like any wrong password.
	if _, err := h.App.Commands.SignIn.Handle(ctx, accounts.SignIn{Email: "ops@example.com", Password: ""}); !errors.Is(err, accounts.ErrInvalidCredentials) {
		t.Fatalf("before setting a password: %v", err)
	}
	if err := h.App.Commands.ResetPassword.Handle(ctx, accounts.ResetPassword{Token: created.SetPasswordToken, Password: goodPassword}); err != nil {
		t.Fatal(err)
	}
	signIn(t, h, "ops@example.com", goodPassword)

	if _, err := h.App.Commands.CreateUser.Handle(ctx, accounts.CreateUser{Email: "x@example.com", WorkspaceID: "wsp_nope"}); err == nil {
		t.Fatal("a user was created in a missing workspace")
	}
	if _, err := h.App.Commands.CreateUser.Handle(ctx, accounts.CreateUser{Email: "x@example.com", Role: "boss"}); err == nil {
		t.Fatal("an unknown role was accepted")
	}
}

func TestChangePasswordEndsOtherSessions(t *testing.T) {
	h, w, u := adaAtAcme(t)
	here, elsewhere := signIn(t, h, "ada@example.com", goodPassword), signIn(t, h, "ada@example.com", goodPassword)
	ctx := asSession(t, h, here.Token)

	var ve *domain.ValidationError
	err := h.App.Commands.ChangePassword.Handle(ctx, accounts.ChangePassword{Current: "not my password", New: "another fine password"})
	if !errors.As(err, &ve) || ve.Violations[0].Field != "current" {
		t.Fatalf("wrong current password: %v", err)
	}
	err = h.App.Commands.ChangePassword.Handle(ctx, accounts.ChangePassword{Current: goodPassword, New: "password1234"})
	if !errors.As(err, &ve) || ve.Violations[0].Code != "common_password" {
		t.Fatalf("common new password: %v", err)
	}
	if len(h.Sessions.ForUser(u.ID())) != 2 {
		t.Fatal("a refused change ended sessions")
	}

	if err := h.App.Commands.ChangePassword.Handle(ctx, accounts.ChangePassword{Current: goodPassword, New: "another fine password"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: here.Token}); err != nil {
		t.Fatalf("the current session ended: %v", err)
	}
	if _, err := h.App.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: elsewhere.Token}); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("the other session survived: %v", err)
	}
	if ev := h.Audit.Of(audit.UserPasswordChanged); len(ev) != 1 || ev[0].WorkspaceID != w || ev[0].Actor.ID != u.ID() {
		t.Fatalf("password_changed events = %+v", ev)
	}
	if _, err := h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: "ada@example.com", Password: goodPassword}); !errors.Is(err, accounts.ErrInvalidCredentials) {
		t.Fatalf("old password: %v", err)
	}
	signIn(t, h, "ada@example.com", "another fine password")
}

func TestPasswordResetLinkWorksOnce(t *testing.T) {
	h, _, u := adaAtAcme(t)
	before := signIn(t, h, "ada@example.com", goodPassword)
	ctx := context.Background()

	// Unknown or malformed addresses: nil, queued like any other, and no mail once handled.
	for _, email := range []string{"nobody@example.com", "not an address", ""} {
		if err := h.App.Commands.RequestPasswordReset.Handle(ctx, accounts.RequestPasswordReset{Email: email}); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.AccountMail.Len(); n != 3 {
		t.Fatalf("%d requests queued, want 3", n)
	}
	for _, m := range h.AccountMail.Items {
		if bytes.Contains(m.Payload, []byte("nobody")) {
			t.Fatalf("the outbox holds the address in plaintext: %q", m.Payload)
		}
	}
	sendQueuedMail(t, h)
	if len(h.Mailer.Sent) != 0 || h.AccountMail.Len() != 0 {
		t.Fatalf("unknown addresses: mail sent %+v, %d items left", h.Mailer.Sent, h.AccountMail.Len())
	}
	if err := h.App.Commands.RequestPasswordReset.Handle(ctx, accounts.RequestPasswordReset{Email: "ADA@example.com"}); err != nil {
		t.Fatal(err)
	}
	if len(h.Mailer.Sent) != 0 || len(h.Tokens.Items) != 0 {
		t.Fatal("the request sent the mail (or made the link) itself instead of queueing it")
	}
	sendQueuedMail(t, h)
	if len(h.Mailer.Sent) != 1 || h.Mailer.Sent[0].To != "ada@example.com" {
		t.Fatalf("sent = %+v", h.Mailer.Sent)
	}
	m := regexp.MustCompile(`https://forms\.example\.com/app/reset-password\?token=(\S+)`).FindStringSubmatch(h.Mailer.Sent[0].Text)
	if m == nil {
		t.Fatalf("no link in %q", h.Mailer.Sent[0].Text)
	}
	token, _ := url.QueryUnescape(m[1])

	if err := h.App.Commands.ResetPassword.Handle(ctx, accounts.ResetPassword{Token: token, Password: "short"}); err == nil {
		t.Fatal("a short password was accepted")
	}
	if err := h.App.Commands.ResetPassword.Handle(ctx, accounts.ResetPassword{Token: token, Password: "a brand new passphrase"}); err != nil {
		t.Fatal(err)
	}
	if err := h.App.Commands.ResetPassword.Handle(ctx, accounts.ResetPassword{Token: token, Password: "yet another passphrase"}); !errors.Is(err, accounts.ErrLinkNotUsable) {
		t.Fatalf("second use: %v", err)
	}
	if len(h.Sessions.ForUser(u.ID())) != 0 {
		t.Fatal("sessions survived a reset")
	}
	if _, err := h.App.Queries.AuthenticateSession.Handle(ctx, accounts.AuthenticateSession{Token: before.Token}); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("old session: %v", err)
	}
	signIn(t, h, "ada@example.com", "a brand new passphrase")

	// A link expires after an hour.
	h.App.Commands.RequestPasswordReset.Handle(ctx, accounts.RequestPasswordReset{Email: "ada@example.com"})
	sendQueuedMail(t, h)
	m = regexp.MustCompile(`token=(\S+)`).FindStringSubmatch(h.Mailer.Sent[1].Text)
	token, _ = url.QueryUnescape(m[1])
	h.Advance(accounts.PasswordResetValidity)
	if err := h.App.Commands.ResetPassword.Handle(ctx, accounts.ResetPassword{Token: token, Password: "a third passphrase!"}); !errors.Is(err, accounts.ErrLinkNotUsable) {
		t.Fatalf("expired link: %v", err)
	}
}

func TestRequestPasswordResetWithoutMailSendsNothing(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	app := application.New(application.Deps{Users: h.Users, Tokens: h.Tokens, Clock: h.Clock}, application.Settings{})
	if err := app.Commands.RequestPasswordReset.Handle(context.Background(), accounts.RequestPasswordReset{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	if len(h.Tokens.Items) != 0 || app.AccountMail != nil {
		t.Fatal("a reset token was stored, or a sender made, though no mail can carry it")
	}
}

// enableTwoFactor turns two-factor on for the session and returns the secret and recovery codes.
func enableTwoFactor(t *testing.T, h *apptest.AccountsHarness, ctx context.Context) (string, accounts.RecoveryCodes) {
	t.Helper()
	setup, err := h.App.Commands.BeginTwoFactor.Handle(ctx, accounts.BeginTwoFactor{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(setup.URL, "otpauth://totp/") || !strings.Contains(setup.URL, "issuer=Formward") {
		t.Fatalf("setup URL %q", setup.URL)
	}
	code, _ := totp.GenerateCode(setup.Secret, h.Clock.Now())
	codes, err := h.App.Commands.ConfirmTwoFactor.Handle(ctx, accounts.ConfirmTwoFactor{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	return setup.Secret, codes
}

func TestTwoFactorSignIn(t *testing.T) {
	h, w, u := adaAtAcme(t)
	in := signIn(t, h, "ada@example.com", goodPassword)
	ctx := asSession(t, h, in.Token)

	// Confirming needs the right code; nothing changes before.
	if _, err := h.App.Commands.ConfirmTwoFactor.Handle(ctx, accounts.ConfirmTwoFactor{Code: "123456"}); err == nil {
		t.Fatal("confirmed without a setup")
	}
	setup, err := h.App.Commands.BeginTwoFactor.Handle(ctx, accounts.BeginTwoFactor{})
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := totp.GenerateCode(setup.Secret, h.Clock.Now().Add(-5*time.Minute))
	var ve *domain.ValidationError
	if _, err := h.App.Commands.ConfirmTwoFactor.Handle(ctx, accounts.ConfirmTwoFactor{Code: wrong}); !errors.As(err, &ve) {
		t.Fatalf("wrong confirmation code: %v", err)
	}
	if stored, _ := h.Users.Get(context.Background(), u.ID()); stored.TwoFactorEnabled() {
		t.Fatal("two-factor on before confirmation")
	}
	confirm, _ := totp.GenerateCode(setup.Secret, h.Clock.Now())
	codes, err := h.App.Commands.ConfirmTwoFactor.Handle(ctx, accounts.ConfirmTwoFactor{Code: confirm})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := h.Users.Get(context.Background(), u.ID())
	if !stored.TwoFactorEnabled() || strings.Contains(string(stored.TOTPSecret()), setup.Secret) {
		t.Fatal("two-factor is off, or its secret is stored in the clear")
	}
	if ev := h.Audit.Of(audit.UserTwoFactorOn); len(ev) != 1 || ev[0].WorkspaceID != w {
		t.Fatalf("two_factor_enabled events = %+v", ev)
	}
	if len(codes) != accounts.RecoveryCodeCount {
		t.Fatalf("%d recovery codes", len(codes))
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if !regexp.MustCompile(`^[a-z2-7]{8}-[a-z2-7]{8}$`).MatchString(c) || seen[c] {
			t.Fatalf("recovery code %q (80 bits as two groups of eight base32 characters, all different)", c)
		}
		seen[c] = true
	}
	if _, err := h.App.Commands.BeginTwoFactor.Handle(ctx, accounts.BeginTwoFactor{}); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("begin while on: %v", err)
	}

	attempt := func(code, recovery string) (accounts.SignedIn, error) {
		return h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: "ada@example.com", Password: goodPassword,
			TOTPCode: code, RecoveryCode: recovery, IP: "203.0.113.7"})
	}
	sessionsBefore := len(h.Sessions.ForUser(u.ID()))
	res, err := attempt("", "")
	if !errors.Is(err, accounts.ErrTwoFactorRequired) || !res.NeedsTwoFactor || res.Token != "" {
		t.Fatalf("without a code: %+v %v", res, err)
	}
	if len(h.Sessions.ForUser(u.ID())) != sessionsBefore {
		t.Fatal("a session was made before the second factor")
	}
	// A wrong password never reaches the code question.
	if _, err := h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: "ada@example.com", Password: "wrong one"}); !errors.Is(err, accounts.ErrInvalidCredentials) || errors.Is(err, accounts.ErrTwoFactorRequired) {
		t.Fatalf("wrong password: %v", err)
	}

	// The code that confirmed the setup was spent: not again within its window.
	if _, err := attempt(confirm, ""); !errors.Is(err, accounts.ErrInvalidTwoFactorCode) {
		t.Fatalf("replayed confirmation code: %v", err)
	}
	h.Advance(30 * time.Second)
	code, _ := totp.GenerateCode(setup.Secret, h.Clock.Now())
	if _, err := attempt(code, ""); err != nil {
		t.Fatalf("fresh code: %v", err)
	}
	if _, err := attempt(code, ""); !errors.Is(err, accounts.ErrInvalidTwoFactorCode) {
		t.Fatalf("replayed code: %v", err)
	}
	// Still within the skew, an older code is refused too: its step is not newer than the last.
	h.Advance(30 * time.Second)
	if _, err := attempt(code, ""); !errors.Is(err, accounts.ErrInvalidTwoFactorCode) {
		t.Fatalf("older code within the window: %v", err)
	}
	// A code of the next step (the phone's clock a little ahead) works once.
	ahead, _ := totp.GenerateCode(setup.Secret, h.Clock.Now().Add(30*time.Second))
	if _, err := attempt(ahead, ""); err != nil {
		t.Fatalf("code one step ahead: %v", err)
	}
	if failed := h.Audit.Of(audit.UserSignInFailed); len(failed) == 0 || failed[len(failed)-1].Details["reason"] != "two_factor" {
		t.Fatalf("wrong codes not recorded: %+v", failed)
	}

	// A recovery code works once.
	if _, err := attempt("", strings.ToUpper(codes[3])); err != nil {
		t.Fatalf("recovery code: %v", err)
	}
	if _, err := attempt("", codes[3]); !errors.Is(err, accounts.ErrInvalidTwoFactorCode) {
		t.Fatalf("recovery code again: %v", err)
	}
	if stored, _ := h.Users.Get(context.Background(), u.ID()); stored.RecoveryCodesLeft() != accounts.RecoveryCodeCount-1 {
		t.Fatalf("%d recovery codes left", stored.RecoveryCodesLeft())
	}

	// Turning it off needs the password.
	if err := h.App.Commands.DisableTwoFactor.Handle(ctx, accounts.DisableTwoFactor{Password: "wrong one"}); !errors.Is(err, accounts.ErrInvalidCredentials) {
		t.Fatalf("disable with a wrong password: %v", err)
	}
	if err := h.App.Commands.DisableTwoFactor.Handle(ctx, accounts.DisableTwoFactor{Password: goodPassword}); err != nil {
		t.Fatal(err)
	}
	if ev := h.Audit.Of(audit.UserTwoFactorOff); len(ev) != 1 {
		t.Fatalf("two_factor_disabled events = %+v", ev)
	}
	if _, err := attempt("", ""); err != nil {
		t.Fatalf("sign-in after turning two-factor off: %v", err)
	}
}

// Wrong codes count as failed sign-ins: ten of them throttle the account even with the right
// password.
func TestWrongTwoFactorCodesAreThrottled(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	in := signIn(t, h, "ada@example.com", goodPassword)
	secret, _ := enableTwoFactor(t, h, asSession(t, h, in.Token))
	for range accounts.SignInFailureLimit {
		h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: "ada@example.com", Password: goodPassword, TOTPCode: "000000"})
	}
	h.Advance(time.Minute)
	code, _ := totp.GenerateCode(secret, h.Clock.Now())
	if _, err := h.App.Commands.SignIn.Handle(context.Background(), accounts.SignIn{Email: "ada@example.com", Password: goodPassword, TOTPCode: code}); !errors.Is(err, accounts.ErrThrottled) {
		t.Fatalf("after ten wrong codes: %v", err)
	}
}

func TestFinishOIDC(t *testing.T) {
	h, w, u := adaAtAcme(t)
	ctx := context.Background()
	h.OIDC.Identities["code-ada"] = ports.OIDCIdentity{Subject: "sub-ada", Email: "Ada@example.com", Name: "Ada"}
	h.OIDC.Identities["code-stranger"] = ports.OIDCIdentity{Subject: "sub-x", Email: "stranger@example.com"}
	h.OIDC.Identities["code-imposter"] = ports.OIDCIdentity{Subject: "sub-other", Email: "ada@example.com"}
	h.OIDC.Refusals["code-unverified"] = errors.New("email not verified")

	h.OIDC.Down = true
	if _, err := h.App.Commands.StartOIDC.Handle(ctx, accounts.StartOIDC{}); !errors.Is(err, accounts.ErrOIDCUnavailable) || !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("provider down: %v, want ErrOIDCUnavailable", err)
	}
	h.OIDC.Down = false
	start, err := h.App.Commands.StartOIDC.Handle(ctx, accounts.StartOIDC{})
	if err != nil {
		t.Fatal(err)
	}
	if len(start.State) < 43 || len(start.Nonce) < 43 || len(start.Verifier) < 43 || start.State == start.Nonce ||
		!strings.Contains(start.URL, "state="+start.State) {
		t.Fatalf("start = %+v", start)
	}
	finish := func(code string) (accounts.SignedIn, error) {
		return h.App.Commands.FinishOIDC.Handle(ctx, accounts.FinishOIDC{Code: code, Verifier: start.Verifier, Nonce: start.Nonce, IP: "203.0.113.7"})
	}

	if _, err := finish("code-unverified"); !errors.Is(err, accounts.ErrOIDCRefused) {
		t.Fatalf("unverified email: %v", err)
	}
	if _, err := finish("code-stranger"); !errors.Is(err, accounts.ErrNoAccount) {
		t.Fatalf("no account: %v", err)
	}
	if n, _ := h.Users.Count(ctx); n != 1 {
		t.Fatal("single sign-on created an account")
	}

	in, err := finish("code-ada")
	if err != nil {
		t.Fatal(err)
	}
	if in.User.ID() != u.ID() || in.Session.WorkspaceID() != w {
		t.Fatalf("signed in as %s in %s", in.User.ID(), in.Session.WorkspaceID())
	}
	if stored, _ := h.Users.Get(ctx, u.ID()); stored.OIDCSubject() != "sub-ada" {
		t.Fatalf("subject %q not linked", stored.OIDCSubject())
	}
	// Later sign-ins find the account by subject, whatever the email says now.
	h.OIDC.Identities["code-ada-renamed"] = ports.OIDCIdentity{Subject: "sub-ada", Email: "ada@new.example.com"}
	if in, err := finish("code-ada-renamed"); err != nil || in.User.ID() != u.ID() {
		t.Fatalf("by subject: %v", err)
	}
	// Another identity with the same email cannot take the linked account.
	if _, err := finish("code-imposter"); !errors.Is(err, accounts.ErrOIDCRefused) {
		t.Fatalf("other subject, same email: %v", err)
	}
	if ev := h.Audit.Of(audit.UserSignedIn); len(ev) != 2 {
		t.Fatalf("%d signed_in events", len(ev))
	}

	off := application.New(application.Deps{Users: h.Users}, application.Settings{})
	if _, err := off.Commands.StartOIDC.Handle(ctx, accounts.StartOIDC{}); !errors.Is(err, accounts.ErrOIDCNotConfigured) {
		t.Fatalf("not configured: %v", err)
	}
	if _, err := off.Commands.FinishOIDC.Handle(ctx, accounts.FinishOIDC{Code: "code-ada"}); !errors.Is(err, accounts.ErrOIDCNotConfigured) {
		t.Fatalf("not configured: %v", err)
	}
}
