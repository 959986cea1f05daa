package e2e_test

import (
	"testing"
	"time"
)

// TestPrivacyBrowser drives Settings › Privacy requests in headless Chromium
// (test/browser/privacy.spec.mjs) against a real `formward serve`: the first owner seeds two
// forms and two respondents through the API, then, from the keyboard, exports one
// respondent's submissions (a JSON download), erases them after a confirmation page with the
// count, and sees the count deleted; the audit log has the events without the address.
// axe-core runs on every page at desktop width and at 375 px with zero violations; the
// screenshots are saved in test/artifacts/privacy-*.png.
func TestPrivacyBrowser(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)
	newInstance(t, "", "").walkAsFirstOwner(t, node, chromium, 4*time.Minute, "privacy.spec.mjs", "privacy-*.png")
}
