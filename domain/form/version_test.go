package form_test

import (
	"errors"

	"github.com/formward/formward/domain"
	"testing"

	"github.com/formward/formward/domain/form"
)

func TestVersionBumpsOnlyOnFieldChanges(t *testing.T) {
	specs := func() []form.FieldSpec {
		return []form.FieldSpec{
			{ID: "fld_1", Label: "Name", Type: "text", Required: true},
			{ID: "fld_2", Label: "Colour", Type: "radio", Options: []string{"red", "blue"}},
			{ID: "fld_3", Label: "Why", Type: "text"},
		}
	}
	base := func(t *testing.T) (*form.Form, func() string) {
		t.Helper()
		f, ids := newForm(t,
			form.FieldSpec{Label: "Name", Type: "text", Required: true},
			form.FieldSpec{Label: "Colour", Type: "radio", Options: []string{"red", "blue"}},
			form.FieldSpec{Label: "Why", Type: "text"},
		)
		if f.Version() != 1 {
			t.Fatalf("new form version = %d, want 1", f.Version())
		}
		return f, ids
	}
	name, status := "Renamed", "published"
	settings := form.DefaultSettings()
	thanks := "Thanks a lot"
	settings.ThankYouMessage = &thanks
	tests := []struct {
		name  string
		patch func() form.Patch
		want  int
	}{
		{"same fields again", func() form.Patch { s := specs(); return form.Patch{Fields: &s} }, 1},
		{"name", func() form.Patch { return form.Patch{Name: &name} }, 1},
		{"status", func() form.Patch { return form.Patch{Status: &status} }, 1},
		{"settings", func() form.Patch { return form.Patch{Settings: &settings} }, 1},
		{"add", func() form.Patch {
			s := append(specs(), form.FieldSpec{Label: "Age", Type: "number"})
			return form.Patch{Fields: &s}
		}, 2},
		{"relabel", func() form.Patch { s := specs(); s[0].Label = "Full name"; return form.Patch{Fields: &s} }, 2},
		{"required", func() form.Patch { s := specs(); s[0].Required = false; return form.Patch{Fields: &s} }, 2},
		{"remove", func() form.Patch { s := specs()[:1]; return form.Patch{Fields: &s} }, 2},
		{"reorder", func() form.Patch { s := specs(); s[0], s[1] = s[1], s[0]; return form.Patch{Fields: &s} }, 2},
		{"options", func() form.Patch {
			s := specs()
			s[1].Options = []string{"red", "green"}
			return form.Patch{Fields: &s}
		}, 2},
		{"show_if", func() form.Patch {
			s := specs()
			s[2].ShowIf = &form.ShowIfSpec{Conditions: []form.ConditionSpec{{FieldID: "fld_2", Operator: "equals", Value: "red", HasValue: true}}}
			return form.Patch{Fields: &s}
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ids := base(t)
			if _, err := f.Apply(tt.patch(), ids, form.DefaultLimits, t1); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if f.Version() != tt.want {
				t.Errorf("version = %d, want %d", f.Version(), tt.want)
			}
		})
	}
	t.Run("every field change counts once", func(t *testing.T) {
		f, ids := base(t)
		for i, label := range []string{"A", "B", "C"} {
			s := specs()
			s[0].Label = label
			if _, err := f.Apply(form.Patch{Fields: &s}, ids, form.DefaultLimits, t1); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if f.Version() != i+2 {
				t.Fatalf("after change %d version = %d, want %d", i+1, f.Version(), i+2)
			}
		}
	})
	t.Run("a refused change keeps the version", func(t *testing.T) {
		f, ids := base(t)
		s := []form.FieldSpec{{Label: "", Type: "nope"}}
		if _, err := f.Apply(form.Patch{Fields: &s}, ids, form.DefaultLimits, t1); err == nil {
			t.Fatal("Apply accepted an invalid field")
		}
		if f.Version() != 1 {
			t.Errorf("version = %d, want 1", f.Version())
		}
	})
	t.Run("stored version", func(t *testing.T) {
		f, _ := base(t)
		if got := f.WithVersionFromDatabase(7).Version(); got != 7 {
			t.Errorf("version = %d, want 7", got)
		}
	})
}

func TestRestoreFields(t *testing.T) {
	f, ids := newForm(t,
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Email", Type: "email"},
	)
	v1 := f.Fields()
	s := []form.FieldSpec{{ID: v1[0].ID, Label: "Full name", Type: "text"}}
	if _, err := f.Apply(form.Patch{Fields: &s}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if f.Version() != 2 || len(f.RemovedFields()) != 1 {
		t.Fatalf("after the change: version %d, removed %+v", f.Version(), f.RemovedFields())
	}
	if err := f.RestoreFields(v1, t1); err != nil {
		t.Fatalf("RestoreFields: %v", err)
	}
	got := f.Fields()
	if f.Version() != 3 || len(got) != 2 || got[0].ID != v1[0].ID || got[0].Label != "Name" || got[1].ID != v1[1].ID {
		t.Fatalf("after restore: version %d, fields %+v", f.Version(), got)
	}
	if len(f.RemovedFields()) != 0 {
		t.Errorf("a restored field is still listed as removed: %+v", f.RemovedFields())
	}
	if err := f.RestoreFields(v1, t1); err != nil || f.Version() != 3 {
		t.Errorf("restoring the current fields: %v, version %d", err, f.Version())
	}
	archived := "archived"
	if _, err := f.Apply(form.Patch{Status: &archived}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatalf("archive: %v", err)
	}
	if err := f.RestoreFields(v1[:1], t1); !errors.Is(err, domain.ErrConflict) || f.Version() != 3 || len(f.Fields()) != 2 {
		t.Errorf("restore onto an archived form: %v, version %d", err, f.Version())
	}
}
