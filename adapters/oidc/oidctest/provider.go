// Package oidctest runs a real OpenID provider on a loopback port for tests: zitadel/oidc's op
// with its example in-memory storage and login page, and a browser that signs in through it.
package oidctest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// Password is every account's password at the provider.
const Password = "verysecure"

// The provider's accounts, by username: Ada's email is verified, Bob's is not.
const (
	Ada = "ada"
	Bob = "bob"
)

// Accounts are the provider's people: subject, email and name of each username.
var Accounts = map[string]struct{ Subject, Email, Name string }{
	Ada: {"id-ada", "ada@example.com", "Ada Lovelace"},
	Bob: {"id-bob", "bob@example.com", "Bob Unverified"},
}

// Options register one confidential client.
type Options struct {
	ClientID     string
	ClientSecret string
	RedirectURL  string
	// ClaimsInIDToken puts the email and profile claims into the ID token too; without it the
	// provider keeps them for the userinfo endpoint (OpenID Connect Core 5.4).
	ClaimsInIDToken bool
}

// Provider is the running provider. While down is set it answers 503 to everything.
type Provider struct {
	Issuer string
	down   atomic.Bool
}

// SetDown makes the provider unavailable (true) or available again.
func (p *Provider) SetDown(down bool) { p.down.Store(down) }

// Start runs a provider until the test ends.
func Start(t testing.TB, o Options) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: "http://" + ln.Addr().String()}
	users := people{}
	for username, a := range Accounts {
		first, last := splitName(a.Name)
		users[a.Subject] = &storage.User{ID: a.Subject, Username: username, Password: Password, FirstName: first, LastName: last,
			Email: a.Email, EmailVerified: username != Bob, PreferredLanguage: language.English}
	}
	clients := map[string]*storage.Client{o.ClientID: storage.WebClient(o.ClientID, o.ClientSecret, o.RedirectURL)}
	var store exampleop.Storage = storage.NewStorageWithClients(users, clients)
	if o.ClaimsInIDToken {
		store = claimsInIDToken{store.(*storage.Storage)}
	}
	router := exampleop.SetupServer(p.Issuer, store, nil, false)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		router.ServeHTTP(w, r)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

func splitName(name string) (first, last string) {
	for i := range name {
		if name[i] == ' ' {
			return name[:i], name[i+1:]
		}
	}
	return name, ""
}

// people is the provider's user store.
type people map[string]*storage.User

func (p people) GetUserByID(id string) *storage.User { return p[id] }
func (p people) GetUserByUsername(name string) *storage.User {
	for _, u := range p {
		if u.Username == name {
			return u
		}
	}
	return nil
}
func (people) ExampleClientID() string { return storage.ServiceUserID }

type claimsInIDToken struct{ *storage.Storage }

func (s claimsInIDToken) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return assertingClient{c}, nil
}

type assertingClient struct{ op.Client }

func (assertingClient) IDTokenUserinfoClaimsAssertion() bool { return true }

var loginIDRe = regexp.MustCompile(`name="id" value="([^"]+)"`)

// SignIn is the browser: it follows authURL to the provider's login form, posts the username
// and Password, and returns the URL the provider then redirects to (the callback, which it does
// not open: it is the first URL outside the issuer's host).
func SignIn(t testing.TB, authURL, username string) *url.URL {
	t.Helper()
	start, err := url.Parse(authURL)
	if err != nil || start.Host == "" {
		t.Fatalf("authorization URL %q", authURL)
	}
	jar, _ := cookiejar.New(nil)
	var callback *url.URL
	browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Host != start.Host {
			callback = r.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(resp)
	m := loginIDRe.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("authorization request: %d, no login form:\n%s", resp.StatusCode, page)
	}
	loginURL := resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	resp, err = browser.PostForm(loginURL.String(), url.Values{"id": {m[1]}, "username": {username}, "password": {Password}})
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(resp)
	if callback == nil {
		t.Fatalf("login did not redirect back to the client: %d %s", resp.StatusCode, page)
	}
	return callback
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
