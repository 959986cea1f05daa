package form_test

import (
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
