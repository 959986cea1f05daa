package submission_test

import (
	"slices"
	"testing"
	"time"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

func TestEmailAnswers(t *testing.T) {
	n := 0
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: []form.FieldSpec{
		{Label: "Email", Type: "email"}, {Label: "Work email", Type: "email"}, {Label: "Note", Type: "text"},
	}}, func() string { n++; return "fld_" + string(rune('a'+n)) }, form.DefaultLimits, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fs := f.Fields()
	s, err := submission.New("sub_1", f, map[string]submission.Input{
		fs[0].ID: " Jane@Example.org", fs[1].ID: "jane@example.org", fs[2].ID: "john@example.org",
	}, submission.Metadata{Source: submission.SourceAPI}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Emails(); !slices.Equal(got, []string{"jane@example.org"}) || !s.HasEmails() {
		t.Fatalf("Emails() = %v: only email fields, normalised, each once", got)
	}
	if err := s.Update(f, map[string]submission.Input{fs[1].ID: "JOHN@example.org"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := s.Emails(); !slices.Equal(got, []string{"jane@example.org", "john@example.org"}) {
		t.Fatalf("after the update Emails() = %v", got)
	}
	stored := submission.UnmarshalFromDatabase("sub_1", "wsp_1", "frm_1", s.Data(), s.Metadata(), s.SubmittedAt(), s.UpdatedAt())
	if stored.HasEmails() || len(stored.Emails()) != 0 {
		t.Fatal("a rehydrated submission does not know its form's email fields")
	}
	if got := submission.EmailAnswers(fs, stored.Data()); !slices.Equal(got, []string{"jane@example.org", "john@example.org"}) {
		t.Fatalf("EmailAnswers = %v", got)
	}
	if submission.NormalizeEmail("  A@B.Example ") != "a@b.example" {
		t.Fatal("NormalizeEmail must trim and lower-case")
	}
}
