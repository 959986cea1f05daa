package web_test

import (
	"net/url"
	"testing"

	"github.com/formward/formward/domain/form"
)

// The start beacon is under the public rate limit, counted apart from the posts, and needs a
// render token of the form.
func TestStartBeaconLimits(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	tok, _ := h.page(f, "")
	for i := range 10 {
		if rec := h.postForm("/f/"+f.ID()+"/start", url.Values{"_token": {tok}}); rec.Code != 204 {
			t.Fatalf("start %d: %d %s", i, rec.Code, rec.Body.String())
		}
	}
	rec := h.postForm("/f/"+f.ID()+"/start", url.Values{"_token": {tok}})
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("11th start in a minute: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	// The posts have their own count: the respondent can still submit.
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {tok}, f.Fields()[0].ID: {"Ada"}}); rec.Code == 429 {
		t.Fatalf("a post after the starts was rate limited")
	}
	other := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	if rec := h.postForm("/f/"+other.ID()+"/start", url.Values{"_token": {tok}}); rec.Code != 400 {
		t.Fatalf("another form's token: %d", rec.Code)
	}
	if rec := h.postForm("/f/frm%00x/start", url.Values{"_token": {tok}}); rec.Code != 404 {
		t.Fatalf("malformed form ID: %d", rec.Code)
	}
}
