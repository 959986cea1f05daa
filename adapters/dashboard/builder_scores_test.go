package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/submission"
)

// TestBuilderScores: a score box beside each option of a choice field, saved through the same
// use case as the API, following its option when options change; a box without a number is
// refused next to the boxes with what was typed kept; all boxes empty removes the scores.
func TestBuilderScores(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		id := createForm(t, b, "Quiz")
		base := "/app/forms/" + id
		b.post(base+"/fields", url.Values{"type": {"radio"}, "label": {"Capital"}}).redirectsTo(t, base)
		b.post(base+"/fields", url.Values{"type": {"text"}, "label": {"Name"}}).redirectsTo(t, base)
		sctx, _ := systemCtx(t, db)
		ids, _ := fieldsOf(t, b, id)
		capital := ids[0]
		b.post(base+"/fields/"+capital, url.Values{"label": {"Capital"}, "type": {"radio"}, "options": {"Paris\nLyon"}}).redirectsTo(t, base)
		_, body := fieldsOf(t, b, id)
		if !strings.Contains(body, `<label for="sc-`+capital+`-0">Paris</label>`) || strings.Contains(body, `id="sc-`+ids[1]+`-0"`) {
			t.Fatalf("no score box beside each option of the choice field only: %s", body)
		}

		// Scores saved; a new option in the same save scores 0, the others keep theirs.
		b.post(base+"/fields/"+capital, url.Values{"label": {"Capital"}, "type": {"radio"}, "options": {"Paris\nNice\nLyon"},
			"score": {"2", "0.5"}, "score_for": {"Paris", "Lyon"}}).redirectsTo(t, base)
		v, err := h.app.Queries.GetForm.Handle(sctx, forms.GetForm{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Form.Fields()[0].Scores; len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 0.5 {
			t.Fatalf("scores %v", got)
		}
		_, body = fieldsOf(t, b, id)
		if !strings.Contains(body, `id="sc-`+capital+`-2" name="score" type="text" inputmode="decimal" size="8" value="0.5"`) {
			t.Fatalf("stored score not shown: %s", body)
		}

		// A box without a number: refused next to the boxes, what was typed kept, nothing saved.
		p := b.post(base+"/fields/"+capital, url.Values{"label": {"Capital"}, "type": {"radio"}, "options": {"Paris\nNice\nLyon"},
			"score": {"two", "1", "3"}, "score_for": {"Paris", "Nice", "Lyon"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `value="two" aria-invalid="true"`) || !strings.Contains(p.body, "Enter a number for each score") {
			t.Fatalf("refusal: %s", text(p.body))
		}
		// Too large: the domain's message, beside the boxes.
		p = b.post(base+"/fields/"+capital, url.Values{"label": {"Capital"}, "type": {"radio"}, "options": {"Paris\nNice\nLyon"},
			"score": {"2e10", "1", "3"}, "score_for": {"Paris", "Nice", "Lyon"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `id="sc-`+capital+`-error">A score must be`) {
			t.Fatalf("domain refusal: %s", text(p.body))
		}

		// The responses table and the response page show the score.
		sub, err := h.app.Commands.CaptureSubmission.Handle(sctx, capture.CaptureSubmission{FormID: id,
			Source: submission.SourceAPI, Data: map[string]submission.Input{capital: "Lyon"}})
		if err != nil {
			t.Fatal(err)
		}
		table := b.get(base+"/responses").expect(t, http.StatusOK).body
		if !strings.Contains(table, `<th scope="col">Score</th>`) || !strings.Contains(table, `<td data-label="Score"><div class="v">0.5</div></td>`) {
			t.Fatalf("responses table: %s", table)
		}
		page := b.get(base+"/responses/"+sub.ID()).expect(t, http.StatusOK).body
		if !strings.Contains(page, "<dt>Score</dt><dd>0.5</dd>") {
			t.Fatalf("response page: %s", text(page))
		}

		// Every box empty removes the scores.
		b.post(base+"/fields/"+capital, url.Values{"label": {"Capital"}, "type": {"radio"}, "options": {"Paris\nNice\nLyon"},
			"score": {"", "", ""}, "score_for": {"Paris", "Nice", "Lyon"}}).redirectsTo(t, base)
		if v, _ = h.app.Queries.GetForm.Handle(sctx, forms.GetForm{ID: id}); v.Form.HasScores() {
			t.Fatal("scores not removed")
		}
	})
}
