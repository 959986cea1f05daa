package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

func scoresOf(xs ...float64) *[]float64 { return &xs }

// A quiz: the thank-you page shows the stored score, written as people read it.
func TestScoreOnTheThankYouPage(t *testing.T) {
	h := newHarness(t)
	s := lenient()
	msg := "You scored {{ score }} points."
	s.ThankYouMessage = &msg
	f := h.form(form.StatusPublished, s,
		form.FieldSpec{Label: "Capital of France", Type: "radio", Options: []string{"Paris", "Lyon"}, Scores: scoresOf(1, 0)},
		form.FieldSpec{Label: "Primes", Type: "checkbox", Options: []string{"2", "3", "4"}, Scores: scoresOf(2.5, 0.1, -1)},
	)
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Key] = fl.ID
	}
	v := hiddenInputs(h.get("/f/" + f.ID()).Body.String())
	v.Set(ids["capital_of_france"], "Paris")
	v[ids["primes"]] = []string{"2", "3"}
	rec := h.postForm("/f/"+f.ID(), v)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "You scored 3.6 points.") {
		t.Fatalf("thank-you page: %d %s", rec.Code, rec.Body.String())
	}
	subs := h.submissions(f)
	if len(subs) != 1 || subs[0].Metadata().Score == nil || *subs[0].Metadata().Score != 3.6 {
		t.Fatalf("stored %v", subs)
	}

	// A form without scores shows its message as written.
	plain := h.form(form.StatusPublished, s, form.FieldSpec{Label: "Name", Type: "text"})
	pv := hiddenInputs(h.get("/f/" + plain.ID()).Body.String())
	pv.Set(plain.Fields()[0].ID, "Ada")
	rec = h.postForm("/f/"+plain.ID(), pv)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "You scored {{ score }} points.") {
		t.Fatalf("unscored thank-you page: %d %s", rec.Code, rec.Body.String())
	}
	if subs := h.submissions(plain); len(subs) != 1 || subs[0].Metadata().Score != nil {
		t.Fatalf("an unscored form stored a score: %v", subs)
	}
}

// The builder's preview thanks with the score the answers would store.
func TestScoreInThePreview(t *testing.T) {
	h := newHarness(t)
	s := form.DefaultSettings()
	msg := "Score: {{score}}"
	s.ThankYouMessage = &msg
	f := h.form(form.StatusDraft, &s, form.FieldSpec{Label: "Q", Type: "dropdown", Options: []string{"a", "b"}, Scores: scoresOf(4, -2)})
	status, page := preview(t, f, url.Values{f.Fields()[0].ID: {"b"}})
	if status != 200 || !strings.Contains(page, "Score: -2") {
		t.Fatalf("preview: %d %s", status, page)
	}
}
