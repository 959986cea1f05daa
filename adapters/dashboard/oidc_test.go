package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/oidc"
	"github.com/formward/formward/adapters/oidc/oidctest"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
)

// TestSingleSignOn runs the sign-in through a real OpenID provider on a loopback port: the
// button, the state kept in a sealed HttpOnly cookie, the callback; a person without an account
// is told to ask for an invitation, one with an account gets a session; a callback whose state
// does not match the cookie is refused.
func TestSingleSignOn(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	public := "http://" + srv.Listener.Addr().String()
	provider := oidctest.Start(t, oidctest.Options{ClientID: "formward", ClientSecret: "s3cret", RedirectURL: public + "/app/oidc/callback"})
	h := newHarnessWith(t, persistencetest.SQLite(t, nil), public, srv, func(d *application.Deps, o *dashboard.Options) {
		p, err := oidc.New(oidc.Config{Issuer: provider.Issuer, ClientID: "formward", ClientSecret: "s3cret", PublicURL: public})
		if err != nil {
			t.Fatal(err)
		}
		d.OIDC, o.SSO = p, true
	})
	h.owner()

	signIn := func(b *browser) page {
		t.Helper()
		start := b.get("/app/oidc/start")
		loc := start.Header.Get("Location")
		if start.StatusCode != http.StatusFound || !strings.HasPrefix(loc, provider.Issuer) {
			t.Fatalf("start: %d to %q", start.StatusCode, loc)
		}
		if c := cookieOf(start.Response, "formward_oidc"); c == nil || !c.HttpOnly || c.MaxAge <= 0 || strings.Contains(c.Value, mustURL(t, loc).Query().Get("state")) {
			t.Fatalf("the state cookie: %+v", c)
		}
		cb := oidctest.SignIn(t, loc, oidctest.Ada)
		return b.get(cb.RequestURI())
	}

	b := h.browser()
	if !strings.Contains(b.get("/app/login").body, `href="/app/oidc/start"`) {
		t.Fatal("no Sign in with SSO button")
	}
	refused := signIn(b).expect(t, http.StatusForbidden)
	if !strings.Contains(text(refused.body), "invitation") {
		t.Fatalf("a person without an account: %s", text(refused.body))
	}
	if _, err := h.app.Commands.CreateUser.Handle(context.Background(), accounts.CreateUser{Email: oidctest.Accounts[oidctest.Ada].Email, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	in := signIn(b).redirectsTo(t, "/app")
	if cookieOf(in.Response, dashboard.SessionCookie) == nil {
		t.Fatal("no session after single sign-on")
	}
	b.get("/app/forms").expect(t, http.StatusOK)

	// A callback that does not carry the state of this browser's cookie is refused.
	other := h.browser()
	start := other.get("/app/oidc/start")
	cb := oidctest.SignIn(t, start.Header.Get("Location"), oidctest.Ada)
	q := cb.Query()
	q.Set("state", "forged")
	other.get("/app/oidc/callback?"+q.Encode()).expect(t, http.StatusBadRequest)
	// And a browser without the cookie cannot use someone else's callback.
	h.browser().get(cb.RequestURI()).expect(t, http.StatusBadRequest)
}
