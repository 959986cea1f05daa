package web

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadDescription(t *testing.T) {
	headOf := templateFuncs()["head"].(func(string, string, themeView) head)
	head := func(title, text string) head { return headOf(title, text, themeView{}) }
	long := strings.Repeat("Tell us about your visit. ", 20)
	for _, c := range []struct{ title, text, want string }{
		{"Contact", "We answer\n  within a day.", "We answer within a day."},
		{"Contact", "", "Contact: fill in the form and send it."},
		{"Contact", "   ", "Contact: fill in the form and send it."},
	} {
		if got := head(c.title, c.text); got.Description != c.want || got.Title != c.title {
			t.Errorf("head(%q, %q) = %+v, want description %q", c.title, c.text, got, c.want)
		}
	}
	got := head("Survey", long).Description
	if n := utf8.RuneCountInString(got); n > metaDescriptionMax || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "Tell us about your visit.") {
		t.Errorf("long description cut to %d runes: %q", n, got)
	}
}
