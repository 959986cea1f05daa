package e2e_test

import (
	"net/http"
	"testing"
)

// TestBrowserLanguages runs one three-page form in German (by Accept-Language) and in French
// (by ?lang=fr) in Chromium, with JavaScript on and off, at 390 px and desktop width, axe-core
// on every state (test/browser/languages.spec.mjs); then the API shows each submission's
// metadata.language, and the chosen colour stored in the default language.
func TestBrowserLanguages(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

	in := newInstance(t, "", "")
	adminKey := in.cli("keys", "create", "--name", "languages", "--scope", "admin")
	in.startServe()
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name": "Feedback", "languages": []string{"en", "de", "fr"},
		"translations": map[string]any{"de": map[string]any{"name": "Rückmeldung"}, "fr": map[string]any{"name": "Avis"}},
		"fields": []map[string]any{
			{"label": "Colour", "type": "radio", "required": true, "options": []string{"Red", "Blue"}, "translations": map[string]any{
				"de": map[string]any{"label": "Farbe", "options": []string{"Rot", "Blau"}},
				"fr": map[string]any{"label": "Couleur", "options": []string{"Rouge", "Bleu"}}}},
			{"label": "Name", "type": "text", "required": true, "page": 2, "translations": map[string]any{"fr": map[string]any{"label": "Nom"}}},
			{"label": "Email", "type": "email", "required": true, "page": 3, "translations": map[string]any{
				"de": map[string]any{"label": "E-Mail"}, "fr": map[string]any{"label": "Courriel"}}},
		},
		"settings": map[string]any{"spam": map[string]any{"honeypot": true, "min_fill_seconds": 1, "proof_of_work": false}},
	})
	ids := fieldIDsByKey(r)

	runNode(t, node, []string{"FORMWARD_CHROMIUM=" + chromium, "FORMWARD_MIN_FILL_SECONDS=1"},
		"languages.spec.mjs", in.baseURL+"/f/"+formID, artifactsDir(t))

	r, list := submissionsOf(t, in, adminKey, formID)
	if len(list) != 4 {
		t.Fatalf("want 4 submissions, got %d: %s", len(list), r.raw)
	}
	langs := map[string]int{}
	for _, item := range list {
		sub, _ := item.(map[string]any)
		data, _ := sub["data"].(map[string]any)
		if data[ids["colour"]] != "Blue" {
			t.Errorf("the colour is not stored in the default language: %v", data)
		}
		meta, _ := sub["metadata"].(map[string]any)
		l, _ := meta["language"].(string)
		langs[l]++
	}
	if langs["de"] != 2 || langs["fr"] != 2 {
		t.Fatalf("metadata.language: %v (%s)", langs, r.raw)
	}
	in.do("GET", "/v1/forms/"+formID, adminKey, nil).expect(t, http.StatusOK)
}
