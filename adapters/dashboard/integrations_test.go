package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

var disconnectLink = regexp.MustCompile(`/app/integrations/(int_[A-Za-z0-9]+)/disconnect`)

// TestIntegrationPages: Slack and Google Sheets connected (an invalid key refused next to its
// control), the secrets never drawn back, a viewer refused, disconnect after confirmation.
func TestIntegrationPages(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h, _ := routingHarness(t, db)
		b := h.owner()
		b.get("/app/integrations").expect(t, http.StatusOK)

		bad := b.post("/app/integrations", url.Values{"type": {"google_sheets"}, "service_account_json": {`{"client_email":"x"}`}}).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="sheets-key-error">[^<]+</span>`).MatchString(bad.body) || strings.Contains(bad.body, `"client_email":"x"`) {
			t.Fatalf("invalid key: %s", text(bad.body))
		}
		b.post("/app/integrations", url.Values{"type": {"slack"}, "bot_token": {"xoxb-secret-token-123"}}).redirectsTo(t, "/app/integrations")
		key := `{"client_email":"sheets@project.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n"}`
		b.post("/app/integrations", url.Values{"type": {"google_sheets"}, "service_account_json": {key}}).redirectsTo(t, "/app/integrations")
		page := b.get("/app/integrations").expect(t, http.StatusOK)
		if !strings.Contains(page.body, "Slack") || !strings.Contains(page.body, "Google Sheets connected.") ||
			strings.Contains(page.body, "xoxb-secret-token-123") || strings.Contains(page.body, "secret-key-material") {
			t.Fatalf("integrations page: %s", text(page.body))
		}
		links := disconnectLink.FindAllStringSubmatch(page.body, -1)
		if len(links) != 2 {
			t.Fatalf("%d disconnect links: %s", len(links), text(page.body))
		}

		viewer := h.member(b, "viewer@example.org", "viewer")
		vp := viewer.get("/app/integrations").expect(t, http.StatusOK)
		if strings.Contains(vp.body, "Connect Slack") || strings.Contains(vp.body, "/disconnect") || !strings.Contains(vp.body, "Google Sheets") {
			t.Fatalf("viewer page: %s", text(vp.body))
		}
		viewer.post("/app/integrations", url.Values{"type": {"slack"}, "bot_token": {"xoxb-viewer"}}).expect(t, http.StatusForbidden)
		viewer.get("/app/integrations/"+links[0][1]+"/disconnect").expect(t, http.StatusForbidden)
		viewer.post("/app/integrations/"+links[0][1]+"/disconnect", nil).expect(t, http.StatusForbidden)

		b.get("/app/integrations/"+links[0][1]+"/disconnect").expect(t, http.StatusOK)
		b.post("/app/integrations/"+links[0][1]+"/disconnect", nil).redirectsTo(t, "/app/integrations")
		after := b.get("/app/integrations").expect(t, http.StatusOK)
		if len(disconnectLink.FindAllString(after.body, -1)) != 1 || !strings.Contains(after.body, "Integration disconnected.") {
			t.Fatalf("after disconnect: %s", text(after.body))
		}
	})
}
