package submission_test

import (
	"testing"
	"time"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// TestSubmittedTextRefusesControlCharacters: a submitted value with NUL or another control
// character (in a string or inside a list) is refused with invalid_value at its field ID.
func TestSubmittedTextRefusesControlCharacters(t *testing.T) {
	n := 0
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: []form.FieldSpec{
		{Label: "Name", Type: "text"},
		{Label: "Notes", Type: "textarea"},
		{Label: "Tags", Type: "checkbox", Options: []string{"a", "b"}},
	}}, func() string { n++; return []string{"", "fld_name", "fld_notes", "fld_tags"}[n] }, form.DefaultLimits, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		in    submission.Input
	}{
		{"fld_name", "Ada\x00"},
		{"fld_name", "\x1b[31mred"},
		{"fld_name", "C1 \u0085 char"},
		{"fld_name", "bad \xff UTF-8"},
		{"fld_notes", "line\x0bvertical tab"},
		{"fld_tags", []any{"a", "b\x00"}},
	} {
		_, err := submission.New("sub_1", f, map[string]submission.Input{c.field: c.in}, submission.Metadata{Source: submission.SourceAPI}, time.Now())
		vs := violationsOf(t, err)
		if len(vs) != 1 || vs[0].Field != c.field || vs[0].Code != "invalid_value" {
			t.Errorf("%q: violations %v, want invalid_value at %s", c.in, vs, c.field)
		}
	}
	if _, err := submission.New("sub_1", f, map[string]submission.Input{"fld_notes": "tab\tand\r\nnewlines"}, submission.Metadata{Source: submission.SourceAPI}, time.Now()); err != nil {
		t.Fatalf("tab and newlines refused: %v", err)
	}
}
