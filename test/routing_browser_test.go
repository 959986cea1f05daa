package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRoutingBrowser walks the dashboard's webhook pages in headless Chromium
// (test/browser/routing.spec.mjs): a webhook created (after an invalid URL is refused next to
// its control) to an HTTPS receiver with a test CA, a test event sent from the page, the
// receiver answering 500 so the delivery log shows the failing attempt, the receiver fixed,
// Retry pressed and the delivery shown delivered; then deletion after confirmation. Then the
// integrations page (an invalid Google key refused inline, Slack connected, no secret shown
// back) and a workflow built with a condition and two actions, saved and disabled. axe-core
// runs on every page at desktop width and at 375 px with zero violations; screenshots go to
// test/artifacts/routing-*.png.
func TestRoutingBrowser(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

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
	in.walkAsFirstOwner(t, node, chromium, 5*time.Minute, "routing.spec.mjs", "routing-*.png", rc.url("/down/formward"), control.URL)

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
