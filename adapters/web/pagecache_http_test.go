package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// The page is served from the cache: every view has its own render token and challenge, the
// rest is the same, and a changed form shows its new page on the very next view.
func TestCachedPagePerViewValuesAndChanges(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, guarded(), form.FieldSpec{Label: "Name", Type: "text", Required: true}, form.FieldSpec{Label: "Topic", Type: "dropdown", Options: []string{"A", "B"}})
	strip := func(s string) string {
		s = tokenRe.ReplaceAllString(s, `name="_token" value="TOKEN"`)
		return challengeRe.ReplaceAllString(s, `data-pow="CHALLENGE"`)
	}
	first, second := h.get("/f/"+f.ID()), h.get("/f/"+f.ID())
	if first.Code != 200 || second.Code != 200 {
		t.Fatalf("GET: %d, %d", first.Code, second.Code)
	}
	b1, b2 := first.Body.String(), second.Body.String()
	t1, t2 := tokenRe.FindStringSubmatch(b1), tokenRe.FindStringSubmatch(b2)
	c1, c2 := challengeRe.FindStringSubmatch(b1), challengeRe.FindStringSubmatch(b2)
	if t1 == nil || t2 == nil || c1 == nil || c2 == nil {
		t.Fatal("no token or challenge in the page")
	}
	if t1[1] == t2[1] || c1[1] == c2[1] {
		t.Fatal("two views got the same render token or challenge")
	}
	if strip(b1) != strip(b2) {
		t.Fatal("two views of one form version differ beyond the token and challenge")
	}
	if first.Header().Get("Content-Security-Policy") == "" || first.Header().Get("Cache-Control") != "no-store" {
		t.Fatal("cached page without its security headers")
	}

	// UTM inputs come from each view's query string.
	utm := h.get("/f/" + f.ID() + "?utm_source=news%22%3C%3E%2B&utm_medium=mail").Body.String()
	if !strings.Contains(utm, `<input type="hidden" name="_utm_source" value="news&#34;&lt;&gt;&#43;"><input type="hidden" name="_utm_medium" value="mail">`) {
		t.Fatalf("UTM inputs missing or mis-escaped: %s", utm)
	}
	if strings.Contains(h.get("/f/"+f.ID()).Body.String(), "_utm_source") {
		t.Fatal("a view without UTM parameters shows another view's UTM inputs")
	}

	// Changing the form changes the page at once.
	ctx := context.Background()
	fields := f.Fields()
	specs := []form.FieldSpec{{ID: fields[0].ID, Label: "Full name", Type: "text", Required: true}, {ID: fields[1].ID, Label: "Topic", Type: "dropdown", Options: []string{"A", "B"}}}
	if _, err := h.app.Commands.UpdateForm.Handle(h.owner(ctx), forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Fields: &specs}}); err != nil {
		t.Fatal(err)
	}
	after := h.get("/f/" + f.ID()).Body.String()
	if !strings.Contains(after, ">Full name <span") || strings.Contains(after, ">Name <span") {
		t.Fatalf("the page still shows the old label: %s", after)
	}
	off := form.DefaultSettings()
	off.Spam.ProofOfWork = false
	if _, err := h.app.Commands.UpdateForm.Handle(h.owner(ctx), forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Settings: &off}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.get("/f/"+f.ID()).Body.String(), "data-pow=") {
		t.Fatal("the page still asks for proof of work after it was turned off")
	}
}
