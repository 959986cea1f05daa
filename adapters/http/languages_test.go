package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"testing"
)

func TestFormLanguagesRoundTripAndViolations(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		body := map[string]any{
			"name": "Feedback", "languages": []string{"en", "DE", "fr"},
			"translations": map[string]any{"de": map[string]any{"name": "Rückmeldung", "thank_you_message": "Danke!"}},
			"fields": []map[string]any{
				{"label": "Colour", "type": "radio", "options": []string{"Red", "Blue"},
					"translations": map[string]any{"de": map[string]any{"label": "Farbe", "options": []string{"Rot", "Blau"}}}},
			},
		}
		r := h.do("POST", "/v1/forms", key, body)
		h.expect(r, 201, "")
		id := r.json["id"].(string)
		check := func(r response) {
			t.Helper()
			langs, _ := json.Marshal(r.json["languages"])
			tr, _ := json.Marshal(r.json["translations"])
			ftr, _ := json.Marshal(r.json["fields"].([]any)[0].(map[string]any)["translations"])
			if string(langs) != `["en","de","fr"]` || string(tr) != `{"de":{"name":"Rückmeldung","thank_you_message":"Danke!"}}` ||
				string(ftr) != `{"de":{"label":"Farbe","options":["Rot","Blau"]}}` {
				t.Fatalf("languages %s translations %s field %s", langs, tr, ftr)
			}
		}
		check(r)
		check(h.do("GET", "/v1/forms/"+id, key, nil))

		// A single-language form shows none.
		plain := h.createForm(map[string]any{"label": "A", "type": "text"})
		if l, _ := json.Marshal(plain["languages"]); string(l) != `[]` {
			t.Fatalf("plain languages %s", l)
		}

		fieldID := fieldIDs(r.json)[0]
		for _, tc := range []struct {
			name  string
			patch map[string]any
			path  string
		}{
			{"unknown language", map[string]any{"translations": map[string]any{"es": map[string]any{"name": "Comentarios"}}}, "translations.es"},
			{"default language", map[string]any{"translations": map[string]any{"en": map[string]any{"name": "Feedback"}}}, "translations.en"},
			{"bad tag", map[string]any{"languages": []string{"en", "xx-!!"}}, "languages[1]"},
			{"options count", map[string]any{"fields": []map[string]any{{"id": fieldID, "label": "Colour", "type": "radio", "options": []string{"Red", "Blue"},
				"translations": map[string]any{"fr": map[string]any{"options": []string{"Rouge"}}}}}}, "fields[0].translations.fr.options"},
			{"unknown property", map[string]any{"translations": map[string]any{"de": map[string]any{"title": "x"}}}, "translations.de.title"},
		} {
			r := h.do("PATCH", "/v1/forms/"+id, key, tc.patch)
			h.expect(r, 422, "validation_failed")
			if !hasViolation(r, tc.path) {
				t.Errorf("%s: no violation at %s: %s", tc.name, tc.path, r.Body.String())
			}
		}

		// Dropping a language drops its translations.
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"languages": []string{"en", "fr"}})
		h.expect(r, 200, "")
		if tr, _ := json.Marshal(r.json["translations"]); string(tr) != `{}` {
			t.Fatalf("translations after dropping de: %s", tr)
		}
	})
}

func TestExportHasALanguageColumnOnlyWithLanguages(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		header := func(body map[string]any) []string {
			t.Helper()
			r := h.do("POST", "/v1/forms", key, body)
			h.expect(r, 201, "")
			id := r.json["id"].(string)
			h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{"colour": "Red"}}), 201, "")
			res := h.do("GET", "/v1/forms/"+id+"/submissions/export", key, nil)
			h.expect(res, 200, "")
			rows, err := csv.NewReader(bytes.NewReader(res.Body.Bytes())).ReadAll()
			if err != nil || len(rows) != 2 || len(rows[0]) != len(rows[1]) {
				t.Fatalf("export %q: %v", res.Body.String(), err)
			}
			return rows[0]
		}
		field := map[string]any{"label": "Colour", "type": "radio", "options": []string{"Red", "Blue"}}
		plain := header(map[string]any{"name": "Plain", "fields": []any{field}})
		multi := header(map[string]any{"name": "Multi", "languages": []string{"en", "de"}, "fields": []any{field}})
		if slices.Contains(plain, "language") || multi[len(multi)-1] != "language" || len(multi) != len(plain)+1 {
			t.Fatalf("plain %v, with languages %v", plain, multi)
		}
	})
}

// Forms as code: a definition carries the languages and every translation, and applying it
// back changes nothing.
func TestDefinitionKeepsLanguages(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		doc := map[string]any{
			"name": "Feedback", "languages": []string{"en", "de"},
			"translations": map[string]any{"de": map[string]any{"name": "Rückmeldung"}},
			"fields": []map[string]any{{"key": "colour", "label": "Colour", "type": "radio", "options": []string{"Red", "Blue"},
				"translations": map[string]any{"de": map[string]any{"label": "Farbe", "options": []string{"Rot", "Blau"}}}}},
		}
		r := h.do("PUT", "/v1/forms/by-ref/feedback", key, doc)
		h.expect(r, 201, "")
		id := r.json["form_id"].(string)
		def := h.do("GET", "/v1/forms/"+id+"/definition", key, nil)
		h.expect(def, 200, "")
		tr, _ := json.Marshal(def.json["fields"].([]any)[0].(map[string]any)["translations"])
		if l, _ := json.Marshal(def.json["languages"]); string(l) != `["en","de"]` || string(tr) != `{"de":{"label":"Farbe","options":["Rot","Blau"]}}` {
			t.Fatalf("definition %s", def.Body.String())
		}
		back := h.do("PUT", "/v1/forms/by-ref/feedback", key, def.json)
		h.expect(back, 200, "")
		if back.json["action"] != "unchanged" {
			t.Fatalf("applying the definition back: %s", back.Body.String())
		}
	})
}
