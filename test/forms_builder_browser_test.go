package e2e_test

import (
	"testing"
	"time"
)

// TestFormsBuilderBrowser builds a form with all nine field types in the dashboard's builder in
// headless Chromium (test/browser/forms_builder.spec.mjs): one field dragged with the mouse,
// others moved with the keyboard, published, then submitted with a file by a respondent in a
// second browser context. axe-core runs on every page at desktop width and at 375 px with zero
// violations; screenshots are saved in test/artifacts/forms-builder-*.png.
func TestFormsBuilderBrowser(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)
	newInstance(t, "", "").walkAsFirstOwner(t, node, chromium, 6*time.Minute, "forms_builder.spec.mjs", "forms-builder-*.png")
}
