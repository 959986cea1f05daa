package e2e_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/test/testkit"
)

// setupLink is the first-run link `formward serve` logs while no account exists.
var setupLink = regexp.MustCompile(`https?://[^\s"\\]+/app/setup\?token=[A-Za-z0-9_\-]+`)

// TestBrowserDashboard walks the dashboard as its first owner would, in headless Chromium
// (test/browser/dashboard.spec.mjs): the setup link from the serve log, sign-out and sign-in
// (a wrong password first), an API key created, used against /v1/forms, revoked and refused
// with 401; a member invited and accepted in a second browser, their role changed; the plan
// changed, the workspace cancelled and reactivated; the audit log showing those events.
// axe-core runs on every page at desktop width and at 375 px, with zero violations; the
// screenshots are saved in test/artifacts/dashboard-*.png.
func TestBrowserDashboard(t *testing.T) {
	t.Parallel()
	// The walk is long (about twenty pages, each checked twice by axe-core, and real argon2id
	// password hashing at every sign-in): it gets more time than the other specs.
	newInstance(t, "", "").walkAsFirstOwner(t, 8*time.Minute, "dashboard.spec.mjs", "dashboard-*.png")
}

// TestFormsBuilderBrowser builds a form with all nine field types in the dashboard's builder in
// headless Chromium (test/browser/forms_builder.spec.mjs): one field dragged with the mouse,
// others moved with the keyboard, published, then submitted with a file by a respondent in a
// second browser context. axe-core runs on every page at desktop width and at 375 px with zero
// violations; screenshots are saved in test/artifacts/forms-builder-*.png.
func TestFormsBuilderBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 6*time.Minute, "forms_builder.spec.mjs", "forms-builder-*.png")
}

// TestBuilderPagesBrowser builds a two-page form with a display rule, a required file upload, a
// hidden field prefilled from the link and a theme in the builder alone (with JavaScript and,
// for moves and page breaks, without), publishes it, fills it as two respondents (JavaScript on
// and off) and finds both answers in the responses table (test/browser/builder_pages.spec.mjs).
func TestBuilderPagesBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 6*time.Minute, "builder_pages.spec.mjs", "builder-pages-*.png")
}

// TestResponsesBrowser reads responses as a form owner would, in headless Chromium
// (test/browser/responses.spec.mjs): a form and submissions made through the API, the response
// found in the table and filtered by value, its detail, the CSV export compared with what was
// submitted, the analytics page. axe-core on every page at desktop width and at 375 px, zero
// violations; screenshots in test/artifacts/responses-*.png.
func TestResponsesBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 4*time.Minute, "responses.spec.mjs", "responses-*.png")
}

// TestResponsesTableBrowser reads a busy responses table in headless Chromium
// (test/browser/responses_table.spec.mjs): twelve fields and 500 responses made through the API
// (and one from the public page); at 1280 px no word of a cell broken mid-word, no sideways
// page scroll, a sticky header row and first column; at 390 px cards whose labels and values
// never overlap; a column hidden and two swapped, kept after a reload; filters by an answer and
// by the source; Next on a response. axe-core on the table and the detail at desktop width,
// 390 px and 375 px, zero violations; screenshots in test/artifacts/responses-table-*.png.
func TestResponsesTableBrowser(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	// The spec sends its 500 responses 25 at a time, above the default API rate.
	in.setEnv("FORMWARD_API_RATE_LIMIT", "0")
	in.walkAsFirstOwner(t, 5*time.Minute, "responses_table.spec.mjs", "responses-table-*.png")
}

// TestAnalyticsBrowser reads a form's analytics in headless Chromium
// (test/browser/analytics.spec.mjs): five submissions through the API with known answers, then
// the public two-page form filled with JavaScript, started and left, filled without
// JavaScript, and only looked at; the analytics page's views, starts, form and API
// submissions, completion rate, per-option counts and shares, number min/median/max, answered
// counts and pages reached must all add up, as GET /v1/forms/{id}/stats does. axe-core with the
// tables open at desktop width, at 375 px and in dark mode, zero violations; screenshots in
// test/artifacts/analytics-*.png.
func TestAnalyticsBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 4*time.Minute, "analytics.spec.mjs", "analytics-*.png")
}

// TestHistoryBrowser reads and uses a form's history in headless Chromium
// (test/browser/history.spec.mjs): three versions made through the API, the history list with
// who and what changed, a comparison of two versions, the responses under the labels of the
// version they answered, and a restore after its confirmation. axe-core on every page at
// desktop width, 375 px and in dark mode, zero violations; screenshots in
// test/artifacts/history-*.png.
func TestHistoryBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 4*time.Minute, "history.spec.mjs", "history-*.png")
}

// TestPrivacyBrowser drives Settings › Privacy requests in headless Chromium
// (test/browser/privacy.spec.mjs) against a real `formward serve`: the first owner seeds two
// forms and two respondents through the API, then, from the keyboard, exports one
// respondent's submissions (a JSON download), erases them after a confirmation page with the
// count, and sees the count deleted; the audit log has the events without the address.
// axe-core runs on every page at desktop width and at 375 px with zero violations; the
// screenshots are saved in test/artifacts/privacy-*.png.
func TestPrivacyBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 4*time.Minute, "privacy.spec.mjs", "privacy-*.png")
}

// TestRoutingBrowser walks the dashboard's webhook pages in headless Chromium
// (test/browser/routing.spec.mjs): a webhook created (after an invalid URL is refused next to
// its control) to an HTTPS receiver with a test CA, a test event sent from the page, the
// receiver answering 500 so the delivery log shows the failing attempt, the receiver fixed,
// Retry pressed and the delivery shown delivered; Replay events pressed and the replay shown done;
// then deletion after confirmation. Then the
// integrations page (an invalid Google key refused inline, Slack connected, no secret shown
// back) and a workflow built with a condition and two actions, saved and disabled. axe-core
// runs on every page at desktop width and at 375 px with zero violations; screenshots go to
// test/artifacts/routing-*.png.
func TestRoutingBrowser(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	// The spec "fixes" the receiver through this loopback control endpoint.
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/heal" {
			http.NotFound(w, r)
			return
		}
		rc.healed.Store(true)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(control.Close)

	in := newInstance(t, "", "")
	in.setEnv("FORMWARD_WEBHOOK_CA_FILE", rc.caFile)
	in.setEnv("FORMWARD_ALLOW_PRIVATE_DESTINATIONS", "true")
	// Automatic retries come only after an hour: the success seen later is the manual retry's.
	in.setEnv("FORMWARD_RETRY_DELAYS", "1h,1h,1h,1h")
	in.walkAsFirstOwner(t, 5*time.Minute, "routing.spec.mjs", "routing-*.png", rc.url("/down/formward"), control.URL)

	got := rc.requests("/down/formward")
	if len(got) != 2 || got[0].status != http.StatusInternalServerError || got[1].status != http.StatusNoContent {
		var statuses []int
		for _, r := range got {
			statuses = append(statuses, r.status)
		}
		t.Fatalf("the receiver got %d requests with statuses %v, want a 500 then (after the retry) a 204", len(got), statuses)
	}
	if e := got[1].header.Get("X-Service-Event"); e != "webhook.test" || got[0].header.Get("X-Service-Delivery") != got[1].header.Get("X-Service-Delivery") {
		t.Fatalf("retried request: event %q, delivery %q then %q", e, got[0].header.Get("X-Service-Delivery"), got[1].header.Get("X-Service-Delivery"))
	}
}

// walkAsFirstOwner starts in's serve (or skips when the browser is missing, see
// browserPrerequisites), waits for the setup link serve logs and runs a dashboard spec of
// test/browser with it within limit:
//
//	node browser/<script> <base url> <setup link> <artifact dir> [extra…]
//
// then logs where its screenshots (the glob screenshots in test/artifacts) are.
func (in *instance) walkAsFirstOwner(t *testing.T, limit time.Duration, script, screenshots string, extra ...string) {
	t.Helper()
	node, chromium := browserPrerequisites(t)
	in.startServe()
	link := in.awaitSetupLink(t)
	artifacts := artifactsDir(t)
	runNodeWithin(t, limit, node, []string{"FORMWARD_CHROMIUM=" + chromium}, script, append([]string{in.baseURL, link, artifacts}, extra...)...)
	t.Logf("screenshots: %s", filepath.Join(artifacts, screenshots))
}

// runNodeWithin runs one script of test/browser within limit and logs its output line by line.
func runNodeWithin(t *testing.T, limit time.Duration, node string, env []string, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("browser", script)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		t.Log("browser: " + line)
	}
	if err != nil {
		t.Fatalf("node test/browser/%s %s: %v", script, strings.Join(args, " "), err)
	}
}

// awaitSetupLink returns the one-time setup link serve logs on its first start.
func (in *instance) awaitSetupLink(t *testing.T) string {
	t.Helper()
	var link string
	if !testkit.Wait(15*time.Second, func() bool {
		link = setupLink.FindString(in.logs.String())
		return link != ""
	}) {
		t.Fatalf("formward serve logged no setup link (…/app/setup?token=…) on first start")
	}
	return link
}

// artifactsDir is where the browser specs save their screenshots (test/artifacts).
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("artifacts")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
