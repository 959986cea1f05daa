package httpapi_test

import (
	"fmt"
	"net/url"
	"testing"
)

// TestFormVersionsAPI: a change to the fields makes a new version (a rename does not);
// GET /versions lists them newest first with their author, GET /versions/{n} returns the
// fields, restore makes a new version with the old fields and their IDs, and submissions carry
// the version they answered. Bad input: a version that is not a number, one that does not
// exist, another workspace's form, a read-only key restoring, an archived form.
func TestFormVersionsAPI(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		f := h.createForm(map[string]any{"label": "Name", "type": "text"}, map[string]any{"label": "Email", "type": "email"})
		id := f["id"].(string)
		ids := fieldIDs(f)
		if f["version"] != float64(1) {
			t.Fatalf("new form version = %v", f["version"])
		}
		base := "/v1/forms/" + id
		sub := h.do("POST", base+"/submissions", h.keys["read-write"], map[string]any{"data": map[string]any{ids[0]: "Ada"}, "form_version": 7})
		h.expect(sub, 201, "")
		if sub.json["form_version"] != float64(1) {
			t.Fatalf("submission form_version = %v, want 1 (a client's value is ignored)", sub.json["form_version"])
		}

		r := h.do("PATCH", base, h.keys["read-write"], map[string]any{"name": "Renamed", "version": 9})
		h.expect(r, 200, "")
		if r.json["version"] != float64(1) {
			t.Fatalf("version after a rename = %v", r.json["version"])
		}
		r = h.do("PATCH", base, h.keys["read-write"], map[string]any{"fields": []map[string]any{{"id": ids[0], "label": "Full name", "type": "text"}}})
		h.expect(r, 200, "")
		if r.json["version"] != float64(2) {
			t.Fatalf("version after a field change = %v", r.json["version"])
		}
		sub = h.do("POST", base+"/submissions", h.keys["read-write"], map[string]any{"data": map[string]any{ids[0]: "Grace"}})
		h.expect(sub, 201, "")
		if sub.json["form_version"] != float64(2) {
			t.Fatalf("submission form_version = %v, want 2", sub.json["form_version"])
		}

		list := h.do("GET", base+"/versions", h.keys["read-only"], nil)
		h.expect(list, 200, "")
		data := list.json["data"].([]any)
		if len(data) != 2 {
			t.Fatalf("versions = %v", data)
		}
		v2, v1 := data[0].(map[string]any), data[1].(map[string]any)
		if v2["version"] != float64(2) || v2["fields_count"] != float64(1) || v1["version"] != float64(1) || v1["fields_count"] != float64(2) {
			t.Fatalf("versions = %v", data)
		}
		if by, _ := v2["created_by"].(map[string]any); by == nil || by["id"] != h.keyIDs["read-write"] || by["type"] != "api_key" {
			t.Fatalf("version 2 created_by = %v", v2["created_by"])
		}
		if by, _ := v1["created_by"].(map[string]any); by == nil || by["id"] != h.keyIDs["admin"] {
			t.Fatalf("version 1 created_by = %v", v1["created_by"])
		}
		one := h.do("GET", base+"/versions/1", h.keys["read-only"], nil)
		h.expect(one, 200, "")
		if fs := one.json["fields"].([]any); len(fs) != 2 || fs[0].(map[string]any)["label"] != "Name" || fs[1].(map[string]any)["id"] != ids[1] {
			t.Fatalf("version 1 = %v", one.json)
		}

		// Bad input.
		h.expect(h.do("GET", base+"/versions/abc", h.keys["read-only"], nil), 400, "invalid_request")
		h.expect(h.do("GET", base+"/versions/0", h.keys["read-only"], nil), 400, "invalid_request")
		h.expect(h.do("GET", base+"/versions/3", h.keys["read-only"], nil), 404, "not_found")
		h.expect(h.do("POST", base+"/versions/3/restore", h.keys["read-write"], nil), 404, "not_found")
		h.expect(h.do("GET", base+"/versions", h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("GET", base+"/versions/1", h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("POST", base+"/versions/1/restore", h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("POST", base+"/versions/1/restore", h.keys["read-only"], nil), 403, "forbidden")

		restored := h.do("POST", base+"/versions/1/restore", h.keys["read-write"], nil)
		h.expect(restored, 201, "")
		if restored.json["version"] != float64(3) {
			t.Fatalf("version after restore = %v", restored.json["version"])
		}
		if got := fieldIDs(restored.json); len(got) != 2 || got[0] != ids[0] || got[1] != ids[1] ||
			restored.json["fields"].([]any)[0].(map[string]any)["label"] != "Name" {
			t.Fatalf("restored fields = %v", restored.json["fields"])
		}
		evs := h.auditEvents("&action=form.version_created")
		if len(evs) != 2 {
			t.Fatalf("form.version_created = %v", evs)
		}
		if d := evs[0]["details"].(map[string]any); d["version"] != float64(3) || d["restored_from"] != float64(1) || d["fields_added"] != float64(1) {
			t.Fatalf("restore's audit details = %v", d)
		}

		h.expect(h.do("PATCH", base, h.keys["read-write"], map[string]any{"status": "archived"}), 200, "")
		r = h.do("POST", base+"/versions/2/restore", h.keys["read-write"], nil)
		h.expect(r, 409, "conflict")
		if msg := r.json["error"].(map[string]any)["message"].(string); msg == "" {
			t.Fatal("archived restore: no message")
		}
		list = h.do("GET", base+"/versions", h.keys["read-only"], nil)
		h.expect(list, 200, "")
		if n := len(list.json["data"].([]any)); n != 3 {
			t.Fatalf("versions after the refused restore = %d, want 3", n)
		}

		// The list pages like every list: limit, then next_cursor until has_more is false.
		var seen []float64
		next := base + "/versions?limit=2"
		for next != "" {
			page := h.do("GET", next, h.keys["read-only"], nil)
			h.expect(page, 200, "")
			for _, v := range page.json["data"].([]any) {
				seen = append(seen, v.(map[string]any)["version"].(float64))
			}
			next = ""
			if page.json["has_more"] == true {
				next = base + "/versions?limit=2&cursor=" + url.QueryEscape(page.json["next_cursor"].(string))
			}
		}
		if fmt.Sprint(seen) != "[3 2 1]" {
			t.Fatalf("versions page by page: %v", seen)
		}
		h.expect(h.do("GET", base+"/versions?limit=0", h.keys["read-only"], nil), 400, "")
		h.expect(h.do("GET", base+"/versions?cursor=forged", h.keys["read-only"], nil), 400, "")
	})
}
