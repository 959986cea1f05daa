package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// Scores on choice fields: stored with the form, refused where they do not fit, summed into
// metadata.score of each submission (recomputed on PATCH), and exported as a score column.
func TestScoresAPI(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		f := h.createForm(
			map[string]any{"label": "Capital", "type": "radio", "options": []string{"Paris", "Lyon"}, "scores": []float64{1, 0}},
			map[string]any{"label": "Primes", "type": "checkbox", "options": []string{"2", "3", "4"}, "scores": []float64{0.5, 0.25, -1}},
			map[string]any{"label": "Name", "type": "text"},
		)
		id := f["id"].(string)
		ids := fieldIDs(f)
		fields := f["fields"].([]any)
		if got := fields[1].(map[string]any)["scores"]; len(got.([]any)) != 3 || got.([]any)[0] != 0.5 {
			t.Fatalf("scores %v", got)
		}
		if _, shown := fields[2].(map[string]any)["scores"]; shown {
			t.Fatal("scores shown on a field without them")
		}
		r := h.do("GET", "/v1/forms/"+id, key, nil)
		h.expect(r, 200, "")
		if got := r.json["fields"].([]any)[0].(map[string]any)["scores"]; got == nil || got.([]any)[0] != float64(1) {
			t.Fatalf("read back %s", r.Body.String())
		}

		// Bad scores: 422 with the field's path, code and a clear message.
		for _, tc := range []struct {
			field      map[string]any
			path, code string
			message    string
		}{
			{map[string]any{"label": "A", "type": "text", "scores": []float64{1}}, "fields[0].scores", "not_allowed", "only allowed"},
			{map[string]any{"label": "A", "type": "radio", "options": []string{"a", "b", "c"}, "scores": []float64{1, 2}}, "fields[0].scores", "length_mismatch",
				"scores must have one number per option (3 options, 2 scores)"},
			{map[string]any{"label": "A", "type": "radio", "options": []string{"a"}, "scores": []float64{2e9}}, "fields[0].scores[0]", "invalid_value", "a score must be"},
			{map[string]any{"label": "A", "type": "radio", "options": []string{"a"}, "scores": []string{"one"}}, "fields[0].scores", "invalid_type", "array of numbers"},
		} {
			r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Bad", "fields": []map[string]any{tc.field}})
			h.expect(r, 422, "validation_failed")
			found := false
			for _, d := range r.json["error"].(map[string]any)["details"].([]any) {
				m := d.(map[string]any)
				if m["field"] == tc.path && m["code"] == tc.code && strings.Contains(m["message"].(string), tc.message) {
					found = true
				}
			}
			if !found {
				t.Fatalf("%v: want %s %s %q, got %s", tc.field, tc.path, tc.code, tc.message, r.Body.String())
			}
		}

		// Options that change without scores keep the stored scores, which must still match.
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"fields": []map[string]any{
			{"id": ids[0], "label": "Capital", "type": "radio", "options": []string{"Paris", "Lyon", "Nice"}},
			{"id": ids[1], "label": "Primes", "type": "checkbox", "options": []string{"2", "3", "4"}},
			{"id": ids[2], "label": "Name", "type": "text"},
		}})
		h.expect(r, 422, "validation_failed")
		if !strings.Contains(r.Body.String(), "(3 options, 2 scores)") {
			t.Fatalf("body %s", r.Body.String())
		}

		// A submission stores its score; PATCH recomputes it.
		r = h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{ids[0]: "Paris", ids[1]: []string{"2", "3"}, ids[2]: "Ada"}})
		h.expect(r, 201, "")
		subID := r.json["id"].(string)
		if got := r.json["metadata"].(map[string]any)["score"]; got != 1.75 {
			t.Fatalf("score %v in %s", got, r.Body.String())
		}
		r = h.do("GET", "/v1/forms/"+id+"/submissions/"+subID, key, nil)
		h.expect(r, 200, "")
		if got := r.json["metadata"].(map[string]any)["score"]; got != 1.75 {
			t.Fatalf("stored score %v", got)
		}
		r = h.do("PATCH", "/v1/forms/"+id+"/submissions/"+subID, key, map[string]any{"data": map[string]any{ids[1]: []string{"4"}}})
		h.expect(r, 200, "")
		if got := r.json["metadata"].(map[string]any)["score"]; got != float64(0) {
			t.Fatalf("score after PATCH %v", got)
		}
		r = h.do("GET", "/v1/forms/"+id+"/submissions/"+subID, key, nil)
		if got := r.json["metadata"].(map[string]any)["score"]; got != float64(0) {
			t.Fatalf("stored score after PATCH %v", got)
		}

		// The CSV export ends with a score column.
		res := h.do("GET", "/v1/forms/"+id+"/submissions/export", key, nil)
		h.expect(res, 200, "")
		rows, err := csv.NewReader(bytes.NewReader(res.Body.Bytes())).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("CSV %v: %s", err, res.Body.String())
		}
		if last := len(rows[0]) - 1; rows[0][last] != "score" || rows[1][last] != "0" {
			t.Fatalf("CSV %q", rows)
		}
		// The NDJSON export carries metadata.score.
		res = h.do("GET", "/v1/forms/"+id+"/submissions/export?format=ndjson", key, nil)
		h.expect(res, 200, "")
		if !strings.Contains(res.Body.String(), `"score":0`) {
			t.Fatalf("NDJSON %s", res.Body.String())
		}

		// A form without scores shows and exports no score.
		plain := h.createForm(map[string]any{"label": "Size", "type": "radio", "options": []string{"S", "M"}})
		r = h.do("POST", "/v1/forms/"+plain["id"].(string)+"/submissions", key, map[string]any{"data": map[string]any{fieldIDs(plain)[0]: "S"}})
		h.expect(r, 201, "")
		if _, shown := r.json["metadata"].(map[string]any)["score"]; shown {
			t.Fatalf("a form without scores shows a score: %s", r.Body.String())
		}
		res = h.do("GET", "/v1/forms/"+plain["id"].(string)+"/submissions/export", key, nil)
		if strings.Contains(strings.SplitN(res.Body.String(), "\n", 2)[0], "score") {
			t.Fatalf("CSV header %s", res.Body.String())
		}
	})
}
