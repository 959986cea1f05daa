package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/submission"
)

// TestBuilderTranslations sets a form's languages and translates it side by side without
// JavaScript: missing texts are counted and marked, a refusal is shown next to its input
// with the typed values kept, and an edit of a question in the builder keeps its translations.
func TestBuilderTranslations(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		id := createForm(t, b, "Feedback")
		base := "/app/forms/" + id
		b.post(base+"/fields", url.Values{"type": {"radio"}, "label": {"Colour"}}).redirectsTo(t, base)
		ids, body := fieldsOf(t, b, id)
		colour := ids[0]
		b.post(base+"/fields/"+colour, url.Values{"label": {"Colour"}, "options": {"Red\nBlue"}, "key": {"colour"}}).redirectsTo(t, base)
		if !strings.Contains(body, base+"/translations") {
			t.Fatal("the builder does not link to the languages page")
		}

		// No languages yet; a bad tag is refused next to the input, the typed text kept.
		p := b.get(base+"/translations").expect(t, http.StatusOK)
		if !strings.Contains(text(p.body), "Add a second language") {
			t.Fatalf("languages page: %s", text(p.body))
		}
		p = b.post(base+"/translations", url.Values{"_action": {"languages"}, "languages": {"en, not a tag!"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `value="en, not a tag!"`) || !strings.Contains(p.body, `id="languages-error">`) || !strings.Contains(text(p.body), "not a BCP 47 language tag") {
			t.Fatalf("bad languages: %s", text(p.body))
		}
		p = b.postFollow(base+"/translations", url.Values{"_action": {"languages"}, "languages": {"en, DE fr"}})
		// German first: the form's name, the label and the two options are missing.
		if !strings.Contains(text(p.body), "Translate into de (German)") || !strings.Contains(text(p.body), "4 missing") || !strings.Contains(p.body, `class="missing"`) {
			t.Fatalf("German editor: %s", text(p.body))
		}

		// One option translated but not the other: refused at that option, typed values kept.
		f := url.Values{"lang": {"de"}, "t_name": {"Rückmeldung"}, "f_" + colour + "_label": {"Farbe"},
			"f_" + colour + "_opt_0": {"Rot"}}
		p = b.post(base+"/translations", f).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `id="f_`+colour+`_opt_1-error"`) || !strings.Contains(p.body, `value="Farbe"`) {
			t.Fatalf("half the options: %s", p.body)
		}
		f.Set("f_"+colour+"_opt_1", "Blau")
		p = b.postFollow(base+"/translations", f)
		if !strings.Contains(text(p.body), "de (German) complete") || !strings.Contains(text(p.body), "fr (French) 4 missing") {
			t.Fatalf("after saving German: %s", text(p.body))
		}

		// Editing the question in the builder keeps its translations.
		b.post(base+"/fields/"+colour, url.Values{"label": {"Colour"}, "options": {"Red\nBlue"}, "key": {"colour"}, "required": {"on"}}).redirectsTo(t, base)
		p = b.get(base+"/translations?lang=de").expect(t, http.StatusOK)
		if !strings.Contains(p.body, `value="Blau"`) || !strings.Contains(p.body, `value="Rückmeldung"`) {
			t.Fatalf("translations lost: %s", text(p.body))
		}

		// The responses table of a form with languages has a Language column.
		ctx := context.Background()
		ws, err := persistence.NewWorkspaceRepository(db).Oldest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sys := auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID()))
		if _, err := h.app.Commands.CaptureSubmission.Handle(sys, capture.CaptureSubmission{FormID: id, Source: submission.SourceAPI,
			Data: map[string]submission.Input{colour: "Blue"}}); err != nil {
			t.Fatal(err)
		}
		p = b.get(base+"/responses").expect(t, http.StatusOK)
		if !strings.Contains(p.body, `<th scope="col">Language</th>`) || !strings.Contains(p.body, `<td data-label="Language">`) {
			t.Fatalf("responses table: %s", text(p.body))
		}
	})
}
