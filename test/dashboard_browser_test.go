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

	in := newInstance(t, "", "")
	in.startServe()
	link := in.awaitSetupLink(t)

	artifacts := artifactsDir(t)
	// The walk is long (about twenty pages, each checked twice by axe-core, and real argon2id
	// password hashing at every sign-in): it gets more time than the other specs.
	runNodeWithin(t, 8*time.Minute, node, []string{"FORMWARD_CHROMIUM=" + chromium}, "dashboard.spec.mjs", in.baseURL, link, artifacts)
	t.Logf("screenshots: %s", filepath.Join(artifacts, "dashboard-*.png"))
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
