package bootstrap

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/oidc"
	"github.com/formward/formward/adapters/oidc/oidctest"
	"github.com/formward/formward/application/accounts"
)

// OpenID Connect needs issuer, client ID and client secret together; any other mix is refused
// at start, naming the variables.
func TestOIDCSettingsAreAllOrNothing(t *testing.T) {
	for _, args := range [][]string{
		{"--oidc-issuer", "https://id.example.com"},
		{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "formward"},
		{"--oidc-client-secret", "s3cret"},
		{"--oidc-issuer", "id.example.com", "--oidc-client-id", "formward", "--oidc-client-secret", "s3cret"},
	} {
		code, _, stderr := run(t, append([]string{"serve", "--data-dir", t.TempDir()}, args...)...)
		if code == 0 || !strings.Contains(stderr, "FORMWARD_OIDC_ISSUER") {
			t.Errorf("serve %v: exit %d, stderr %s", args, code, stderr)
		}
	}

	cfg := testConfig(t)
	if p, err := provideOIDC(cfg); p != nil || err != nil {
		t.Fatalf("without an issuer: %v, %v; want no provider", p, err)
	}
	cfg = testConfig(t, "--oidc-issuer", "https://id.example.com", "--oidc-client-id", "formward", "--oidc-client-secret", "s3cret",
		"--public-url", "https://forms.example.com/")
	if err := cfg.Validate(func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	p, err := provideOIDC(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.(*oidc.Provider).RedirectURL(); got != "https://forms.example.com/app/oidc/callback" {
		t.Fatalf("redirect URL %s", got)
	}
}

func TestAccountMailerOnlyWithSMTP(t *testing.T) {
	if m, err := provideAccountMailer(testConfig(t)); m != nil || err != nil {
		t.Fatalf("without SMTP: %v, %v; want no mailer", m, err)
	}
	m, err := provideAccountMailer(testConfig(t, "--smtp-url", "smtp://127.0.0.1:2525", "--smtp-from", "forms@example.com"))
	if m == nil || err != nil {
		t.Fatalf("with SMTP: %v, %v", m, err)
	}
}

// Single sign-on through the wired application and a real provider: the provider's person
// without an account here is refused (sign-up is by invitation); once the account exists, the
// same sign-in starts a session and links the provider's subject; an unverified email is
// refused.
func TestSingleSignOnThroughTheWiredApplication(t *testing.T) {
	ctx := context.Background()
	provider := oidctest.Start(t, oidctest.Options{ClientID: "formward", ClientSecret: "s3cret",
		RedirectURL: "https://forms.example.com/app/oidc/callback"})
	cfg := testConfig(t, "--oidc-issuer", provider.Issuer, "--oidc-client-id", "formward", "--oidc-client-secret", "s3cret",
		"--public-url", "https://forms.example.com")
	if err := cfg.Validate(func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	rt, cleanup := testRuntime(t, cfg)
	defer cleanup()

	signIn := func(username string) (accounts.SignedIn, error) {
		t.Helper()
		start, err := rt.App.Commands.StartOIDC.Handle(ctx, accounts.StartOIDC{})
		if err != nil {
			t.Fatal(err)
		}
		cb := oidctest.SignIn(t, start.URL, username)
		if cb.Host != "forms.example.com" || cb.Path != "/app/oidc/callback" || cb.Query().Get("state") != start.State {
			t.Fatalf("callback %s", cb)
		}
		return rt.App.Commands.FinishOIDC.Handle(ctx, accounts.FinishOIDC{Code: cb.Query().Get("code"),
			Verifier: start.Verifier, Nonce: start.Nonce, IP: "127.0.0.1"})
	}

	if _, err := signIn(oidctest.Ada); !errors.Is(err, accounts.ErrNoAccount) {
		t.Fatalf("sign-in without an account: %v, want ErrNoAccount", err)
	}
	if _, err := rt.App.Commands.CreateUser.Handle(ctx, accounts.CreateUser{Email: "ada@example.com", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	in, err := signIn(oidctest.Ada)
	if err != nil {
		t.Fatalf("sign-in with an account: %v", err)
	}
	if in.Token == "" || in.Session == nil || in.User.Email() != "ada@example.com" || in.User.OIDCSubject() != "id-ada" {
		t.Fatalf("signed in: %+v", in)
	}
	if _, err := rt.App.Queries.AuthenticateSession.Handle(ctx, accounts.AuthenticateSession{Token: in.Token, IP: "127.0.0.1"}); err != nil {
		t.Fatalf("the new session does not authenticate: %v", err)
	}

	if _, err := rt.App.Commands.CreateUser.Handle(ctx, accounts.CreateUser{Email: "bob@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := signIn(oidctest.Bob); !errors.Is(err, accounts.ErrOIDCRefused) || !errors.Is(err, oidc.ErrEmailNotVerified) {
		t.Fatalf("sign-in with an unverified email: %v, want refused", err)
	}
}
