package e2e_test

import (
	"testing"
)

// TestBrowserRecallScores drives a three-page quiz in Chromium with JavaScript on and off, at
// 390 px and at desktop width (test/browser/recall_scores.spec.mjs): an earlier answer recalled
// live on page 1 and on page 2 after Next (escaped), the score and the name on the thank-you
// page, axe-core clean on every state. Then the four submissions are read through the API:
// each has metadata.score 1.75.
func TestBrowserRecallScores(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

	in := newInstance(t, "", "")
	adminKey := in.cli("keys", "create", "--name", "quiz", "--scope", "admin")
	in.startServe()
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name": "Browser test: quiz",
		"fields": []map[string]any{
			{"label": "Your name", "type": "text", "required": true, "key": "name"},
			{"label": "Capital of France", "type": "radio", "required": true, "options": []string{"Paris", "Lyon"}, "scores": []float64{1, 0}},
			{"label": "Anything to add, {{name}}?", "type": "textarea"},
			{"label": "How old are you, {{name}}?", "type": "number", "required": true, "page": 2},
			{"label": "Primes", "type": "checkbox", "options": []string{"2", "3", "4"}, "scores": []float64{0.5, 0.25, -1}, "page": 3},
		},
		"settings": map[string]any{
			"thank_you_message": "Well done {{name}}: {{score}} points.",
			"spam":              map[string]any{"honeypot": true, "min_fill_seconds": 1, "proof_of_work": false},
		},
	})
	if ids := fieldIDsByKey(r); len(ids) != 5 {
		t.Fatalf("field keys: %v (%s)", ids, r.raw)
	}
	artifacts := artifactsDir(t)
	runNode(t, node, []string{"FORMWARD_CHROMIUM=" + chromium, "FORMWARD_MIN_FILL_SECONDS=1"},
		"recall_scores.spec.mjs", in.baseURL+"/f/"+formID, artifacts)

	r, list := submissionsOf(t, in, adminKey, formID)
	if len(list) != 4 {
		t.Fatalf("want 4 submissions (JavaScript on and off, two widths), got %d: %s", len(list), r.raw)
	}
	for _, item := range list {
		sub, _ := item.(map[string]any)
		meta, _ := sub["metadata"].(map[string]any)
		if meta["score"] != 1.75 {
			t.Errorf("metadata.score = %v, want 1.75: %v", meta["score"], sub)
		}
	}
}
