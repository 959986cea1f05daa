package submission_test

import (
	"testing"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// logicForm: page 1 asks the role; page 2 (employees only) the company, required; page 3
// (students only, or anyone under 18) the school, required, and a CV upload.
func logicForm() *form.Form {
	return formWith(form.StatusPublished, []form.Field{
		{ID: "fld_role", Key: "role", Label: "Role", Type: form.TypeRadio, Options: []string{"Student", "Employee"}, Required: true, Page: 1},
		{ID: "fld_age", Key: "age", Label: "Age", Type: form.TypeNumber, Page: 1},
		{ID: "fld_src", Key: "source", Label: "Source", Type: form.TypeText, Hidden: true, Page: 1},
		{ID: "fld_company", Key: "company", Label: "Company", Type: form.TypeText, Required: true, Page: 2,
			ShowIf: &form.ShowIf{Conditions: []form.Condition{{FieldID: "fld_role", Operator: "equals", Value: "Employee"}}}},
		{ID: "fld_team", Key: "team", Label: "Team", Type: form.TypeText, Required: true, Page: 2,
			ShowIf: &form.ShowIf{Conditions: []form.Condition{{FieldID: "fld_company", Operator: "contains", Value: ""}}}},
		{ID: "fld_school", Key: "school", Label: "School", Type: form.TypeText, Required: true, Page: 3,
			ShowIf: &form.ShowIf{Any: true, Conditions: []form.Condition{
				{FieldID: "fld_role", Operator: "equals", Value: "Student"}, {FieldID: "fld_age", Operator: "less_than", Value: "18"}}}},
		{ID: "fld_cv", Key: "cv", Label: "CV", Type: form.TypeFile, Page: 3,
			ShowIf: &form.ShowIf{Conditions: []form.Condition{{FieldID: "fld_role", Operator: "equals", Value: "Employee"}}}},
	})
}

func TestPrepareDropsAnswersOfSkippedFields(t *testing.T) {
	pdf := submission.FileInfo{Name: "cv.pdf", Size: 10, Declared: "application/pdf", Sniffed: "application/pdf"}
	f := logicForm()
	// A student: company and team are skipped (their answers dropped, their requirement
	// lifted, even an invalid answer ignored), the school is required, the CV dropped.
	d, err := submission.Prepare(f, map[string]submission.Input{
		"fld_role": "Student", "fld_src": "newsletter", "fld_company": "ACME", "fld_team": []any{"not", "text"},
		"fld_school": "MIT", "fld_cv": []submission.FileInfo{pdf},
	}, submission.Metadata{}, submission.FileLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files()) != 0 {
		t.Fatalf("files of a skipped field are not stored: %+v", d.Files())
	}
	s, err := d.Submit("sub_1", t0)
	if err != nil {
		t.Fatal(err)
	}
	got := plain(s.Data())
	want := map[string]any{"fld_role": "Student", "fld_src": "newsletter", "fld_school": "MIT"}
	if len(got) != len(want) {
		t.Fatalf("data %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("data %v, want %v", got, want)
		}
	}
	// An employee: the company and (by chain) the team are required, the school is not.
	_, err = submission.Prepare(f, map[string]submission.Input{"fld_role": "Employee", "fld_age": "30", "fld_school": "MIT"}, submission.Metadata{}, submission.FileLimits{})
	c := codes(t, err)
	if c["fld_company"] != "required" || len(c) != 1 {
		t.Fatalf("codes %v", c)
	}
	_, err = submission.Prepare(f, map[string]submission.Input{"fld_role": "Employee", "fld_age": "30", "fld_company": "ACME"}, submission.Metadata{}, submission.FileLimits{})
	if c := codes(t, err); c["fld_team"] != "required" || len(c) != 1 {
		t.Fatalf("codes %v", c)
	}
	// Under 18 (any): the school is required too.
	_, err = submission.Prepare(f, map[string]submission.Input{"fld_role": "Employee", "fld_age": "16", "fld_company": "A", "fld_team": "B"}, submission.Metadata{}, submission.FileLimits{})
	if c := codes(t, err); c["fld_school"] != "required" || len(c) != 1 {
		t.Fatalf("codes %v", c)
	}
	// The API path follows the same rules.
	data, err := submission.Validate(f.Fields(), map[string]submission.Input{"fld_role": "Student", "fld_school": "MIT", "fld_company": "dropped"})
	if err != nil || len(data) != 2 {
		t.Fatalf("Validate: %v %v", plain(data), err)
	}
}

func TestCheckPageChecksOnlyThatPage(t *testing.T) {
	f := logicForm()
	if err := submission.CheckPage(f, map[string]submission.Input{}, 1); codes(t, err)["fld_role"] != "required" {
		t.Fatal("page 1 needs the role")
	}
	if err := submission.CheckPage(f, map[string]submission.Input{"fld_role": "Student"}, 1); err != nil {
		t.Fatalf("page 1 complete: %v", err)
	}
	if err := submission.CheckPage(f, map[string]submission.Input{"fld_role": "Student"}, 2); err != nil {
		t.Fatalf("page 2 is skipped for students: %v", err)
	}
	if c := codes(t, submission.CheckPage(f, map[string]submission.Input{"fld_role": "Employee"}, 2)); c["fld_company"] != "required" || len(c) != 1 {
		t.Fatalf("page 2 for employees: %v", c)
	}
	if c := codes(t, submission.CheckPage(f, map[string]submission.Input{"fld_role": "Employee", "fld_age": "x"}, 1)); c["fld_age"] != "invalid_number" {
		t.Fatalf("page 1 checks values: %v", c)
	}
}
