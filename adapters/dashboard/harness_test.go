package dashboard_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
)

// harness is the dashboard through a real gin engine over real persistence.
type harness struct {
	t      *testing.T
	app    *application.Application
	server *httptest.Server
}

func newHarness(t *testing.T, db *persistence.DB, publicURL string) *harness {
	t.Helper()
	return newHarnessWith(t, db, publicURL, httptest.NewUnstartedServer(nil), nil)
}

// newHarnessWith serves on srv (not started yet) and lets configure change the use cases' ports
// and the dashboard's options before they are built.
func newHarnessWith(t *testing.T, db *persistence.DB, publicURL string, srv *httptest.Server, configure func(*application.Deps, *dashboard.Options)) *harness {
	t.Helper()
	return newHarnessDash(t, db, publicURL, srv, configure, nil)
}

// newHarnessDash is newHarnessWith that also lets dash change the dashboard's own dependencies
// (its clock, its file links) before it is built.
func newHarnessDash(t *testing.T, db *persistence.DB, publicURL string, srv *httptest.Server, configure func(*application.Deps, *dashboard.Options),
	dash func(*dashboard.Deps)) *harness {
	t.Helper()
	cipher := persistencetest.Cipher()
	clock := system.Clock{}
	submissions := persistence.NewSubmissionRepository(db, cipher, persistencetest.BlindIndex())
	deps := application.Deps{
		Workspaces:  persistence.NewWorkspaceRepository(db),
		Keys:        persistence.NewAPIKeyRepository(db),
		Forms:       persistence.NewFormRepository(db, cipher),
		Submissions: submissions,
		Scanner:     submissions,
		Stats:       persistence.NewFormStatsRepository(db),
		IDs:         system.NewIDs(),
		Clock:       clock,
		IPHasher:    crypto.NewIPHasher([]byte("test ip secret")),
		Users:       persistence.NewUserRepository(db),
		Memberships: persistence.NewMembershipRepository(db),
		Sessions:    persistence.NewSessionRepository(db),
		Tokens:      persistence.NewUserTokenRepository(db),
		Flashes:     persistence.NewFlashRepository(db),
		Columns:     persistence.NewResponseColumnsRepository(db),
		Audit:       persistence.NewAuditLog(db),
		Throttle:    persistence.NewSignInThrottle(db),
		// Cheap argon2id parameters: the tests check behaviour, not the cost.
		Passwords:   crypto.NewPasswordHasherWithParams(crypto.Argon2Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}),
		TOTP:        crypto.TOTP{},
		Cipher:      cipher,
		Invitations: persistence.NewInvitationRepository(db),
		AccountMail: persistence.NewAccountMailOutbox(db),
		Usage:       persistence.NewUsageReader(db),
	}
	opts := dashboard.Options{PublicURL: publicURL, CookieKey: []byte("0123456789abcdef0123456789abcdef")}
	if configure != nil {
		configure(&deps, &opts)
	}
	app := application.New(deps, application.Settings{PublicURL: publicURL})
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	dd := dashboard.Deps{App: app, Clock: clock, Logger: zap.NewNop(), Preview: web.Preview}
	if dash != nil {
		dash(&dd)
	}
	d, err := dashboard.New(dd, opts)
	if err != nil {
		t.Fatal(err)
	}
	d.Mount(engine)
	srv.Config.Handler = engine
	srv.Start()
	t.Cleanup(srv.Close)
	return &harness{t: t, app: app, server: srv}
}

// browser is one person's cookie jar; it does not follow redirects, so tests see them.
type browser struct {
	h      *harness
	client *http.Client
}

func (h *harness) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{h: h, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	*http.Response
	body string
}

func (b *browser) do(method, path string, form url.Values, headers ...string) page {
	b.h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.h.server.URL+path, body)
	if err != nil {
		b.h.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{Response: resp, body: string(raw)}
}

func (b *browser) get(path string) page { return b.do(http.MethodGet, path, nil) }

func (b *browser) post(path string, form url.Values, headers ...string) page {
	return b.do(http.MethodPost, path, form, headers...)
}

// postFollow posts, wants 303 See Other, and returns the page it leads to (wanted 200).
func (b *browser) postFollow(path string, form url.Values) page {
	b.h.t.Helper()
	p := b.post(path, form)
	if p.StatusCode != http.StatusSeeOther || p.Header.Get("Location") == "" {
		b.h.t.Fatalf("POST %s: %d to %q, want 303 See Other\n%s", path, p.StatusCode, p.Header.Get("Location"), text(p.body))
	}
	return b.get(p.Header.Get("Location")).expect(b.h.t, http.StatusOK)
}

func (p page) expect(t *testing.T, status int) page {
	t.Helper()
	if p.StatusCode != status {
		t.Fatalf("%s %s: %d, want %d\n%s", p.Request.Method, p.Request.URL.Path, p.StatusCode, status, text(p.body))
	}
	return p
}

func (p page) redirectsTo(t *testing.T, prefix string) page {
	t.Helper()
	if loc := p.Header.Get("Location"); p.StatusCode/100 != 3 || !strings.HasPrefix(loc, prefix) {
		t.Fatalf("%s %s: %d to %q, want a redirect to %s\n%s", p.Request.Method, p.Request.URL.Path, p.StatusCode, loc, prefix, text(p.body))
	}
	return p
}

var tags = regexp.MustCompile(`<[^>]*>|\s+`)

// text is a page's visible words, for messages and assertions.
func text(body string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(body, " "))), " ")
}

func cookieOf(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// owner sets up the first owner through the setup page and returns that person's browser.
func (h *harness) owner() *browser {
	h.t.Helper()
	token, issued, err := h.app.Commands.IssueSetupToken.Handle(context.Background(), accounts.IssueSetupToken{})
	if err != nil || !issued {
		h.t.Fatalf("issue setup token: %v (issued %v)", err, issued)
	}
	b := h.browser()
	b.get("/app/setup?token="+url.QueryEscape(token)).expect(h.t, http.StatusOK)
	b.post("/app/setup", url.Values{"token": {token}, "email": {ownerEmail}, "name": {"Ada Lovelace"},
		"password": {ownerPassword}, "workspace_name": {"Acme Research"}}).redirectsTo(h.t, "/app/forms")
	return b
}

const (
	ownerEmail    = "ada@example.org"
	ownerPassword = "analytical-engine-1843"
)

var acceptLink = regexp.MustCompile(`/app/invitations/[A-Za-z0-9_\-]+`)

// member invites email with role and accepts in a new browser, which it returns.
func (h *harness) member(owner *browser, email, role string) *browser {
	h.t.Helper()
	p := owner.postFollow("/app/settings/invitations", url.Values{"email": {email}, "role": {role}})
	link := acceptLink.FindString(p.body)
	if link == "" {
		h.t.Fatalf("no accept link after inviting: %s", text(p.body))
	}
	b := h.browser()
	b.get(link).expect(h.t, http.StatusOK)
	b.post(link, url.Values{"name": {"Grace Hopper"}, "password": {"compiler-cobol-1959"}}).redirectsTo(h.t, "/app/forms")
	return b
}
