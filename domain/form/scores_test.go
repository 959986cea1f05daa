package form_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

func scores(xs ...float64) *[]float64 { return &xs }

func TestScoresOnChoiceFields(t *testing.T) {
	f, _ := newForm(t,
		form.FieldSpec{Label: "Colour", Type: "radio", Options: []string{"Red", "Blue", "Green"}, Scores: scores(1, 2.5, -3)},
		form.FieldSpec{Label: "Size", Type: "dropdown", Options: []string{"S", "M"}, Scores: scores(0, 1e9)},
		form.FieldSpec{Label: "Extras", Type: "checkbox", Options: []string{"A", "B"}, Scores: scores(1, 1)},
		form.FieldSpec{Label: "Name", Type: "text"},
	)
	fields := f.Fields()
	if !reflect.DeepEqual(fields[0].Scores, []float64{1, 2.5, -3}) || fields[3].Scores != nil {
		t.Fatalf("scores %v, %v", fields[0].Scores, fields[3].Scores)
	}
	if !f.HasScores() {
		t.Fatal("HasScores is false")
	}
	if x, ok := fields[0].OptionScore("Blue"); !ok || x != 2.5 {
		t.Fatalf("OptionScore(Blue) = %v, %v", x, ok)
	}
	if _, ok := fields[0].OptionScore("Purple"); ok {
		t.Fatal("OptionScore of no option")
	}
	plain, _ := newForm(t, form.FieldSpec{Label: "Colour", Type: "radio", Options: []string{"Red"}})
	if plain.HasScores() || plain.Fields()[0].Scores != nil {
		t.Fatal("a form without scores has scores")
	}
}

func TestScoresRefused(t *testing.T) {
	tests := []struct {
		name       string
		spec       form.FieldSpec
		path, code string
		message    string
	}{
		{"on a text field", form.FieldSpec{Label: "Q", Type: "text", Scores: scores(1)}, "fields[0].scores", "not_allowed", "only allowed"},
		{"on a checkbox without options", form.FieldSpec{Label: "Q", Type: "checkbox", Scores: scores(1)}, "fields[0].scores", "not_allowed", "only allowed"},
		{"too few", form.FieldSpec{Label: "Q", Type: "radio", Options: []string{"a", "b", "c"}, Scores: scores(1, 2)}, "fields[0].scores", "length_mismatch",
			"scores must have one number per option (3 options, 2 scores)"},
		{"too many", form.FieldSpec{Label: "Q", Type: "radio", Options: []string{"a"}, Scores: scores(1, 2)}, "fields[0].scores", "length_mismatch", "(1 options, 2 scores)"},
		{"too large", form.FieldSpec{Label: "Q", Type: "radio", Options: []string{"a", "b"}, Scores: scores(1, 2e9)}, "fields[0].scores[1]", "invalid_value", "from"},
		{"infinite", form.FieldSpec{Label: "Q", Type: "radio", Options: []string{"a"}, Scores: scores(math.Inf(-1))}, "fields[0].scores[0]", "invalid_value", ""},
		{"not a number", form.FieldSpec{Label: "Q", Type: "radio", Options: []string{"a"}, Scores: scores(math.NaN())}, "fields[0].scores[0]", "invalid_value", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := seqIDs()
			_, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Quiz", Fields: []form.FieldSpec{tt.spec}}, ids, form.DefaultLimits, t0)
			vs := violations(t, err)
			if !hasViolation(vs, tt.path, tt.code) {
				t.Fatalf("violations %v, want %s %s", vs, tt.path, tt.code)
			}
			for _, v := range vs {
				if v.Field == tt.path && !strings.Contains(v.Message, tt.message) {
					t.Fatalf("message %q does not say %q", v.Message, tt.message)
				}
			}
		})
	}
}

// A patch that leaves scores out keeps them: the options must still match, an empty list removes them.
func TestScoresKeptWhenOptionsChange(t *testing.T) {
	f, ids := newForm(t, form.FieldSpec{Label: "Q", Type: "radio", Options: []string{"a", "b"}, Scores: scores(1, 2)})
	id := f.Fields()[0].ID
	renamed := []form.FieldSpec{{ID: id, Label: "Q", Type: "radio", Options: []string{"x", "y"}}}
	if _, err := f.Apply(form.Patch{Fields: &renamed}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatal(err)
	}
	if got := f.Fields()[0].Scores; !reflect.DeepEqual(got, []float64{1, 2}) {
		t.Fatalf("scores after renaming options: %v", got)
	}
	grown := []form.FieldSpec{{ID: id, Label: "Q", Type: "radio", Options: []string{"x", "y", "z"}}}
	_, err := f.Apply(form.Patch{Fields: &grown}, ids, form.DefaultLimits, t1)
	if vs := violations(t, err); !hasViolation(vs, "fields[0].scores", "length_mismatch") {
		t.Fatalf("violations %v", vs)
	}
	grown[0].Scores = scores(1, 2, 3)
	if _, err := f.Apply(form.Patch{Fields: &grown}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatal(err)
	}
	cleared := []form.FieldSpec{{ID: id, Label: "Q", Type: "radio", Options: []string{"x"}, Scores: scores()}}
	if _, err := f.Apply(form.Patch{Fields: &cleared}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatal(err)
	}
	if f.HasScores() {
		t.Fatal("an empty list did not remove the scores")
	}
	// Changing the type away from a choice drops kept scores without complaint.
	typed, _ := newForm(t, form.FieldSpec{Label: "Q", Type: "radio", Options: []string{"a"}, Scores: scores(1)})
	toText := []form.FieldSpec{{ID: typed.Fields()[0].ID, Label: "Q", Type: "text"}}
	if _, err := typed.Apply(form.Patch{Fields: &toText}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatal(err)
	}
}

func TestScoresDiff(t *testing.T) {
	a := []form.Field{{ID: "f1", Label: "Q", Type: form.TypeRadio, Options: []string{"a"}, Scores: []float64{1}}}
	b := []form.Field{{ID: "f1", Label: "Q", Type: form.TypeRadio, Options: []string{"a"}, Scores: []float64{2}}}
	d := form.DiffFields(a, b)
	if len(d.Changes) != 1 || !reflect.DeepEqual(d.Changes[0].Aspects, []string{form.AspectScores}) {
		t.Fatalf("diff %+v", d)
	}
}

func TestRoundAndFormatScore(t *testing.T) {
	if got := form.FormatScore(form.RoundScore(0.1 + 0.2)); got != "0.3" {
		t.Fatalf("0.1+0.2 reads %s", got)
	}
	for x, want := range map[float64]string{7: "7", -1.25: "-1.25", 1e9: "1000000000"} {
		if got := form.FormatScore(x); got != want {
			t.Fatalf("FormatScore(%v) = %s", x, got)
		}
	}
}
