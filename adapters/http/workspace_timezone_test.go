package httpapi_test

import "testing"

// TestWorkspaceTimeZone: the workspace's time zone is UTC until an admin changes it to an IANA
// name; the change is kept, audited and shown by GET; an unknown name is refused with 422 on
// time_zone and changes nothing; other keys cannot change it.
func TestWorkspaceTimeZone(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		r := h.do("GET", "/v1/workspace", h.keys["admin"], nil)
		h.expect(r, 200, "")
		if r.json["time_zone"] != "UTC" {
			t.Fatalf("a new workspace's time_zone = %v, want UTC", r.json["time_zone"])
		}

		r = h.do("PATCH", "/v1/workspace", h.keys["admin"], map[string]any{"time_zone": "America/New_York"})
		h.expect(r, 200, "")
		if r.json["time_zone"] != "America/New_York" {
			t.Fatalf("PATCH answered time_zone %v", r.json["time_zone"])
		}
		if r = h.do("GET", "/v1/workspace", h.keys["admin"], nil); r.json["time_zone"] != "America/New_York" {
			t.Fatalf("GET after PATCH: time_zone %v", r.json["time_zone"])
		}
		events := h.auditEvents("&action=workspace.updated")
		if len(events) != 1 {
			t.Fatalf("%d workspace.updated events, want 1", len(events))
		}
		if d := events[0]["details"].(map[string]any); d["time_zone"] != "America/New_York" || len(d) != 1 {
			t.Fatalf("audit details %v", d)
		}

		for _, bad := range []any{"Mars/Olympus_Mons", "", "Local", "america/new_york", 5, nil} {
			r = h.do("PATCH", "/v1/workspace", h.keys["admin"], map[string]any{"time_zone": bad, "name": "Not applied"})
			h.expect(r, 422, "validation_failed")
			details, _ := r.json["error"].(map[string]any)["details"].([]any)
			want := "invalid_value"
			if _, isString := bad.(string); !isString {
				want = "invalid_type"
			}
			if len(details) != 1 || details[0].(map[string]any)["field"] != "time_zone" || details[0].(map[string]any)["code"] != want {
				t.Fatalf("time_zone %v: details %v, want %s on time_zone", bad, details, want)
			}
		}
		h.expect(h.do("PATCH", "/v1/workspace", h.keys["read-write"], map[string]any{"time_zone": "Europe/Paris"}), 403, "forbidden")
		r = h.do("GET", "/v1/workspace", h.keys["admin"], nil)
		if r.json["time_zone"] != "America/New_York" || r.json["name"] != "A" {
			t.Fatalf("a refused change changed the workspace: %v", r.json)
		}
		if n := len(h.auditEvents("&action=workspace.updated")); n != 1 {
			t.Fatalf("%d workspace.updated events after refused changes, want 1", n)
		}
	})
}
