package httpapi_test

import "testing"

// A form's ref is set on create and PATCH, shown in the form, unique in its workspace (409)
// and free in another workspace.
func TestFormRefSetUniqueAndIsolated(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Contact", "ref": "contact"})
		h.expect(r, 201, "")
		if r.json["ref"] != "contact" {
			t.Fatalf("ref on create: %v", r.json["ref"])
		}
		id := r.json["id"].(string)

		r = h.do("POST", "/v1/forms", key, map[string]any{"name": "Other", "ref": "contact"})
		h.expect(r, 409, "conflict")
		r = h.do("POST", "/v1/forms", key, map[string]any{"name": "Bad", "ref": "Not OK"})
		h.expect(r, 422, "validation_failed")

		other := h.do("POST", "/v1/forms", key, map[string]any{"name": "Other"})
		h.expect(other, 201, "")
		if other.json["ref"] != nil {
			t.Fatalf("form without ref shows %v", other.json["ref"])
		}
		otherID := other.json["id"].(string)
		h.expect(h.do("PATCH", "/v1/forms/"+otherID, key, map[string]any{"ref": "contact"}), 409, "conflict")
		r = h.do("PATCH", "/v1/forms/"+otherID, key, map[string]any{"ref": "other-form"})
		h.expect(r, 200, "")
		if r.json["ref"] != "other-form" {
			t.Fatalf("ref after PATCH: %v", r.json["ref"])
		}
		// The same ref again on the same form is no conflict; null clears it.
		h.expect(h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"ref": "contact"}), 200, "")
		r = h.do("PATCH", "/v1/forms/"+otherID, key, map[string]any{"ref": nil})
		h.expect(r, 200, "")
		if r.json["ref"] != nil {
			t.Fatalf("ref after clearing: %v", r.json["ref"])
		}

		// Another workspace may use the same ref.
		r = h.do("POST", "/v1/forms", h.keys["other"], map[string]any{"name": "Contact B", "ref": "contact"})
		h.expect(r, 201, "")
		r = h.do("GET", "/v1/forms/"+id, key, nil)
		h.expect(r, 200, "")
		if r.json["ref"] != "contact" {
			t.Fatalf("ref read back: %v", r.json["ref"])
		}
	})
}
