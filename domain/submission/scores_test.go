package submission_test

import (
	"testing"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

func quizFields() []form.Field {
	return []form.Field{
		{ID: "fld_q1", Key: "q1", Label: "Capital of France", Type: form.TypeRadio, Options: []string{"Paris", "Lyon"}, Scores: []float64{1, 0}},
		{ID: "fld_q2", Key: "q2", Label: "Primes", Type: form.TypeCheckbox, Options: []string{"2", "3", "4"}, Scores: []float64{0.5, 0.25, -1}},
		{ID: "fld_q3", Key: "q3", Label: "Bonus", Type: form.TypeDropdown, Options: []string{"Yes", "No"}, Scores: []float64{10, 0},
			ShowIf: &form.ShowIf{Conditions: []form.Condition{{FieldID: "fld_q1", Operator: "equals", Value: "Paris", Kind: "string"}}}},
		{ID: "fld_name", Key: "name", Label: "Name", Type: form.TypeText},
	}
}

func score(t *testing.T, s *submission.Submission) float64 {
	t.Helper()
	if s.Metadata().Score == nil {
		t.Fatal("no score")
	}
	return *s.Metadata().Score
}

func TestScoreSumsAnsweredOptions(t *testing.T) {
	f := formWith(form.StatusPublished, quizFields())
	tests := []struct {
		name  string
		input map[string]submission.Input
		want  float64
	}{
		{"nothing answered", map[string]submission.Input{"name": "Ada"}, 0},
		{"every checkbox choice counts", map[string]submission.Input{"q1": "Paris", "q2": []any{"2", "3", "4"}, "q3": "Yes"}, 1 + 0.5 + 0.25 - 1 + 10},
		{"a field skipped by its display rule counts 0", map[string]submission.Input{"q1": "Lyon", "q2": []any{"2"}, "q3": "Yes"}, 0.5},
		{"decimals are rounded to six places", map[string]submission.Input{"q2": []any{"2", "3"}}, 0.75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := submission.New("sub_1", f, tt.input, submission.Metadata{Source: submission.SourceAPI}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if got := score(t, s); got != tt.want {
				t.Fatalf("score %v, want %v", got, tt.want)
			}
			// The public page's path (Prepare, Submit) computes the same.
			d, err := submission.Prepare(f, tt.input, submission.Metadata{}, submission.FileLimits{})
			if err != nil {
				t.Fatal(err)
			}
			ps, err := d.Submit("sub_2", t0)
			if err != nil {
				t.Fatal(err)
			}
			if got := score(t, ps); got != tt.want {
				t.Fatalf("public score %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScoreClientCannotSetIt(t *testing.T) {
	forged := 99.0
	s, err := submission.New("sub_1", formWith(form.StatusPublished, quizFields()), map[string]submission.Input{"q1": "Lyon"},
		submission.Metadata{Source: submission.SourceAPI, Score: &forged}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := score(t, s); got != 0 {
		t.Fatalf("score %v", got)
	}
}

func TestNoScoreWithoutScores(t *testing.T) {
	s := newSubmission(t, formWith(form.StatusPublished, testFields()))
	if s.Metadata().Score != nil {
		t.Fatalf("a form without scores stored score %v", *s.Metadata().Score)
	}
}

func TestUpdateRecomputesScore(t *testing.T) {
	f := formWith(form.StatusPublished, quizFields())
	s, err := submission.New("sub_1", f, map[string]submission.Input{"q1": "Paris", "q3": "Yes"}, submission.Metadata{Source: submission.SourceAPI}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := score(t, s); got != 11 {
		t.Fatalf("score %v", got)
	}
	if err := s.Update(f, map[string]submission.Input{"q1": "Lyon"}, t1); err != nil {
		t.Fatal(err)
	}
	if got := score(t, s); got != 0 {
		t.Fatalf("score after update %v, want 0 (q3 is skipped now)", got)
	}
}

func TestCheckScored(t *testing.T) {
	got, err := submission.CheckScored(formWith(form.StatusDraft, quizFields()), map[string]submission.Input{"q1": "Paris"}, submission.FileLimits{})
	if err != nil || got == nil || *got != 1 {
		t.Fatalf("CheckScored = %v, %v", got, err)
	}
}
