package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/workspace"
)

// TestSetupSignInAndSessionCookie walks the first owner's way in on both databases: the setup
// page, the shell, sign-out, sign-in with a rotated session; the cookie's flags are checked.
func TestSetupSignInAndSessionCookie(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		first := b.client.Jar.Cookies(mustURL(t, h.server.URL+"/app"))
		if len(first) == 0 {
			t.Fatal("no session cookie after setup")
		}
		forms := b.get("/app/forms").expect(t, http.StatusOK)
		if !strings.Contains(forms.body, "Acme Research") || !strings.Contains(forms.body, `aria-current="page"`) {
			t.Fatalf("the shell does not show the workspace and the current page: %s", text(forms.body))
		}

		b.post("/app/logout", nil).redirectsTo(t, "/app/login")
		b.get("/app/forms").redirectsTo(t, "/app/login")

		p := b.post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}, "next": {"/app/settings/billing"}})
		p.redirectsTo(t, "/app/settings/billing")
		c := cookieOf(p.Response, dashboard.SessionCookie)
		if c == nil {
			t.Fatal("sign-in set no session cookie")
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/app" || c.Secure {
			t.Fatalf("session cookie flags: HttpOnly=%v SameSite=%v Path=%q Secure=%v (http public URL: not Secure)", c.HttpOnly, c.SameSite, c.Path, c.Secure)
		}
		if c.Value == first[0].Value {
			t.Fatal("the session token was not rotated at sign-in")
		}
		b.get("/app/settings/billing").expect(t, http.StatusOK)
	})
}

// TestSessionCookieSecureBehindHTTPS: an https public URL makes the cookie Secure.
func TestSessionCookieSecureBehindHTTPS(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "https://forms.example.com")
	h.owner()
	p := h.browser().post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}})
	p.redirectsTo(t, "/app")
	if c := cookieOf(p.Response, dashboard.SessionCookie); c == nil || !c.Secure || !c.HttpOnly {
		t.Fatalf("session cookie behind https: %+v", c)
	}
}

// TestWrongPasswordAndUnknownEmailGetOneAnswer: the same status and message for both, and the
// throttled page with Retry-After after ten failures.
func TestWrongPasswordAndUnknownEmailGetOneAnswer(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	h.owner()
	b := h.browser()
	wrong := b.post("/app/login", url.Values{"email": {ownerEmail}, "password": {"not the password at all"}}).expect(t, http.StatusUnauthorized)
	unknown := b.post("/app/login", url.Values{"email": {"nobody@example.org"}, "password": {"not the password at all"}}).expect(t, http.StatusUnauthorized)
	alert := regexp.MustCompile(`role="alert"[^>]*>(.*?)</div>`)
	w, u := alert.FindStringSubmatch(wrong.body), alert.FindStringSubmatch(unknown.body)
	if w == nil || u == nil || w[1] != u[1] {
		t.Fatalf("wrong password says %q, unknown email %q", w, u)
	}
	if cookieOf(wrong.Response, dashboard.SessionCookie) != nil {
		t.Fatal("a failed sign-in set a session cookie")
	}
	var last page
	for i := 0; i < 10; i++ {
		last = b.post("/app/login", url.Values{"email": {ownerEmail}, "password": {"still not the password"}})
	}
	if last.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 12 failures: %d, want 429\n%s", last.StatusCode, text(last.body))
	}
	if s, err := strconv.Atoi(last.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("Retry-After %q", last.Header.Get("Retry-After"))
	}
	// The right password is refused too while the account is throttled.
	b.post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}).expect(t, http.StatusTooManyRequests)
}

// TestPublicOriginIsTrustedInCanonicalForm: behind a proxy that rewrites Host, a post from the
// configured public URL's origin is accepted however FORMWARD_PUBLIC_URL spells it (the
// browser sends the canonical origin); another port of the same host is another site.
func TestPublicOriginIsTrustedInCanonicalForm(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "HTTP://Forms.Example:80/")
	owner := h.owner()
	created := owner.postFollow("/app/settings/api-keys", url.Values{"name": {"CI"}, "scope": {"read-write"}})
	id := keyID.FindStringSubmatch(created.body)
	if id == nil {
		t.Fatalf("no revoke link for the new key: %s", text(created.body))
	}
	owner.post("/app/settings/api-keys/"+id[1]+"/revoke", url.Values{}, "Origin", "http://forms.example:8080").expect(t, http.StatusForbidden)
	owner.post("/app/settings/api-keys/"+id[1]+"/revoke", url.Values{}, "Origin", "http://forms.example").redirectsTo(t, "/app/settings/api-keys")
}

// TestCrossOriginPostsAreRefused: a state-changing request from another site does nothing.
func TestCrossOriginPostsAreRefused(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	created := owner.postFollow("/app/settings/api-keys", url.Values{"name": {"CI"}, "scope": {"read-write"}})
	id := keyID.FindStringSubmatch(created.body)
	if id == nil {
		t.Fatalf("no revoke link for the new key: %s", text(created.body))
	}
	for _, headers := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://evil.example"},
	} {
		p := owner.post("/app/settings/api-keys/"+id[1]+"/revoke", url.Values{}, headers...).expect(t, http.StatusForbidden)
		if !strings.Contains(text(p.body), "came from another site") {
			t.Fatalf("refusal page: %s", text(p.body))
		}
		owner.post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}, headers...).expect(t, http.StatusForbidden)
	}
	token := newKey.FindStringSubmatch(created.body)
	if _, err := h.app.Queries.Authenticate.Handle(context.Background(), accounts.Authenticate{Token: token[1]}); err != nil {
		t.Fatalf("the key was revoked by a cross-origin request: %v", err)
	}
	// The same request from the dashboard's own origin works.
	owner.post("/app/settings/api-keys/"+id[1]+"/revoke", url.Values{}, "Sec-Fetch-Site", "same-origin").redirectsTo(t, "/app/settings/api-keys")
	if _, err := h.app.Queries.Authenticate.Handle(context.Background(), accounts.Authenticate{Token: token[1]}); err == nil {
		t.Fatal("the key still works after revoking it")
	}
}

var (
	keyID  = regexp.MustCompile(`/app/settings/api-keys/(key_[A-Za-z0-9_\-]+)/revoke`)
	newKey = regexp.MustCompile(`<output id="new-key"[^>]*>([^<]+)</output>`)
)

// TestViewerCannotRevokeKeys: a viewer sees no account settings, and the server refuses the
// requests anyway.
func TestViewerCannotRevokeKeys(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	created := owner.postFollow("/app/settings/api-keys", url.Values{"name": {"CI"}, "scope": {"read-only"}})
	if cc := created.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("the page with the new key has Cache-Control %q, want no-store", cc)
	}
	id, token := keyID.FindStringSubmatch(created.body), newKey.FindStringSubmatch(created.body)
	if id == nil || token == nil {
		t.Fatalf("the new key page: %s", text(created.body))
	}
	if strings.Contains(owner.get("/app/settings/api-keys").body, token[1]) {
		t.Fatal("the full key is shown again")
	}

	viewer := h.member(owner, "grace@example.org", "viewer")
	forms := viewer.get("/app/forms").expect(t, http.StatusOK)
	if strings.Contains(forms.body, "/app/settings/api-keys") || strings.Contains(forms.body, "/app/settings/members") {
		t.Fatalf("a viewer's navigation links to account settings: %s", text(forms.body))
	}
	viewer.get("/app/settings/api-keys").expect(t, http.StatusForbidden)
	viewer.get("/app/settings/api-keys/"+id[1]+"/revoke").expect(t, http.StatusForbidden)
	viewer.post("/app/settings/api-keys/"+id[1]+"/revoke", url.Values{}).expect(t, http.StatusForbidden)
	viewer.post("/app/settings/api-keys", url.Values{"name": {"mine"}, "scope": {"admin"}}).expect(t, http.StatusForbidden)
	if _, err := h.app.Queries.Authenticate.Handle(context.Background(), accounts.Authenticate{Token: token[1]}); err != nil {
		t.Fatalf("the viewer's refused request revoked the key: %v", err)
	}
}

// TestSecurityHeaders: CSP without inline scripts, no framing, a referrer policy; / goes to /app;
// a signed-out visit goes to the sign-in page and comes back.
func TestSecurityHeaders(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	b := h.browser()
	p := b.get("/app/login").expect(t, http.StatusOK)
	csp := p.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows unsafe code: %q", csp)
	}
	if strings.Contains(p.body, "<script>") || strings.Contains(p.body, " style=") || strings.Contains(p.body, " onclick=") {
		t.Error("the page has inline script or style, which the CSP would block")
	}
	if p.Header.Get("X-Frame-Options") != "DENY" || p.Header.Get("Referrer-Policy") == "" || p.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers: %v", p.Header)
	}
	b.get("/").redirectsTo(t, "/app")
	b.get("/app/settings/members").redirectsTo(t, "/app/login?next=%2Fapp%2Fsettings%2Fmembers")
	css := regexp.MustCompile(`/app/assets/app\.[0-9a-f]{10}\.css`).FindString(p.body)
	if css == "" {
		t.Fatal("no hashed stylesheet link")
	}
	a := b.get(css).expect(t, http.StatusOK)
	if !strings.Contains(a.Header.Get("Cache-Control"), "immutable") || !strings.Contains(a.body, "prefers-color-scheme: dark") {
		t.Fatalf("stylesheet: %v", a.Header)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestTwoFactorSetupAndSignIn: the profile turns two-step verification on (secret and QR
// shown, recovery codes shown once, neither cached); sign-in then asks for a code, refuses a
// wrong one and accepts a recovery code.
func TestTwoFactorSetupAndSignIn(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	setup := owner.postFollow("/app/settings/profile/two-factor", url.Values{})
	if setup.Header.Get("Cache-Control") != "no-store" || !strings.Contains(setup.body, `src="data:image/png;base64,`) {
		t.Fatalf("two-factor setup page: %v %s", setup.Header, text(setup.body))
	}
	secret := regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`).FindStringSubmatch(setup.body)
	if secret == nil {
		t.Fatalf("no secret on the setup page: %s", text(setup.body))
	}
	owner.post("/app/settings/profile/two-factor/confirm", url.Values{"code": {"000000"}}).expect(t, http.StatusUnprocessableEntity)
	code, err := totp.GenerateCode(secret[1], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	done := owner.postFollow("/app/settings/profile/two-factor/confirm", url.Values{"code": {code}})
	codes := regexp.MustCompile(`<li>([A-Za-z0-9\-]{6,})</li>`).FindAllStringSubmatch(done.body, -1)
	if len(codes) != 10 || done.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("recovery codes: %d shown, Cache-Control %q: %s", len(codes), done.Header.Get("Cache-Control"), text(done.body))
	}
	if strings.Contains(owner.get("/app/settings/profile").body, codes[0][1]) {
		t.Fatal("the recovery codes are shown again")
	}
	// A reload of the page they were shown on says they were shown once.
	if again := owner.get(done.Request.URL.RequestURI()).expect(t, http.StatusOK); strings.Contains(again.body, codes[0][1]) ||
		!strings.Contains(text(again.body), "were shown once") {
		t.Fatalf("reload after the recovery codes: %s", text(again.body))
	}
	// The setup page is gone with the pending setup.
	owner.get("/app/settings/profile/two-factor").redirectsTo(t, "/app/settings/profile")

	b := h.browser()
	posted := b.post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}).redirectsTo(t, "/app/login/verify")
	step := b.get("/app/login/verify").expect(t, http.StatusOK)
	if cookieOf(posted.Response, dashboard.SessionCookie) != nil || !strings.Contains(step.body, `action="/app/login/verify"`) ||
		step.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the password step must ask for the code without a session: %s", text(step.body))
	}
	b.post("/app/login/verify", url.Values{"code": {"123456"}}).expect(t, http.StatusUnauthorized)
	p := b.post("/app/login/verify", url.Values{"code": {codes[3][1]}}).redirectsTo(t, "/app")
	if cookieOf(p.Response, dashboard.SessionCookie) == nil {
		t.Fatal("no session after the recovery code")
	}
	// A browser that skipped the password step cannot use the code step.
	h.browser().post("/app/login/verify", url.Values{"code": {codes[4][1]}}).expect(t, http.StatusBadRequest)
	h.browser().get("/app/login/verify").redirectsTo(t, "/app/login")
}

// TestMembersBillingAndAuditLog: a role change, the last owner kept (the refusal shown next to
// the control), a plan change, cancellation with its deletion date and reactivation, and the
// audit log with those events, filtered by action.
func TestMembersBillingAndAuditLog(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	h.member(owner, "grace@example.org", "editor")
	members := owner.get("/app/settings/members").expect(t, http.StatusOK)
	ids := regexp.MustCompile(`/app/settings/members/(mem_[A-Za-z0-9_\-]+)/role`).FindAllStringSubmatch(members.body, -1)
	if len(ids) != 2 {
		t.Fatalf("role controls: %v", ids)
	}
	ownerID, graceID := ids[0][1], ids[1][1]
	owner.post("/app/settings/members/"+graceID+"/role", url.Values{"role": {"viewer"}}).redirectsTo(t, "/app/settings/members")
	refused := owner.post("/app/settings/members/"+ownerID+"/role", url.Values{"role": {"admin"}}).expect(t, http.StatusConflict)
	if !strings.Contains(text(refused.body), "at least one owner") {
		t.Fatalf("last owner refusal: %s", text(refused.body))
	}

	owner.post("/app/settings/billing", url.Values{"section": {"plan"}, "plan": {"growth"}}).redirectsTo(t, "/app/settings/billing")
	owner.post("/app/settings/billing", url.Values{"section": {"plan"}, "plan": {"platinum"}}).expect(t, http.StatusUnprocessableEntity)
	owner.post("/app/settings/billing/cancel", url.Values{}).redirectsTo(t, "/app/settings/billing")
	billing := text(owner.get("/app/settings/billing").expect(t, http.StatusOK).body)
	deletion := time.Now().UTC().Add(90 * 24 * time.Hour).Format("2 Jan 2006")
	if !strings.Contains(billing, "Growth") || !strings.Contains(billing, "will be deleted on "+deletion) {
		t.Fatalf("billing after cancelling (want deletion on %s): %s", deletion, billing)
	}
	owner.post("/app/settings/billing/reactivate", url.Values{}).redirectsTo(t, "/app/settings/billing")
	if strings.Contains(text(owner.get("/app/settings/billing").body), "This workspace is cancelled") {
		t.Fatal("still cancelled after reactivating")
	}

	log := text(owner.get("/app/settings/audit-log").expect(t, http.StatusOK).body)
	for _, action := range []string{"member.invited", "member.joined", "member.role_changed", "workspace.updated", "user.signed_in"} {
		if !strings.Contains(log, action) {
			t.Errorf("the audit log lacks %s: %s", action, log)
		}
	}
	filtered := owner.get("/app/settings/audit-log?action=member.role_changed").expect(t, http.StatusOK).body
	rows := regexp.MustCompile(`(?s)<tr>\s*<td data-label="Time">.*?</tr>`).FindAllString(filtered, -1)
	if len(rows) != 1 || !strings.Contains(rows[0], "member.role_changed") {
		t.Fatalf("filtered audit log: %d rows", len(rows))
	}
}

// TestPasswordLinksAndChange: "forgot password" answers alike for any address; a set-password
// link works once and signs every session out; the profile changes the password, refusing a
// wrong current one next to its field.
func TestPasswordLinksAndChange(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	known := text(h.browser().postFollow("/app/forgot-password", url.Values{"email": {ownerEmail}}).body)
	unknown := text(h.browser().postFollow("/app/forgot-password", url.Values{"email": {"nobody@example.org"}}).body)
	if known != unknown || !strings.Contains(known, "If an account exists") {
		t.Fatalf("forgot password answers differ:\n%s\n%s", known, unknown)
	}

	created, err := h.app.Commands.CreateUser.Handle(context.Background(), accounts.CreateUser{Email: "linus@example.org", Name: "Linus", Role: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	link := "/app/reset-password?token=" + url.QueryEscape(created.SetPasswordToken)
	if p := b.get(link).expect(t, http.StatusOK); p.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the set-password page is cacheable: %q", p.Header.Get("Cache-Control"))
	}
	short := b.post("/app/reset-password", url.Values{"token": {created.SetPasswordToken}, "password": {"short"}}).expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(short.body, `aria-invalid="true"`) {
		t.Fatalf("a short password is not marked next to its field: %s", text(short.body))
	}
	b.post("/app/reset-password", url.Values{"token": {created.SetPasswordToken}, "password": {"penguin-kernel-1991"}}).redirectsTo(t, "/app/login")
	b.post("/app/reset-password", url.Values{"token": {created.SetPasswordToken}, "password": {"penguin-kernel-1992"}}).expect(t, http.StatusNotFound)
	b.post("/app/login", url.Values{"email": {"linus@example.org"}, "password": {"penguin-kernel-1991"}}).redirectsTo(t, "/app")

	wrong := owner.post("/app/settings/profile/password", url.Values{"current": {"not my password"}, "new": {"difference-engine-1822"}}).expect(t, http.StatusUnprocessableEntity)
	if !regexp.MustCompile(`id="f-current"[^>]*aria-invalid="true"`).MatchString(wrong.body) {
		t.Fatalf("wrong current password: %s", text(wrong.body))
	}
	owner.post("/app/settings/profile/password", url.Values{"current": {ownerPassword}, "new": {"difference-engine-1822"}}).redirectsTo(t, "/app/settings/profile")
	owner.get("/app/settings/profile").expect(t, http.StatusOK)
	h.browser().post("/app/login", url.Values{"email": {ownerEmail}, "password": {"difference-engine-1822"}}).redirectsTo(t, "/app")
}

// TestSignedInPersonAcceptsAndSwitchesWorkspaces: a signed-in person accepts an invitation to
// a second workspace with one click, then the header's switcher moves between the two.
func TestSignedInPersonAcceptsAndSwitchesWorkspaces(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	ctx := context.Background()
	other, err := h.app.Commands.CreateWorkspace.Handle(ctx, workspace.CreateWorkspace{Name: "Side Project"})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := h.app.Commands.InviteMember.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(other.ID())),
		accounts.InviteMember{Email: ownerEmail, Role: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	link := acceptLink.FindString(inv.AcceptURL)
	page := owner.get(link).expect(t, http.StatusOK)
	if !strings.Contains(text(page.body), "You are signed in as "+ownerEmail) || strings.Contains(page.body, `name="password"`) {
		t.Fatalf("the accept page for a signed-in person: %s", text(page.body))
	}
	owner.post(link, url.Values{}).redirectsTo(t, "/app/forms")
	forms := owner.get("/app/forms").expect(t, http.StatusOK)
	if !strings.Contains(forms.body, `action="/app/workspaces/switch"`) || !strings.Contains(forms.body, other.ID()) {
		t.Fatalf("no workspace switcher with the second workspace: %s", text(forms.body))
	}
	owner.post("/app/workspaces/switch", url.Values{"workspace_id": {other.ID()}}).redirectsTo(t, "/app/forms")
	now := owner.get("/app/forms").expect(t, http.StatusOK).body
	if !regexp.MustCompile(`<option value="` + other.ID() + `" selected>`).MatchString(now) {
		t.Fatalf("the switcher does not show the second workspace as current: %s", text(now))
	}
	// A viewer there: no account settings in the navigation, and the pages refuse.
	if strings.Contains(now, `href="/app/settings/billing"`) {
		t.Fatal("a viewer's navigation links to billing")
	}
	owner.get("/app/settings/billing").expect(t, http.StatusForbidden)
	owner.post("/app/workspaces/switch", url.Values{"workspace_id": {"wsp_notmine"}}).expect(t, http.StatusForbidden)
}

// TestAuditLogPages: 25 events a page, newest first, and an "Older" link to the rest that keeps
// the filter.
func TestAuditLogPages(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	for i := 0; i < 27; i++ {
		owner.postFollow("/app/settings/api-keys", url.Values{"name": {"key " + strconv.Itoa(i)}, "scope": {"read-only"}})
	}
	rows := regexp.MustCompile(`(?s)<tr>\s*<td data-label="Time">.*?</tr>`)
	first := owner.get("/app/settings/audit-log?action=api_key.created").expect(t, http.StatusOK).body
	if n := len(rows.FindAllString(first, -1)); n != 25 {
		t.Fatalf("first page: %d rows, want 25", n)
	}
	if !strings.Contains(first, "name: key 26") || strings.Contains(first, "name: key 1;") {
		t.Fatal("the first page is not the newest events")
	}
	older := regexp.MustCompile(`href="(/app/settings/audit-log\?[^"]+)" rel="next"`).FindStringSubmatch(first)
	if older == nil {
		t.Fatal("no link to older events")
	}
	second := owner.get(html.UnescapeString(older[1])).expect(t, http.StatusOK).body
	got := rows.FindAllString(second, -1)
	if len(got) != 2 || !strings.Contains(second, "name: key 0") || strings.Contains(second, `rel="next"`) {
		t.Fatalf("second page: %d rows: %s", len(got), text(second))
	}
}
