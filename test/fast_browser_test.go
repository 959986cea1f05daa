package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fastFillSeconds is the form's minimum fill time: long enough that the scripted respondent
// fills every field before it has passed even on a loaded 2-core machine (seen: 6 s).
const fastFillSeconds = 10

// TestBrowserFastRespondent drives a respondent who fills the form faster than its minimum
// fill time, in Chromium with JavaScript off and on (test/browser/fast.spec.mjs):
// without JavaScript the post is refused for its timing and the form comes back with every
// answer and a notice, then is accepted when sent again; with JavaScript the page's script
// holds the post until the fill time has passed, and a post that left before the script could
// hold it comes back the same way. axe-core finds nothing on the form drawn again. Then the
// three submissions are read through the API: every answer, the hidden field and the file.
func TestBrowserFastRespondent(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

	in := newInstance(t, "", "")
	adminKey := in.cli("keys", "create", "--name", "fast", "--scope", "admin")
	in.startServe()
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name": "Browser test: a fast respondent",
		"fields": []map[string]any{
			{"label": "Name", "type": "text", "required": true},
			{"label": "Email", "type": "email"},
			{"label": "Comments", "type": "textarea"},
			{"label": "Ticket", "type": "dropdown", "options": []string{"Standard", "Student"}},
			{"label": "Diet", "type": "radio", "options": []string{"None", "Vegan"}},
			{"label": "Sessions", "type": "checkbox", "options": []string{"Keynote", "Workshops", "Dinner"}},
			{"label": "I agree", "type": "checkbox", "required": true},
			{"label": "Arrival", "type": "date"},
			{"label": "Campaign", "type": "text", "hidden": true},
			{"label": "CV", "type": "file"},
		},
		"settings": map[string]any{"spam": map[string]any{"honeypot": true, "min_fill_seconds": fastFillSeconds, "proof_of_work": false}},
	})
	ids := fieldIDsByKey(r)
	if len(ids) != 10 || ids["campaign"] == "" || ids["i_agree"] == "" || ids["cv"] == "" {
		t.Fatalf("field keys: %v (%s)", ids, r.raw)
	}

	upload := filepath.Join(t.TempDir(), "cv.txt")
	if err := os.WriteFile(upload, []byte("Curriculum vitae of Ada Lovelace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(map[string]any{"ids": ids, "upload": upload, "minFillSeconds": fastFillSeconds})
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, node, []string{"FORMWARD_CHROMIUM=" + chromium, "FORMWARD_FAST_FORM=" + string(spec)},
		"fast.spec.mjs", in.baseURL+"/f/"+formID, artifactsDir(t))

	r, list := submissionsOf(t, in, adminKey, formID)
	var campaigns []string
	for _, item := range list {
		sub, _ := item.(map[string]any)
		data, _ := sub["data"].(map[string]any)
		for key, want := range map[string]string{"name": "Ada Lovelace", "email": "ada@example.org", "ticket": "Student", "diet": "Vegan",
			"i_agree": "true", "arrival": "2026-03-14", "comments": "First line\nSecond <b>line</b> & \"quotes\""} {
			got, _ := data[ids[key]].(string)
			if got = strings.ReplaceAll(got, "\r\n", "\n"); got != want { // a browser sends a text area's lines with CRLF
				t.Errorf("%s = %q, want %q", key, got, want)
			}
		}
		if got, _ := json.Marshal(data[ids["sessions"]]); string(got) != `["Keynote","Dinner"]` {
			t.Errorf("sessions = %s", got)
		}
		if len(fileURLs(data[ids["cv"]])) == 0 {
			t.Errorf("no file in %v", data)
		}
		c, _ := data[ids["campaign"]].(string)
		campaigns = append(campaigns, c)
	}
	sort.Strings(campaigns)
	if strings.Join(campaigns, " ") != "fast-js fast-js-refused fast-nojs" {
		t.Fatalf("want one submission per run (JavaScript off, on, on but refused), got campaigns %v: %s", campaigns, r.raw)
	}
}
