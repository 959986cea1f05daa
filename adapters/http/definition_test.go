package httpapi_test

import (
	"slices"
	"strings"
	"testing"
)

func definitionDoc(label string, extra ...map[string]any) map[string]any {
	fields := []any{
		map[string]any{"key": "name", "label": label, "type": "text", "required": true},
		map[string]any{"key": "topic", "label": "Topic", "type": "radio", "options": []string{"Sales", "Support"}},
		map[string]any{"key": "details", "label": "Details", "type": "textarea",
			"show_if": map[string]any{"match": "all", "conditions": []any{map[string]any{"field_id": "topic", "operator": "equals", "value": "Support"}}}},
	}
	for _, e := range extra {
		fields = append(fields, e)
	}
	return map[string]any{"name": "Contact", "description": "Say hello", "fields": fields}
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// PUT /forms/by-ref creates (201), then updates by key (200): a relabel keeps the field's ID and
// answers, the same document twice changes nothing (no audit entry), a removed field keeps its
// answers, a type change is refused unless allowed, and GET /definition gives the document back.
func TestFormDefinitionApplyByRef(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		r := h.do("PUT", "/v1/forms/by-ref/contact?dry_run=true", key, definitionDoc("Name"))
		h.expect(r, 200, "")
		if r.json["action"] != "create" || r.json["form_id"] != nil || len(strs(r.json["added"])) != 3 {
			t.Fatalf("dry run of a create: %v", r.json)
		}
		h.expect(h.do("GET", "/v1/forms?limit=100", key, nil), 200, "")

		r = h.do("PUT", "/v1/forms/by-ref/contact", key, definitionDoc("Name"))
		h.expect(r, 201, "")
		id := r.json["form_id"].(string)
		form := h.do("GET", "/v1/forms/"+id, key, nil)
		if form.json["ref"] != "contact" {
			t.Fatalf("created form ref %v", form.json["ref"])
		}
		ids := fieldIDs(form.json)
		def := h.do("GET", "/v1/forms/"+id+"/definition", key, nil)
		h.expect(def, 200, "")
		if def.json["ref"] != "contact" || def.json["fields"].([]any)[2].(map[string]any)["show_if"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["field_id"] != "topic" {
			t.Fatalf("definition %v", def.json)
		}
		if _, has := def.json["fields"].([]any)[0].(map[string]any)["id"]; has {
			t.Fatal("definition shows field IDs")
		}

		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{ids[0]: "Ada", ids[1]: "Support", ids[2]: "Hi"}}), 201, "")
		auditCount := func() int {
			a := h.do("GET", "/v1/audit-events?limit=100", key, nil)
			h.expect(a, 200, "")
			return len(a.json["data"].([]any))
		}
		before := auditCount()
		updatedAt := form.json["updated_at"]

		// The exported definition applied as is, and the same document twice: nothing changes.
		for _, doc := range []any{def.json, definitionDoc("Name")} {
			r = h.do("PUT", "/v1/forms/by-ref/contact", key, doc)
			h.expect(r, 200, "")
			if r.json["action"] != "unchanged" || len(strs(r.json["unchanged"])) != 3 {
				t.Fatalf("same document: %v", r.json)
			}
		}
		if n := auditCount(); n != before {
			t.Fatalf("unchanged apply wrote %d audit entries", n-before)
		}
		if got := h.do("GET", "/v1/forms/"+id, key, nil).json["updated_at"]; got != updatedAt {
			t.Fatalf("unchanged apply moved updated_at %v → %v", updatedAt, got)
		}

		// A relabel keeps the field; a dropped field is removed with its answers kept.
		doc := definitionDoc("Your name")
		doc["fields"] = doc["fields"].([]any)[:2]
		r = h.do("PUT", "/v1/forms/by-ref/contact?dry_run=true", key, doc)
		h.expect(r, 200, "")
		if r.json["action"] != "update" || !slices.Equal(strs(r.json["relabelled"]), []string{"name"}) || !slices.Equal(strs(r.json["removed"]), []string{"details"}) || r.json["stored_submissions"] != float64(1) {
			t.Fatalf("plan: %v", r.json)
		}
		// The plan says what changes on each field and how many answers a removed field has.
		if fc := r.json["field_changes"].(map[string]any); len(fc) != 1 || !slices.Equal(strs(fc["name"].(map[string]any)["aspects"]), []string{"label"}) {
			t.Fatalf("field_changes: %v", r.json["field_changes"])
		}
		if ra := r.json["removed_answers"].(map[string]any); len(ra) != 1 || ra["details"] != float64(1) || r.json["reordered"] != false {
			t.Fatalf("removed_answers: %v, reordered %v", ra, r.json["reordered"])
		}
		r = h.do("PUT", "/v1/forms/by-ref/contact", key, doc)
		h.expect(r, 200, "")
		if r.json["action"] != "update" || r.json["form_id"] != id {
			t.Fatalf("update: %v", r.json)
		}
		if n := auditCount(); n != before+1 {
			t.Fatalf("update wrote %d audit entries, want 1", n-before)
		}
		form = h.do("GET", "/v1/forms/"+id, key, nil)
		if got := fieldIDs(form.json); !slices.Equal(got, ids[:2]) {
			t.Fatalf("field IDs after update %v, want %v", got, ids[:2])
		}
		subs := h.do("GET", "/v1/forms/"+id+"/submissions", key, nil)
		h.expect(subs, 200, "")
		data := subs.json["data"].([]any)[0].(map[string]any)["data"].(map[string]any)
		if data[ids[0]] != "Ada" {
			t.Fatalf("answers after relabel: %v", data)
		}
		withRemoved := h.do("GET", "/v1/forms/"+id+"/submissions?include_removed=true", key, nil)
		if d := withRemoved.json["data"].([]any)[0].(map[string]any)["data"].(map[string]any); d[ids[2]] != "Hi" {
			t.Fatalf("removed field's answer lost: %v", d)
		}

		// A type change of a field with answers is refused, naming the count, then allowed; a
		// field nobody answered changes its type freely.
		retyped := definitionDoc("Your name")
		retyped["fields"] = retyped["fields"].([]any)[:2]
		unanswered := retyped["fields"].([]any)[1].(map[string]any)
		unanswered["type"] = "dropdown"
		r = h.do("PUT", "/v1/forms/by-ref/contact?dry_run=true", key, retyped)
		h.expect(r, 200, "")
		if fc := r.json["field_changes"].(map[string]any); !slices.Equal(strs(fc[unanswered["key"].(string)].(map[string]any)["aspects"]), []string{"type"}) {
			t.Fatalf("retyping an unanswered field: %v", r.json)
		}
		retyped["fields"].([]any)[0] = map[string]any{"key": "name", "label": "Your name", "type": "number"}
		r = h.do("PUT", "/v1/forms/by-ref/contact", key, retyped)
		h.expect(r, 422, "validation_failed")
		if !strings.Contains(r.Body.String(), "and 1 of the 1 stored answers to it are not valid number answers") {
			t.Fatalf("type change refusal: %s", r.Body.String())
		}
		r = h.do("PUT", "/v1/forms/by-ref/contact?allow_type_change=true", key, retyped)
		h.expect(r, 200, "")
		if !slices.Equal(strs(r.json["changed"]), []string{"name", "topic"}) {
			t.Fatalf("type change plan: %v", r.json)
		}
	})
}

// Bad definitions are refused with 422 naming the problem, and refs are per workspace.
func TestFormDefinitionBadInputAndIsolation(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		bad := func(doc map[string]any, path string) {
			t.Helper()
			r := h.do("PUT", "/v1/forms/by-ref/contact", key, doc)
			h.expect(r, 422, "validation_failed")
			found := false
			for _, d := range r.json["error"].(map[string]any)["details"].([]any) {
				if d.(map[string]any)["field"] == path {
					found = true
				}
			}
			if !found {
				t.Fatalf("422 does not name %s: %v", path, r.json)
			}
		}
		doc := definitionDoc("Name")
		doc["colour"] = "blue"
		bad(doc, "colour")
		doc = definitionDoc("Name", map[string]any{"key": "name", "label": "Again", "type": "text"})
		bad(doc, "fields[3].key")
		doc = definitionDoc("Name")
		doc["fields"].([]any)[2].(map[string]any)["show_if"] = map[string]any{"match": "all", "conditions": []any{map[string]any{"field_id": "nowhere", "operator": "equals", "value": "x"}}}
		bad(doc, "fields[2].show_if.conditions[0].field_id")
		doc = definitionDoc("Name")
		doc["ref"] = "another"
		bad(doc, "ref")
		h.expect(h.do("PUT", "/v1/forms/by-ref/Bad_Ref", key, definitionDoc("Name")), 422, "validation_failed")
		h.expect(h.do("PUT", "/v1/forms/by-ref/contact?dry_run=maybe", key, definitionDoc("Name")), 400, "invalid_request")
		h.expect(h.do("PUT", "/v1/forms/by-ref/contact", h.keys["read-only"], definitionDoc("Name")), 403, "forbidden")

		// Workspace B's form with the same ref is another form.
		h.expect(h.do("PUT", "/v1/forms/by-ref/contact", h.keys["other"], definitionDoc("Name")), 201, "")
		r := h.do("PUT", "/v1/forms/by-ref/contact", key, definitionDoc("Name"))
		h.expect(r, 201, "")
		h.expect(h.do("GET", "/v1/forms/"+r.json["form_id"].(string)+"/definition", h.keys["other"], nil), 404, "not_found")
	})
}

// The definition carries the settings without secrets: a captcha's secret and the logo stay on
// the server, the exported document applies back unchanged, and a changed setting shows in the
// plan as settings_changed.
func TestFormDefinitionSettings(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		doc := definitionDoc("Name")
		doc["settings"] = map[string]any{"thank_you_message": "Thanks!", "spam": map[string]any{"min_fill_seconds": 0,
			"captcha": map[string]any{"provider": "turnstile", "site_key": "0x4AAAAAAA", "secret": "captcha-secret-value"}}}
		r := h.do("PUT", "/v1/forms/by-ref/settings-demo", key, doc)
		h.expect(r, 201, "")
		id := r.json["form_id"].(string)
		def := h.do("GET", "/v1/forms/"+id+"/definition", key, nil)
		h.expect(def, 200, "")
		if strings.Contains(def.Body.String(), "captcha-secret-value") || strings.Contains(def.Body.String(), "secret") {
			t.Fatalf("the definition shows the captcha secret: %s", def.Body.String())
		}
		st := def.json["settings"].(map[string]any)
		if st["thank_you_message"] != "Thanks!" || st["spam"].(map[string]any)["captcha"].(map[string]any)["site_key"] != "0x4AAAAAAA" {
			t.Fatalf("definition settings: %v", st)
		}
		// Applied back as exported: unchanged, and the stored secret is kept.
		r = h.do("PUT", "/v1/forms/by-ref/settings-demo", key, def.json)
		h.expect(r, 200, "")
		if r.json["action"] != "unchanged" || r.json["settings_changed"] != false {
			t.Fatalf("exported definition applied back: %v", r.json)
		}
		form := h.do("GET", "/v1/forms/"+id, key, nil)
		if form.json["settings"].(map[string]any)["spam"].(map[string]any)["captcha"].(map[string]any)["secret_set"] != true {
			t.Fatalf("the captcha secret was lost: %v", form.json["settings"])
		}
		// Without settings, a PUT leaves them; with a change, the plan says so.
		delete(def.json, "settings")
		r = h.do("PUT", "/v1/forms/by-ref/settings-demo", key, def.json)
		if h.expect(r, 200, ""); r.json["action"] != "unchanged" {
			t.Fatalf("a definition without settings: %v", r.json)
		}
		st["thank_you_message"] = "Merci !"
		def.json["settings"] = st
		r = h.do("PUT", "/v1/forms/by-ref/settings-demo?dry_run=true", key, def.json)
		h.expect(r, 200, "")
		if r.json["action"] != "update" || r.json["settings_changed"] != true || len(strs(r.json["changed"])) != 0 {
			t.Fatalf("a settings change: %v", r.json)
		}
		// A bad setting is refused naming it.
		st["redirect_url"] = "javascript:alert(1)"
		h.expect(h.do("PUT", "/v1/forms/by-ref/settings-demo", key, def.json), 422, "validation_failed")
	})
}
