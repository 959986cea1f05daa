package e2e_test

import (
	"testing"
	"time"
)

// TestThemeBrowser themes a form in the dashboard and opens it as a respondent in headless
// Chromium (test/browser/theme.spec.mjs): a contrast-failing accent and a text file posing as
// a PNG are refused next to their controls, an accent, the auto appearance and a logo are
// saved, and the public page shows them through its own stylesheet (no CSP violation) with
// axe-core at 0 violations at desktop width, 390 px and 375 px, light and dark; then the dark
// appearance. Screenshots: test/artifacts/theme-*.png.
func TestThemeBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 5*time.Minute, "theme.spec.mjs", "theme-*.png")
}
