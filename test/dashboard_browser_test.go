package e2e_test

import (
	"context"
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
	node, chromium := browserPrerequisites(t)

	// The walk is long (about twenty pages, each checked twice by axe-core, and real argon2id
	// password hashing at every sign-in): it gets more time than the other specs.
	newInstance(t, "", "").walkAsFirstOwner(t, node, chromium, 8*time.Minute, "dashboard.spec.mjs", "dashboard-*.png")
}

// walkAsFirstOwner starts in's serve, waits for the setup link it logs and runs a dashboard spec
// of test/browser with it within limit:
//
//	node browser/<script> <base url> <setup link> <artifact dir> [extra…]
//
// then logs where its screenshots (the glob screenshots in test/artifacts) are.
func (in *instance) walkAsFirstOwner(t *testing.T, node, chromium string, limit time.Duration, script, screenshots string, extra ...string) {
	t.Helper()
	in.startServe()
	link := in.awaitSetupLink(t)
	artifacts := artifactsDir(t)
	runNodeWithin(t, limit, node, []string{"FORMWARD_CHROMIUM=" + chromium}, script, append([]string{in.baseURL, link, artifacts}, extra...)...)
	t.Logf("screenshots: %s", filepath.Join(artifacts, screenshots))
}

// runNodeWithin runs one script of test/browser like runNode, with its own time limit.
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
