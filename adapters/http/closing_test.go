package httpapi_test

import "testing"

func TestFormClosingSettingsAndClosedReason(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		f := h.createForm(map[string]any{"label": "Name", "type": "text"}, map[string]any{"label": "Email", "type": "email"})
		id := f["id"].(string)
		ids := fieldIDs(f)
		if f["closed_reason"] != nil {
			t.Fatalf("new form closed: %v", f["closed_reason"])
		}
		c := f["settings"].(map[string]any)["closing"].(map[string]any)
		if c["closes_at"] != nil || c["max_submissions"] != nil || c["one_per_email_field"] != nil || c["message"] != nil {
			t.Fatalf("default closing %v", c)
		}

		r := h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"status": "published", "settings": map[string]any{
			"closing": map[string]any{"closes_at": "2099-01-02T03:04:05.678+01:00", "max_submissions": 1,
				"one_per_email_field": ids[1], "message": "Sold out"},
			"allowed_origins": []string{"https://Owner.example:443"},
		}})
		h.expect(r, 200, "")
		s := r.json["settings"].(map[string]any)
		c = s["closing"].(map[string]any)
		if c["closes_at"] != "2099-01-02T02:04:05.678Z" || c["max_submissions"] != float64(1) || c["one_per_email_field"] != ids[1] || c["message"] != "Sold out" {
			t.Fatalf("closing read back %v", c)
		}
		if o := s["allowed_origins"].([]any); len(o) != 1 || o[0] != "https://owner.example" {
			t.Fatalf("allowed origins %v", o)
		}
		if r.json["closed_reason"] != nil {
			t.Fatalf("closed before any submission: %v", r.json["closed_reason"])
		}

		// The API is never refused by closing rules; its submission fills the form.
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{ids[0]: "Ada"}}), 201, "")
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{ids[0]: "Bob"}}), 201, "")
		r = h.do("GET", "/v1/forms/"+id, key, nil)
		h.expect(r, 200, "")
		if r.json["closed_reason"] != "max_submissions" || r.json["submission_count"] != float64(2) {
			t.Fatalf("closed_reason %v, count %v", r.json["closed_reason"], r.json["submission_count"])
		}
		r = h.do("GET", "/v1/forms", key, nil)
		if item := r.json["data"].([]any)[0].(map[string]any); item["closed_reason"] != "max_submissions" {
			t.Fatalf("list item %v", item)
		}
		// What was read can be sent back: closed_reason is read-only.
		back := r.json["data"].([]any)[0].(map[string]any)
		h.expect(h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"name": "Renamed", "closed_reason": back["closed_reason"]}), 200, "")

		// A past closes_at closes it by time.
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{"closing": map[string]any{"closes_at": "2000-01-01T00:00:00Z"}}})
		h.expect(r, 200, "")
		if r.json["closed_reason"] != "closes_at" {
			t.Fatalf("closed_reason %v", r.json["closed_reason"])
		}

		for name, tc := range map[string]struct {
			closing map[string]any
			field   string
		}{
			"limit 0":         {map[string]any{"max_submissions": 0}, "settings.closing.max_submissions"},
			"limit not int":   {map[string]any{"max_submissions": 1.5}, "settings.closing.max_submissions"},
			"bad time":        {map[string]any{"closes_at": "tomorrow"}, "settings.closing.closes_at"},
			"not email field": {map[string]any{"one_per_email_field": ids[0]}, "settings.closing.one_per_email_field"},
			"unknown field":   {map[string]any{"one_per_email_field": "fld_nope"}, "settings.closing.one_per_email_field"},
			"unknown prop":    {map[string]any{"max": 3}, "settings.closing.max"},
			"control char":    {map[string]any{"message": "a\u0000b"}, "settings.closing.message"},
		} {
			r := h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{"closing": tc.closing}})
			h.expect(r, 422, "validation_failed")
			d := r.json["error"].(map[string]any)["details"].([]any)[0].(map[string]any)
			if d["field"] != tc.field {
				t.Fatalf("%s: detail %v", name, d)
			}
		}
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{"allowed_origins": []string{"https://owner.example/path"}}})
		h.expect(r, 422, "validation_failed")
	})
}
