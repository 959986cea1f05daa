package e2e_test

import (
	"testing"
	"time"
)

// TestFilesBrowser reads an uploaded file as a member would, in headless Chromium
// (test/browser/files.spec.mjs): a file posted on the public page shows in the responses table
// and on the response page as "curriculum-vitae.pdf, 12 KB", a link to /app/files/… that
// downloads the same bytes, and the CSV export carries that link. axe-core on both pages at
// desktop width, at 375 px and in dark mode, zero violations; screenshots in
// test/artifacts/files-*.png.
func TestFilesBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 4*time.Minute, "files.spec.mjs", "files-*.png")
}
