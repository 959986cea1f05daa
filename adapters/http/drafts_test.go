package httpapi_test

import (
	"context"
	"testing"

	"github.com/formward/formward/application/capture"
)

// settings.partial is validated and kept; GET /forms/{id}/drafts lists a form's drafts for
// any key that reads, never their answers, and 404 for another workspace; a privacy erase by
// email deletes the drafts that hold the address. Both databases.
func TestDraftsAPI(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		f := h.createForm(map[string]any{"label": "Email", "type": "email"}, map[string]any{"label": "Name", "type": "text"})
		id := f["id"].(string)
		if p := f["settings"].(map[string]any)["partial"].(map[string]any); p["enabled"] != false || p["ttl_days"] != float64(30) {
			t.Fatalf("default partial: %v", p)
		}
		for _, bad := range []any{0, 366, -1} {
			r := h.do("PATCH", "/v1/forms/"+id, h.keys["admin"], map[string]any{"settings": map[string]any{"partial": map[string]any{"enabled": true, "ttl_days": bad}}})
			h.expect(r, 422, "validation_failed")
			h.expectDetail(r, "settings.partial.ttl_days", "out_of_range")
		}
		r := h.do("PATCH", "/v1/forms/"+id, h.keys["admin"], map[string]any{"status": "published",
			"settings": map[string]any{"partial": map[string]any{"enabled": true, "ttl_days": 7}}})
		h.expect(r, 200, "")
		if p := r.json["settings"].(map[string]any)["partial"].(map[string]any); p["enabled"] != true || p["ttl_days"] != float64(7) {
			t.Fatalf("partial kept: %v", p)
		}
		ids := fieldIDs(f)
		ctx := context.Background()
		for _, email := range []string{"jane@example.org", "john@example.org"} {
			if _, err := h.app.Commands.SaveDraft.Handle(ctx, capture.SaveDraft{FormID: id, Page: 1,
				Answers: map[string][]string{ids[0]: {email}, ids[1]: {"Secret name"}}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, key := range []string{"admin", "read-only"} {
			r := h.do("GET", "/v1/forms/"+id+"/drafts", h.keys[key], nil)
			h.expect(r, 200, "")
			data := r.json["data"].([]any)
			if len(data) != 2 || data[0].(map[string]any)["page"] != float64(1) {
				t.Fatalf("drafts: %s", r.Body.String())
			}
			for _, k := range []string{"answers", "data", "email"} {
				if _, leaked := data[0].(map[string]any)[k]; leaked {
					t.Fatalf("a listed draft shows %s: %s", k, r.Body.String())
				}
			}
		}
		h.expect(h.do("GET", "/v1/forms/"+id+"/drafts", h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("GET", "/v1/forms/"+id+"/drafts?limit=1", h.keys["admin"], nil), 200, "")

		r = h.do("POST", "/v1/privacy/erase", h.keys["admin"], map[string]any{"email": " Jane@Example.org"})
		h.expect(r, 200, "")
		r = h.do("GET", "/v1/forms/"+id+"/drafts", h.keys["admin"], nil)
		if data := r.json["data"].([]any); len(data) != 1 {
			t.Fatalf("drafts after erasing jane: %s", r.Body.String())
		}
	})
}
