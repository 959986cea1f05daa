package capture

import (
	"strconv"
	"testing"
	"time"

	"github.com/formward/formward/adapters/analytics"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// BenchmarkCountSubmission is what counting adds to the capture of one API submission of a
// ten-field form (choices, checkboxes, numbers, text): the answers read in memory and a few
// map increments under the counter's lock, no storage.
func BenchmarkCountSubmission(b *testing.B) {
	n := 0
	specs := []form.FieldSpec{
		{Label: "Name", Type: "text"}, {Label: "Email", Type: "email"},
		{Label: "Size", Type: "dropdown", Options: []string{"S", "M", "L"}},
		{Label: "Colour", Type: "radio", Options: []string{"Red", "Green", "Blue"}},
		{Label: "Extras", Type: "checkbox", Options: []string{"Milk", "Sugar", "Cream"}},
		{Label: "Consent", Type: "checkbox"}, {Label: "Age", Type: "number"}, {Label: "Count", Type: "number"},
		{Label: "Date", Type: "date"}, {Label: "Note", Type: "textarea"},
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f, err := form.New("frm_bench", "wsp_bench", form.Draft{Name: "Bench", Fields: specs},
		func() string { n++; return "fld_" + strconv.Itoa(n) }, form.DefaultLimits, now)
	if err != nil {
		b.Fatal(err)
	}
	ids := f.Fields()
	s, err := submission.New("sub_bench", f, map[string]submission.Input{
		ids[0].ID: "Ada", ids[1].ID: "ada@example.com", ids[2].ID: "M", ids[3].ID: "Blue",
		ids[4].ID: []any{"Milk", "Cream"}, ids[5].ID: true, ids[6].ID: submission.Number("37"),
		ids[7].ID: submission.Number("2.5"), ids[8].ID: "2026-03-01", ids[9].ID: "A longer note",
	}, submission.Metadata{Source: submission.SourceAPI}, now)
	if err != nil {
		b.Fatal(err)
	}
	var activity ports.FormActivity = analytics.New(nil, nil, time.Hour)
	lists := newAnswerLists()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		countSubmission(activity, lists, f, s, nil, nil)
	}
}
