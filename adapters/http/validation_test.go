package httpapi_test

import (
	"strings"
	"testing"
)

func conditionOn(fieldID string) map[string]any {
	return map[string]any{"type": "submission.created", "config": map[string]any{"conditions": []any{
		map[string]any{"field_id": fieldID, "operator": "equals", "value": "Pro"}}}}
}

// TestWorkflowConditionFieldMustBelongToForm: a condition on a field that is not a field of the
// workflow's form (here, a field of another workspace's form) is refused on create and on a
// PATCH of the trigger.
func TestWorkflowConditionFieldMustBelongToForm(t *testing.T) {
	h := sqliteHarness(t)
	f := h.createForm(contactFields...)
	formID, own := f["id"].(string), fieldIDs(f)[3]
	r := h.do("POST", "/v1/forms", h.keys["other"], map[string]any{"name": "B's form", "fields": contactFields})
	h.expect(r, 201, "")
	foreign := fieldIDs(r.json)[3]

	body := workflowBody(formID)
	body["trigger"] = conditionOn(foreign)
	h.expectDetail(h.do("POST", "/v1/workflows", h.keys["admin"], body), "trigger.config.conditions[0].field_id", "unknown_field")
	body["trigger"] = conditionOn("fld_does_not_exist")
	h.expectDetail(h.do("POST", "/v1/workflows", h.keys["admin"], body), "trigger.config.conditions[0].field_id", "unknown_field")

	body["trigger"] = conditionOn(own)
	id := h.createWorkflow(body)["id"].(string)
	h.expectDetail(h.do("PATCH", "/v1/workflows/"+id, h.keys["admin"], map[string]any{"trigger": conditionOn(foreign)}),
		"trigger.config.conditions[0].field_id", "unknown_field")
	r = h.do("GET", "/v1/workflows/"+id, h.keys["admin"], nil)
	cond := r.json["trigger"].(map[string]any)["config"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
	if cond["field_id"] != own {
		t.Fatalf("a refused patch changed the trigger: %v", cond)
	}
	// Other properties can still be patched; a field of the form is accepted.
	h.expect(h.do("PATCH", "/v1/workflows/"+id, h.keys["admin"], map[string]any{"name": "Renamed", "trigger": conditionOn(fieldIDs(f)[0])}), 200, "")
}

// TestTextLengthCaps: a 900 KB option (and other over-long texts) is refused with the JSON path.
func TestTextLengthCaps(t *testing.T) {
	h := sqliteHarness(t)
	key := h.keys["admin"]
	field := func(mod func(map[string]any)) map[string]any {
		fl := map[string]any{"label": "Plan", "type": "dropdown", "options": []string{"Free", "Pro"}}
		mod(fl)
		return map[string]any{"name": "Caps", "fields": []any{fl}}
	}
	h.expectDetail(h.do("POST", "/v1/forms", key, field(func(f map[string]any) { f["options"] = []string{"Free", strings.Repeat("x", 900<<10)} })),
		"fields[0].options[1]", "too_long")
	h.expectDetail(h.do("POST", "/v1/forms", key, field(func(f map[string]any) { f["options"] = []string{strings.Repeat("x", 501)} })),
		"fields[0].options[0]", "too_long")
	h.expectDetail(h.do("POST", "/v1/forms", key, field(func(f map[string]any) { f["label"] = strings.Repeat("x", 501) })),
		"fields[0].label", "too_long")
	h.expectDetail(h.do("POST", "/v1/forms", key, field(func(f map[string]any) {
		f["type"], f["options"], f["placeholder"] = "text", nil, strings.Repeat("x", 501)
	})),
		"fields[0].placeholder", "too_long")
	h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "Caps", "description": strings.Repeat("x", 5001)}), "description", "too_long")
	h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "Caps", "settings": map[string]any{"thank_you_message": strings.Repeat("x", 5001)}}),
		"settings.thank_you_message", "too_long")
	// At the caps everything is accepted.
	r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Caps", "description": strings.Repeat("é", 5000),
		"settings": map[string]any{"thank_you_message": strings.Repeat("é", 5000)},
		"fields": []any{map[string]any{"label": strings.Repeat("é", 500), "type": "radio", "options": []string{strings.Repeat("é", 500)}},
			map[string]any{"label": "Name", "type": "text", "placeholder": strings.Repeat("é", 500)}}})
	h.expect(r, 201, "")
}

// TestRedirectURLCannotInjectCSP: a redirect URL or origin that would add directives to the
// public page's Content-Security-Policy is refused; accepted ones are stored canonical.
func TestRedirectURLCannotInjectCSP(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		settings := func(s map[string]any) map[string]any { return map[string]any{"name": "F", "settings": s} }
		for _, u := range []string{"https://a.example;sandbox;report-uri/", "https://a.example/ x", "https://a.example/'unsafe-inline'", "https://a.example,https://b.example", `https://a.example\x`} {
			h.expectDetail(h.do("POST", "/v1/forms", key, settings(map[string]any{"redirect_url": u})), "settings.redirect_url", "invalid_url")
		}
		h.expectDetail(h.do("POST", "/v1/forms", key, settings(map[string]any{"embed": map[string]any{"frame_ancestors": []string{"https://a.example;script-src *"}}})),
			"settings.embed.frame_ancestors[0]", "invalid_origin")
		h.expectDetail(h.do("POST", "/v1/forms", key, settings(map[string]any{"embed": map[string]any{"cors_origins": []string{"https://a.example", "https://b.example\r\nX-Injected: 1"}}})),
			"settings.embed.cors_origins[1]", "invalid_origin")
		r := h.do("POST", "/v1/forms", key, settings(map[string]any{"redirect_url": "HTTPS://Owner.Example:443/thanks",
			"embed": map[string]any{"frame_ancestors": []string{"HTTPS://Owner.Example"}, "cors_origins": []string{"https://owner.example:443"}}}))
		h.expect(r, 201, "")
		r = h.do("GET", "/v1/forms/"+r.json["id"].(string), key, nil)
		s := r.json["settings"].(map[string]any)
		embed := s["embed"].(map[string]any)
		if s["redirect_url"] != "https://owner.example/thanks" || embed["frame_ancestors"].([]any)[0] != "https://owner.example" || embed["cors_origins"].([]any)[0] != "https://owner.example" {
			t.Fatalf("stored settings not canonical: %v", s)
		}
	})
}

// TestFieldHelp: a field's help is stored as sent (line breaks kept), read back as null when
// the field has none, refused over 1,000 characters, with control characters or when it is
// not a string, and a PATCH of the fields replaces it.
func TestFieldHelp(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		help := "We answer within a day.\nNo spam."
		r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Help", "fields": []any{
			map[string]any{"label": "Name", "type": "text"},
			map[string]any{"label": "Size", "type": "radio", "options": []string{"S", "M"}, "help": help},
		}})
		h.expect(r, 201, "")
		id := r.json["id"].(string)
		r = h.do("GET", "/v1/forms/"+id, key, nil)
		h.expect(r, 200, "")
		fields := r.json["fields"].([]any)
		first, second := fields[0].(map[string]any), fields[1].(map[string]any)
		if v, ok := first["help"]; !ok || v != nil {
			t.Fatalf("help of a field without one = %v (present %v), want null", v, ok)
		}
		if second["help"] != help {
			t.Fatalf("help = %q, want %q", second["help"], help)
		}

		over := func(v any) map[string]any {
			return map[string]any{"name": "Help", "fields": []any{map[string]any{"label": "Name", "type": "text", "help": v}}}
		}
		h.expectDetail(h.do("POST", "/v1/forms", key, over(strings.Repeat("é", 1001))), "fields[0].help", "too_long")
		h.expectDetail(h.do("POST", "/v1/forms", key, over("bell\a")), "fields[0].help", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/forms", key, over(42)), "fields[0].help", "invalid_type")
		h.expect(h.do("POST", "/v1/forms", key, over(strings.Repeat("é", 1000))), 201, "")

		second["help"] = "Pick the size you wear."
		first["help"] = nil
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"fields": []any{first, second}})
		h.expect(r, 200, "")
		got := r.json["fields"].([]any)[1].(map[string]any)["help"]
		if got != "Pick the size you wear." {
			t.Fatalf("patched help = %v", got)
		}
	})
}
