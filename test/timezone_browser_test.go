package e2e_test

import (
	"testing"
	"time"
)

// TestTimeZonesBrowser reads times in the viewer's zone in headless Chromium set to
// America/New_York (test/browser/timezones.spec.mjs): the profile preselects the browser's zone
// and keeps it once saved, a response shows in New York time with UTC on hover and the date
// filter names the zone, and the billing page sets the workspace's zone. axe-core on every page
// at desktop width and at 375 px, zero violations; screenshots in test/artifacts/timezones-*.png.
func TestTimeZonesBrowser(t *testing.T) {
	t.Parallel()
	newInstance(t, "", "").walkAsFirstOwner(t, 4*time.Minute, "timezones.spec.mjs", "timezones-*.png")
}
