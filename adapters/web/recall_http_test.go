package web_test

import (
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

// Recall without JavaScript: page 2's label and help show the answer given on page 1 after
// Next, escaped (an answer with markup reads as text); the error summary names the field by
// its recalled label; the thank-you page recalls answers and the score.
func TestRecallAcrossPagesWithoutJavaScript(t *testing.T) {
	h := newHarness(t)
	s := lenient()
	msg := "Thanks {{name}}: {{score}} points."
	s.ThankYouMessage = &msg
	help := "We ask {{ name }} only once."
	f := h.form(form.StatusPublished, s,
		form.FieldSpec{Label: "Your name", Type: "text", Required: true, Key: ptr("name")},
		form.FieldSpec{Label: "Colour", Type: "radio", Options: []string{"Red", "Blue"}, Scores: scoresOf(1, 2)},
		form.FieldSpec{Label: "How old are you, {{name}}? You like {{colour}}.", Help: &help, Type: "number", Required: true, Page: intp(2)},
	)
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Key] = fl.ID
	}
	first := h.get("/f/" + f.ID()).Body.String()
	if strings.Contains(first, "data-recall") {
		t.Fatalf("page 1 recalls nothing: %s", first)
	}
	v := hiddenInputs(first)
	v.Set("_nav", "next")
	v.Set(ids["name"], "<b>x</b>")
	v.Set(ids["colour"], "Blue")
	rec := h.postForm("/f/"+f.ID()+"/page", v)
	page := rec.Body.String()
	want := `How old are you, <span data-recall="` + ids["name"] + `">&lt;b&gt;x&lt;/b&gt;</span>? You like <span data-recall="` + ids["colour"] + `">Blue</span>.`
	if rec.Code != 200 || !strings.Contains(page, want) || !strings.Contains(page, `We ask <span data-recall="`+ids["name"]+`">&lt;b&gt;x&lt;/b&gt;</span> only once.`) {
		t.Fatalf("page 2: %d %s", rec.Code, page)
	}
	if strings.Contains(page, "<b>x</b>") {
		t.Fatal("an answer was drawn as markup")
	}
	// Next from page 2 without the age: the error summary reads the recalled label.
	carried := hiddenInputs(page)
	carried.Set(ids["name"], "<b>x</b>") // hiddenInputs reads the attribute as written
	carried.Set("_nav", "next")
	rec = h.postForm("/f/"+f.ID()+"/page", carried)
	if !strings.Contains(rec.Body.String(), "How old are you, &lt;b&gt;x&lt;/b&gt;? You like Blue.") {
		t.Fatalf("error summary: %s", rec.Body.String())
	}
	// The final post: the thank-you page recalls the name and shows the score.
	last := hiddenInputs(page)
	last.Set(ids["name"], "<b>x</b>")
	last.Set(ids["how_old_are_you_name_you_like_colour"], "41")
	last.Del("_page")
	rec = h.postForm("/f/"+f.ID(), last)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Thanks &lt;b&gt;x&lt;/b&gt;: 2 points.") {
		t.Fatalf("thank-you page: %d %s", rec.Code, rec.Body.String())
	}
}
