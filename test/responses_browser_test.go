package e2e_test

import (
	"testing"
	"time"
)

// TestResponsesBrowser reads responses as a form owner would, in headless Chromium
// (test/browser/responses.spec.mjs): a form and submissions made through the API, the response
// found in the table and filtered by value, its detail, the CSV export compared with what was
// submitted, the analytics page. axe-core on every page at desktop width and at 375 px, zero
// violations; screenshots in test/artifacts/responses-*.png.
func TestResponsesBrowser(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)
	newInstance(t, "", "").walkAsFirstOwner(t, node, chromium, 4*time.Minute, "responses.spec.mjs", "responses-*.png")
}
