package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFieldKeysPagesAndRules(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		f := h.createForm(
			map[string]any{"label": "Your role", "type": "radio", "options": []string{"Student", "Employee"}, "required": true},
			map[string]any{"label": "Campaign", "type": "text", "hidden": true, "key": "utm_like"},
			map[string]any{"label": "Company", "type": "text", "required": true, "page": 2,
				"show_if": map[string]any{"match": "any", "conditions": []map[string]any{
					{"field_id": "your_role", "operator": "equals", "value": "Employee"},
					{"field_id": "your_role", "operator": "greater_than", "value": 3}}}},
			map[string]any{"label": "Your role", "type": "text", "page": 2},
		)
		fields := f["fields"].([]any)
		get := func(i int, k string) any { return fields[i].(map[string]any)[k] }
		ids := fieldIDs(f)
		if get(0, "key") != "your_role" || get(1, "key") != "utm_like" || get(3, "key") != "your_role_2" ||
			get(1, "hidden") != true || get(0, "hidden") != false || get(2, "page") != float64(2) || get(0, "page") != float64(1) || get(0, "show_if") != nil {
			t.Fatalf("fields %v", fields)
		}
		rule, _ := json.Marshal(get(2, "show_if"))
		want := `{"conditions":[{"field_id":"` + ids[0] + `","operator":"equals","value":"Employee"},{"field_id":"` + ids[0] + `","operator":"greater_than","value":3}],"match":"any"}`
		if string(rule) != want {
			t.Fatalf("show_if %s, want %s", rule, want)
		}

		// Stored and read back as written.
		r0 := h.do("GET", "/v1/forms/"+f["id"].(string), key, nil)
		h.expect(r0, 200, "")
		back, _ := json.Marshal(r0.json["fields"].([]any)[2].(map[string]any)["show_if"])
		if string(back) != want || r0.json["fields"].([]any)[1].(map[string]any)["hidden"] != true || r0.json["fields"].([]any)[3].(map[string]any)["key"] != "your_role_2" {
			t.Fatalf("read back %s", r0.Body.String())
		}

		// PATCH without keys keeps them; a relabelled field keeps its key.
		patch := []map[string]any{
			{"id": ids[0], "label": "Role", "type": "radio", "options": []string{"Student", "Employee"}},
			{"id": ids[1], "label": "Campaign", "type": "text", "hidden": true},
			{"label": "Role", "type": "text", "show_if": map[string]any{"match": "all", "conditions": []map[string]any{{"field_id": ids[0], "operator": "not_equals", "value": "Student"}}}},
		}
		r := h.do("PATCH", "/v1/forms/"+f["id"].(string), key, map[string]any{"fields": patch})
		h.expect(r, 200, "")
		got := r.json["fields"].([]any)
		if got[0].(map[string]any)["key"] != "your_role" || got[1].(map[string]any)["key"] != "utm_like" || got[2].(map[string]any)["key"] != "role" {
			t.Fatalf("patched %v", got)
		}

		newID := got[2].(map[string]any)["id"].(string)

		// Bad keys and rules: 422 with the field's path.
		for _, tc := range []struct {
			fields []map[string]any
			path   string
		}{
			{[]map[string]any{{"label": "A", "type": "text", "key": "Bad-Key"}}, "fields[0].key"},
			{[]map[string]any{{"label": "A", "type": "text", "key": "a"}, {"label": "B", "type": "text", "key": "a"}}, "fields[1].key"},
			{[]map[string]any{{"label": "A", "type": "text", "show_if": map[string]any{"match": "all", "conditions": []map[string]any{{"field_id": "b", "operator": "equals", "value": "x"}}}},
				{"label": "B", "type": "text"}}, "fields[0].show_if.conditions[0].field_id"},
			{[]map[string]any{{"label": "A", "type": "text"}, {"label": "B", "type": "text", "show_if": map[string]any{"match": "all", "conditions": []map[string]any{{"field_id": "a", "operator": "equals", "value": []string{"x"}}}}}},
				"fields[1].show_if.conditions[0].value"},
			{[]map[string]any{{"label": "A", "type": "text", "page": 0}}, "fields[0].page"},
			{[]map[string]any{{"label": "A", "type": "text", "show_if": map[string]any{"match": "all", "conditions": []map[string]any{}, "extra": 1}}}, "fields[0].show_if.extra"},
		} {
			r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Bad", "fields": tc.fields})
			h.expect(r, 422, "validation_failed")
			if !strings.Contains(r.Body.String(), `"`+tc.path+`"`) {
				t.Fatalf("%v: want a detail at %s, got %s", tc.fields, tc.path, r.Body.String())
			}
		}

		// API submissions follow the rules: a skipped required field is not required, its value dropped.
		r = h.do("POST", "/v1/forms/"+f["id"].(string)+"/submissions", key, map[string]any{"data": map[string]any{ids[0]: "Student", newID: "ACME"}})
		h.expect(r, 201, "")
		if data := r.json["data"].(map[string]any); data[newID] != nil || data[ids[0]] != "Student" {
			t.Fatalf("data %v", data)
		}
	})
}
