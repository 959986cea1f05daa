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

// An exchange fails unless everything matches the sign-in: PKCE makes a code worthless without
// the verifier its challenge was made from, the nonce must be this sign-in's, the email must be
// verified, and the code is redeemed with the client's credentials.
func TestExchangeRefuses(t *testing.T) {
	signInVerifier, signInNonce := strings.Repeat("a", 43), "nonce-of-this-sign-in"
	for _, tc := range []struct {
		name            string
		claimsInIDToken bool
		user            string
		secret          string // the client secret formward has
		verifier, nonce string // what formward exchanges the code with
		want            error  // nil: any error
	}{
		{"a wrong verifier", true, oidctest.Ada, clientSecret, strings.Repeat("b", 43), signInNonce, nil},
		{"another sign-in's nonce", true, oidctest.Ada, clientSecret, signInVerifier, "nonce-of-another", oidc.ErrNonce},
		{"an unverified email at the userinfo endpoint", false, oidctest.Bob, clientSecret, signInVerifier, signInNonce, oidc.ErrEmailNotVerified},
		{"an unverified email in the ID token", true, oidctest.Bob, clientSecret, signInVerifier, signInNonce, oidc.ErrEmailNotVerified},
		{"a wrong client secret", true, oidctest.Ada, "wrong", signInVerifier, signInNonce, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := startProvider(t, tc.claimsInIDToken)
			p, err := oidc.New(oidc.Config{Issuer: op.Issuer, ClientID: clientID, ClientSecret: tc.secret, PublicURL: publicURL})
			if err != nil {
				t.Fatal(err)
			}
			cb := signIn(t, p.AuthURL("s", signInNonce, signInVerifier), tc.user)
			id, err := p.Exchange(context.Background(), cb.Get("code"), tc.verifier, tc.nonce)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Exchange: %+v, %v; want a failure (%v)", id, err, tc.want)
			}
		})
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
