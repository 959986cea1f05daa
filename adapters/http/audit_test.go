package httpapi_test

import (
	"reflect"
	"testing"
)

// TestAuditEventsOfFormsAndWebhooks: creating, editing and publishing a form and registering
// and deleting a webhook appear in GET /audit-events with the key as actor and a summary that
// holds neither the URL's path nor the secret; action and actor_id filter.
func TestAuditEventsOfFormsAndWebhooks(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		f := h.createForm(map[string]any{"label": "Name", "type": "text"})
		id := f["id"].(string)
		h.expect(h.do("PATCH", "/v1/forms/"+id, h.keys["read-write"], map[string]any{"status": "published"}), 200, "")
		w := h.createWebhook(map[string]any{"url": hookURL + "/t0ken", "events": []string{"submission.created"}, "secret": "whsec_1"})
		h.expect(h.do("DELETE", "/v1/webhooks/"+w["id"].(string), h.keys["admin"], nil), 204, "")

		created := h.auditEvents("&action=form.created")
		if len(created) != 1 || created[0]["target"].(map[string]any)["id"] != id ||
			created[0]["actor"].(map[string]any)["id"] != h.keyIDs["admin"] || created[0]["details"].(map[string]any)["name"] != "Contact" {
			t.Fatalf("form.created = %v", created)
		}
		published := h.auditEvents("&action=form.published")
		if len(published) != 1 || published[0]["actor"].(map[string]any)["id"] != h.keyIDs["read-write"] ||
			!reflect.DeepEqual(published[0]["details"].(map[string]any)["changed"], []any{"status"}) {
			t.Fatalf("form.published = %v", published)
		}
		for _, action := range []string{"webhook.created", "webhook.deleted"} {
			evs := h.auditEvents("&action=" + action)
			if len(evs) != 1 || evs[0]["details"].(map[string]any)["host"] != "hooks.example.com" {
				t.Fatalf("%s = %v", action, evs)
			}
			for k, v := range evs[0]["details"].(map[string]any) {
				if s, ok := v.(string); ok && (s == "whsec_1" || s == hookURL+"/t0ken") {
					t.Fatalf("%s details carry %s = %q", action, k, s)
				}
			}
		}

		// By actor: the read-write key did one thing, the publication.
		if mine := h.auditEvents("&actor_id=" + h.keyIDs["read-write"]); len(mine) != 1 || mine[0]["action"] != "form.published" {
			t.Fatalf("events of the read-write key = %v", mine)
		}
		if none := h.auditEvents("&actor_id=usr_nobody"); len(none) != 0 {
			t.Fatalf("events of nobody = %v", none)
		}
		for _, q := range []string{"actor_id=", "actor_id=a%20b", "actor_id=usr_%27"} {
			h.expect(h.do("GET", "/v1/audit-events?"+q, h.keys["admin"], nil), 400, "invalid_request")
		}
	})
}
