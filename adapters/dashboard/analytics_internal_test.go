package dashboard

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/formstats"
)

// TestAnalyticsDetailLayout: the analytics page's per-question bars are shares of those who
// answered, a number field shows its min, median and max, and a multi-page form's pages show
// their reach (of the first page) and drop-off (to the next page, to the submission after the
// last one).
func TestAnalyticsDetailLayout(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	fields := []form.Field{
		{ID: "fld_a", Label: "Colour", Type: form.TypeRadio, Options: []string{"Red", "Green", "Blue"}, Page: 1},
		{ID: "fld_b", Label: "Extras", Type: form.TypeCheckbox, Options: []string{"Milk", "Sugar"}, Page: 1},
		{ID: "fld_c", Label: "Age", Type: form.TypeNumber, Page: 2},
		{ID: "fld_d", Label: "Notes", Type: form.TypeText, Page: 2},
		{ID: "fld_e", Label: "Consent", Type: form.TypeCheckbox, Page: 2},
	}
	r := formstats.Report{Submissions: 12, FormSubmissions: 8, APISubmissions: 4,
		Fields: []formstats.FieldSummary{
			{FieldID: "fld_a", Label: "Colour", Type: form.TypeRadio, Kind: formstats.KindChoice, Answered: 3,
				Options: []formstats.Option{{Option: "Red", Count: 1}, {Option: "Green", Count: 2}, {Option: "Blue", Count: 0}}},
			{FieldID: "fld_b", Label: "Extras", Type: form.TypeCheckbox, Kind: formstats.KindChoice, Answered: 4,
				Options: []formstats.Option{{Option: "Milk", Count: 4}, {Option: "Sugar", Count: 3}}},
			{FieldID: "fld_c", Label: "Age", Type: form.TypeNumber, Kind: formstats.KindNumber, Answered: 5,
				Min: f(0.1), Median: f(0.1 + 0.2), Max: f(120)},
			{FieldID: "fld_d", Label: "Notes", Type: form.TypeText, Kind: formstats.KindOther, Answered: 0},
			{FieldID: "fld_e", Label: "Consent", Type: form.TypeCheckbox, Kind: formstats.KindChoice, Answered: 2,
				Options: []formstats.Option{{Option: "true", Count: 2}, {Option: "false", Count: 0}}},
		},
		Pages: []formstats.PageReach{{Page: 1, Reached: 10}, {Page: 2, Reached: 8}},
	}
	d := detailOf(r, fields)
	if d.FormSubmissions != 8 || d.APISubmissions != 4 || len(d.Questions) != 5 {
		t.Fatalf("detail: %+v", d)
	}
	shares := func(q questionView) []string {
		var out []string
		for _, row := range q.Rows {
			out = append(out, row.Label+" "+row.Percent+" "+row.Width)
		}
		return out
	}
	colour, extras, age, notes := d.Questions[0], d.Questions[1], d.Questions[2], d.Questions[3]
	if got := shares(colour); !reflect.DeepEqual(got, []string{"Red 33.3% 33.3%", "Green 66.7% 66.7%", "Blue 0% 0%"}) ||
		!colour.Choice || colour.Multiple || colour.Height != 3*rowHeight || colour.AnsweredPercent != "25%" {
		t.Fatalf("colour: %v %+v", got, colour)
	}
	if colour.Rows[1].Y != rowHeight || colour.Rows[1].BarY != rowHeight+rowBarY || colour.Rows[1].LabelY != rowHeight+rowLabelY {
		t.Fatalf("the second row is not under the first: %+v", colour.Rows[1])
	}
	if got := shares(extras); !reflect.DeepEqual(got, []string{"Milk 100% 100%", "Sugar 75% 75%"}) || !extras.Multiple {
		t.Fatalf("extras: %v %+v", got, extras)
	}
	if !age.Number || age.Choice || age.Min != "0.1" || age.Median != "0.3" || age.Max != "120" || len(age.Rows) != 0 {
		t.Fatalf("age: %+v", age)
	}
	if notes.Choice || notes.Number || notes.Min != "—" || notes.Answered != 0 || notes.AnsweredPercent != "0%" {
		t.Fatalf("notes: %+v", notes)
	}
	// A single checkbox's answers in words.
	if got := shares(d.Questions[4]); !reflect.DeepEqual(got, []string{"Checked 100% 100%", "Not checked 0% 0%"}) || d.Questions[4].Multiple {
		t.Fatalf("consent: %v", got)
	}
	var funnel []string
	for _, f := range detailOf(formstats.Report{Views: 8, Starts: 4, FormSubmissions: 2, APISubmissions: 5}, nil).Funnel {
		funnel = append(funnel, f.Label+" "+strconv.FormatInt(f.Count, 10)+" "+f.Percent)
	}
	if !reflect.DeepEqual(funnel, []string{"Viewed the page 8 100%", "Started to fill it in 4 50%", "Submitted from the form 2 25%"}) {
		t.Fatalf("funnel: %v", funnel)
	}
	var pages []string
	for _, p := range d.Pages {
		pages = append(pages, p.Label+" "+p.Percent+" left "+p.DropOff)
	}
	// Page 2 lost none of the 8 who reached it: all 8 submitted from the form.
	if !reflect.DeepEqual(pages, []string{"Page 1 100% left 20%", "Page 2 80% left 0%"}) || d.Pages[0].Left != 2 || d.PagesHeight != 2*rowHeight {
		t.Fatalf("pages: %v %+v", pages, d.Pages)
	}

	// Nothing counted: no shares, no drop-off, dashes for the numbers.
	empty := detailOf(formstats.Report{Fields: []formstats.FieldSummary{
		{FieldID: "fld_a", Label: "Colour", Type: form.TypeRadio, Kind: formstats.KindChoice, Options: []formstats.Option{{Option: "Red"}}},
		{FieldID: "fld_c", Label: "Age", Type: form.TypeNumber, Kind: formstats.KindNumber}},
		Pages: []formstats.PageReach{{Page: 1}, {Page: 3}}}, fields)
	if row := empty.Questions[0].Rows[0]; row.Percent != "—" || row.Width != "0%" {
		t.Fatalf("an unanswered option: %+v", row)
	}
	if q := empty.Questions[1]; q.Min != "—" || q.Median != "—" || q.Max != "—" || q.AnsweredPercent != "—" {
		t.Fatalf("an unanswered number: %+v", q)
	}
	if p := empty.Pages[1]; p.Percent != "—" || p.DropOff != "—" || p.Width != "0%" {
		t.Fatalf("an unreached page: %+v", p)
	}
	if single := detailOf(formstats.Report{}, fields); single.Pages != nil || single.PagesHeight != 0 {
		t.Fatalf("a report without pages drew pages: %+v", single)
	}

	if got := cut(strings.Repeat("é", 30), labelShort); len([]rune(got)) != labelShort || !strings.HasSuffix(got, "…") {
		t.Fatalf("cut: %q", got)
	}
	if got := cut("Short", labelShort); got != "Short" {
		t.Fatalf("cut: %q", got)
	}
}
