package dashboard

import (
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

func pagep(n int) *int { return &n }

// A form made through the API may list a page-2 field before a page-1 one, and a hidden field
// anywhere: the builder shows the pages in order with the hidden field apart, and writes back
// pages counted from the breaks, so moving a question above a break moves it to that page.
func TestLayoutGroupsPagesAndCountsThemFromBreaks(t *testing.T) {
	specs := []form.FieldSpec{
		{ID: "b", Page: pagep(2)}, {ID: "a"}, {ID: "h", Hidden: true, Page: pagep(2)}, {ID: "c", Page: pagep(3)}, {ID: "d", Page: pagep(2)},
	}
	hidden, seq := layoutOf(specs)
	if len(hidden) != 1 || hidden[0].ID != "h" {
		t.Fatalf("hidden %v", hidden)
	}
	var got []string
	for _, s := range seq {
		if s == nil {
			got = append(got, "|")
		} else {
			got = append(got, s.ID)
		}
	}
	if strings.Join(got, ",") != "a,|,b,d,|,c" {
		t.Fatalf("sequence %v", got)
	}
	seq[1], seq[2] = seq[2], seq[1] // b moved above the first break
	out, err := fieldsOf(hidden, seq)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]int{}
	for _, s := range out {
		pages[s.ID] = fieldPage(s)
	}
	if out[0].ID != "h" || pages["h"] != 1 || pages["a"] != 1 || pages["b"] != 1 || pages["d"] != 2 || pages["c"] != 3 {
		t.Fatalf("pages %v", pages)
	}
	for _, bad := range []sequence{{nil, seq[0]}, {seq[0], nil}, {seq[0], nil, nil, seq[3]}} {
		if _, err := fieldsOf(nil, bad); err == nil || !strings.Contains(err.Error(), "would have no questions") {
			t.Fatalf("an empty page was not refused: %v", err)
		}
	}
}
