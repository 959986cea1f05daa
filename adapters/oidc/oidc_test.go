package oidc_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/oidc"
	"github.com/formward/formward/adapters/oidc/oidctest"
)

const (
	clientID     = "formward"
	clientSecret = "client-s3cret"
	// publicURL is never dialled: the test's browser stops at the redirect to the callback.
	publicURL = "http://formward.test"
)

func startProvider(t *testing.T, claimsInIDToken bool) *oidctest.Provider {
	t.Helper()
	return oidctest.Start(t, oidctest.Options{ClientID: clientID, ClientSecret: clientSecret,
		RedirectURL: publicURL + oidc.CallbackPath, ClaimsInIDToken: claimsInIDToken})
}

func newProvider(t *testing.T, issuer string) *oidc.Provider {
	t.Helper()
	p, err := oidc.New(oidc.Config{Issuer: issuer, ClientID: clientID, ClientSecret: clientSecret, PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// signIn signs in at the provider and returns the callback's query.
func signIn(t *testing.T, authURL, username string) url.Values {
	t.Helper()
	cb := oidctest.SignIn(t, authURL, username)
	if cb.Scheme+"://"+cb.Host != publicURL || cb.Path != oidc.CallbackPath {
		t.Fatalf("the provider redirected to %s, not the callback", cb)
	}
	return cb.Query()
}

// The whole flow against a real provider, with the email in the ID token and (the provider's
// default when it also issues an access token) only at the userinfo endpoint.
func TestSignInWithAVerifiedEmail(t *testing.T) {
	for _, tc := range []struct {
		name            string
		claimsInIDToken bool
	}{{"claims at the userinfo endpoint", false}, {"claims in the ID token", true}} {
		t.Run(tc.name, func(t *testing.T) {
			op := startProvider(t, tc.claimsInIDToken)
			p := newProvider(t, op.Issuer)
			verifier := "v3rifier-" + strings.Repeat("x", 40)
			authURL := p.AuthURL("state-1", "nonce-1", verifier)
			u, err := url.Parse(authURL)
			if err != nil || !strings.HasPrefix(authURL, op.Issuer+"/") {
				t.Fatalf("AuthURL %q is not at the issuer", authURL)
			}
			q := u.Query()
			if q.Get("client_id") != clientID || q.Get("redirect_uri") != publicURL+"/app/oidc/callback" ||
				q.Get("scope") != "openid email profile" || q.Get("nonce") != "nonce-1" || q.Get("state") != "state-1" ||
				q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("response_type") != "code" {
				t.Fatalf("authorization request %v", q)
			}
			if strings.Contains(authURL, verifier) {
				t.Fatal("the PKCE verifier left the server in the authorization URL")
			}

			cb := signIn(t, authURL, oidctest.Ada)
			if cb.Get("state") != "state-1" || cb.Get("code") == "" {
				t.Fatalf("callback %v", cb)
			}
			id, err := p.Exchange(context.Background(), cb.Get("code"), verifier, "nonce-1")
			if err != nil {
				t.Fatalf("Exchange: %v", err)
			}
			if id.Subject != "id-ada" || id.Email != "ada@example.com" || id.Name != "Ada Lovelace" {
				t.Fatalf("identity %+v", id)
			}
			// A code is good for one exchange.
			if _, err := p.Exchange(context.Background(), cb.Get("code"), verifier, "nonce-1"); err == nil {
				t.Fatal("a spent code was exchanged again")
			}
		})
	}
}

// PKCE: a code is worthless without the verifier its challenge was made from.
func TestExchangeRefusesAWrongVerifier(t *testing.T) {
	op := startProvider(t, true)
	p := newProvider(t, op.Issuer)
	verifier := strings.Repeat("a", 43)
	cb := signIn(t, p.AuthURL("s", "n", verifier), oidctest.Ada)
	if _, err := p.Exchange(context.Background(), cb.Get("code"), strings.Repeat("b", 43), "n"); err == nil {
		t.Fatal("a code was exchanged with another verifier")
	}
}

func TestExchangeRefusesAnotherSignInsNonce(t *testing.T) {
	op := startProvider(t, true)
	p := newProvider(t, op.Issuer)
	verifier := strings.Repeat("c", 43)
	cb := signIn(t, p.AuthURL("s", "nonce-of-this-sign-in", verifier), oidctest.Ada)
	_, err := p.Exchange(context.Background(), cb.Get("code"), verifier, "nonce-of-another")
	if !errors.Is(err, oidc.ErrNonce) {
		t.Fatalf("Exchange with another nonce: %v, want ErrNonce", err)
	}
}

func TestExchangeRefusesAnUnverifiedEmail(t *testing.T) {
	for _, claimsInIDToken := range []bool{false, true} {
		op := startProvider(t, claimsInIDToken)
		p := newProvider(t, op.Issuer)
		verifier := strings.Repeat("d", 43)
		cb := signIn(t, p.AuthURL("s", "n", verifier), oidctest.Bob)
		id, err := p.Exchange(context.Background(), cb.Get("code"), verifier, "n")
		if !errors.Is(err, oidc.ErrEmailNotVerified) {
			t.Fatalf("claims in ID token %v: Exchange for an unverified email: %+v, %v; want ErrEmailNotVerified", claimsInIDToken, id, err)
		}
	}
}

// The code is redeemed with the client's credentials: a wrong client secret gets nothing.
func TestExchangeRefusesAWrongClientSecret(t *testing.T) {
	op := startProvider(t, true)
	other, err := oidc.New(oidc.Config{Issuer: op.Issuer, ClientID: clientID, ClientSecret: "wrong", PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	verifier := strings.Repeat("e", 43)
	cb := signIn(t, other.AuthURL("s", "n", verifier), oidctest.Ada)
	if _, err := other.Exchange(context.Background(), cb.Get("code"), verifier, "n"); err == nil {
		t.Fatal("a code was exchanged with a wrong client secret")
	}
}

// Discovery happens on first use and is retried until it succeeds: a provider that is down
// when the server starts does not stop it, and sign-in works once the provider is back.
func TestDiscoveryIsLazyAndRetried(t *testing.T) {
	op := startProvider(t, true)
	op.SetDown(true)
	p := newProvider(t, op.Issuer)
	if u := p.AuthURL("s", "n", strings.Repeat("f", 43)); u != "" {
		t.Fatalf("AuthURL while the provider is down = %q", u)
	}
	if _, err := p.Exchange(context.Background(), "code", "verifier", "n"); !errors.Is(err, oidc.ErrUnavailable) {
		t.Fatalf("Exchange while the provider is down: %v, want ErrUnavailable", err)
	}
	op.SetDown(false)
	verifier := strings.Repeat("f", 43)
	authURL := p.AuthURL("s", "n", verifier)
	if authURL == "" {
		t.Fatal("AuthURL stays empty after the provider came back")
	}
	cb := signIn(t, authURL, oidctest.Ada)
	if id, err := p.Exchange(context.Background(), cb.Get("code"), verifier, "n"); err != nil || id.Email != "ada@example.com" {
		t.Fatalf("Exchange after the provider came back: %+v, %v", id, err)
	}
}

func TestNewChecksTheConfiguration(t *testing.T) {
	for _, cfg := range []oidc.Config{
		{ClientID: clientID, ClientSecret: clientSecret, PublicURL: publicURL},
		{Issuer: "https://id.example", ClientSecret: clientSecret, PublicURL: publicURL},
		{Issuer: "https://id.example", ClientID: clientID, PublicURL: publicURL},
		{Issuer: "id.example", ClientID: clientID, ClientSecret: clientSecret, PublicURL: publicURL},
		{Issuer: "https://id.example", ClientID: clientID, ClientSecret: clientSecret, PublicURL: publicURL, CAFile: "/nonexistent.pem"},
	} {
		if _, err := oidc.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}
