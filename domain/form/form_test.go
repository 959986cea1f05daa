package form_test

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

var (
	t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	t1 = time.Date(2024, 5, 2, 11, 30, 0, 0, time.UTC)
)

// seqIDs returns a generator of fld_1, fld_2, … and a counter of calls.
func seqIDs() (func() string, *int) {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("fld_%d", n)
	}, &n
}

func ptr[T any](v T) *T { return &v }

func violations(t *testing.T, err error) []domain.Violation {
	t.Helper()
	if err == nil {
		t.Fatal("expected a validation error, got nil")
	}
	var ve *domain.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("expected *domain.ValidationError, got %T: %v", err, err)
	}
	if len(ve.Violations) == 0 {
		t.Fatal("validation error without violations")
	}
	return ve.Violations
}

func paths(vs []domain.Violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Field)
	}
	sort.Strings(out)
	return out
}

func hasViolation(vs []domain.Violation, field, code string) bool {
	for _, v := range vs {
		if v.Field == field && (code == "" || v.Code == code) {
			return true
		}
	}
	return false
}

func options(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("opt %d", i)
	}
	return out
}

func textFields(n int) []form.FieldSpec {
	out := make([]form.FieldSpec, n)
	for i := range out {
		out[i] = form.FieldSpec{Label: fmt.Sprintf("Q%d", i), Type: "text"}
	}
	return out
}

func newForm(t *testing.T, specs ...form.FieldSpec) (*form.Form, func() string) {
	t.Helper()
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Contact", Fields: specs}, ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f, ids
}

func TestNewName(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		want   string
		wantOK bool
	}{
		{"simple", "Contact", "Contact", true},
		{"one character", "x", "x", true},
		{"trimmed", "  Contact us \n", "Contact us", true},
		{"200 ascii", strings.Repeat("a", 200), strings.Repeat("a", 200), true},
		{"201 ascii", strings.Repeat("a", 201), "", false},
		{"200 emoji", strings.Repeat("😀", 200), strings.Repeat("😀", 200), true},
		{"201 emoji", strings.Repeat("😀", 201), "", false},
		{"200 after trim", "  " + strings.Repeat("é", 200) + "  ", strings.Repeat("é", 200), true},
		{"empty", "", "", false},
		{"whitespace only", " \t\n ", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := seqIDs()
			f, err := form.New("frm_1", "wsp_1", form.Draft{Name: tt.input}, ids, form.DefaultLimits, t0)
			if !tt.wantOK {
				vs := violations(t, err)
				if !hasViolation(vs, "name", "") {
					t.Fatalf("violations %v do not name the name", vs)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if f.Name() != tt.want {
				t.Fatalf("name = %q, want %q", f.Name(), tt.want)
			}
		})
	}
}

func TestNewBuildsDraftWithServerIDs(t *testing.T) {
	ids, _ := seqIDs()
	desc := "about"
	local := time.FixedZone("X", 3*3600)
	f, err := form.New("frm_1", "wsp_1", form.Draft{
		Name:        "Contact",
		Description: &desc,
		Fields: []form.FieldSpec{
			{Label: " Name ", Type: "text", Required: true, Placeholder: ptr("Jane")},
			{Label: "Colour", Type: "radio", Options: []string{"red", "green"}, Help: ptr("Pick one.\nAny shade counts.")},
		},
	}, ids, form.DefaultLimits, t0.In(local))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if f.Status() != form.StatusDraft {
		t.Errorf("status = %q, want draft", f.Status())
	}
	if f.ID() != "frm_1" || f.WorkspaceID() != "wsp_1" {
		t.Errorf("id/workspace = %q/%q", f.ID(), f.WorkspaceID())
	}
	if f.Description() == nil || *f.Description() != "about" {
		t.Errorf("description = %v", f.Description())
	}
	if !f.CreatedAt().Equal(t0) || f.CreatedAt().Location() != time.UTC || !f.UpdatedAt().Equal(t0) {
		t.Errorf("times = %v / %v, want %v UTC", f.CreatedAt(), f.UpdatedAt(), t0)
	}
	fs := f.Fields()
	if len(fs) != 2 {
		t.Fatalf("fields = %d", len(fs))
	}
	if fs[0].ID != "fld_1" || fs[1].ID != "fld_2" {
		t.Errorf("field IDs = %q, %q; want server-assigned fld_1, fld_2", fs[0].ID, fs[1].ID)
	}
	if fs[0].Label != "Name" || fs[0].Type != form.TypeText || !fs[0].Required || fs[0].Placeholder == nil || *fs[0].Placeholder != "Jane" {
		t.Errorf("field 0 = %+v", fs[0])
	}
	if fs[0].Help != nil {
		t.Errorf("field 0 help = %q, want none", *fs[0].Help)
	}
	if fs[1].Type != form.TypeRadio || !reflect.DeepEqual(fs[1].Options, []string{"red", "green"}) || fs[1].Help == nil || *fs[1].Help != "Pick one.\nAny shade counts." {
		t.Errorf("field 1 = %+v", fs[1])
	}
	if got, ok := f.Field("fld_2"); !ok || got.Label != "Colour" {
		t.Errorf("Field(fld_2) = %+v, %v", got, ok)
	}
	if _, ok := f.Field("fld_9"); ok {
		t.Error("Field(fld_9) found")
	}
}

func TestNewRejectsClientFieldIDs(t *testing.T) {
	ids, _ := seqIDs()
	_, err := form.New("frm_1", "wsp_1", form.Draft{Name: "x", Fields: []form.FieldSpec{
		{Label: "a", Type: "text"},
		{ID: "fld_mine", Label: "b", Type: "text"},
	}}, ids, form.DefaultLimits, t0)
	vs := violations(t, err)
	if !hasViolation(vs, "fields[1].id", "") && !hasViolation(vs, "fields", "") {
		t.Fatalf("violations = %v, want one about the client-sent ID", vs)
	}
}

func TestNewFieldsEmptyOK(t *testing.T) {
	f, _ := newForm(t)
	if len(f.Fields()) != 0 {
		t.Fatalf("fields = %v", f.Fields())
	}
}

func TestFieldRules(t *testing.T) {
	tests := []struct {
		name     string
		spec     form.FieldSpec
		wantPath string // empty: valid
		wantCode string
	}{
		// label
		{"label ok", form.FieldSpec{Label: "Name", Type: "text"}, "", ""},
		{"label missing", form.FieldSpec{Type: "text"}, "fields[0].label", "required"},
		{"label whitespace", form.FieldSpec{Label: "   ", Type: "text"}, "fields[0].label", "required"},
		{"label 500", form.FieldSpec{Label: strings.Repeat("ü", 500), Type: "text"}, "", ""},
		{"label 500 emoji", form.FieldSpec{Label: strings.Repeat("😀", 500), Type: "text"}, "", ""},
		{"label 501", form.FieldSpec{Label: strings.Repeat("ü", 501), Type: "text"}, "fields[0].label", "too_long"},
		// type
		{"type missing", form.FieldSpec{Label: "x"}, "fields[0].type", "required"},
		{"type unknown", form.FieldSpec{Label: "x", Type: "color"}, "fields[0].type", "invalid_value"},
		{"type wrong case", form.FieldSpec{Label: "x", Type: "Text"}, "fields[0].type", "invalid_value"},
		{"type text", form.FieldSpec{Label: "x", Type: "text"}, "", ""},
		{"type email", form.FieldSpec{Label: "x", Type: "email"}, "", ""},
		{"type number", form.FieldSpec{Label: "x", Type: "number"}, "", ""},
		{"type textarea", form.FieldSpec{Label: "x", Type: "textarea"}, "", ""},
		{"type file", form.FieldSpec{Label: "x", Type: "file"}, "", ""},
		{"type date", form.FieldSpec{Label: "x", Type: "date"}, "", ""},
		{"type checkbox", form.FieldSpec{Label: "x", Type: "checkbox"}, "", ""},
		{"type dropdown", form.FieldSpec{Label: "x", Type: "dropdown", Options: []string{"a"}}, "", ""},
		{"type radio", form.FieldSpec{Label: "x", Type: "radio", Options: []string{"a"}}, "", ""},
		// options required for dropdown / radio
		{"dropdown no options", form.FieldSpec{Label: "x", Type: "dropdown"}, "fields[0].options", "required"},
		{"dropdown empty options", form.FieldSpec{Label: "x", Type: "dropdown", Options: []string{}}, "fields[0].options", "required"},
		{"radio no options", form.FieldSpec{Label: "x", Type: "radio"}, "fields[0].options", "required"},
		{"radio empty options", form.FieldSpec{Label: "x", Type: "radio", Options: []string{}}, "fields[0].options", "required"},
		// optional for checkbox
		{"checkbox with options", form.FieldSpec{Label: "x", Type: "checkbox", Options: []string{"a", "b"}}, "", ""},
		{"checkbox empty options", form.FieldSpec{Label: "x", Type: "checkbox", Options: []string{}}, "", ""},
		// rejected on the others
		{"text options", form.FieldSpec{Label: "x", Type: "text", Options: []string{"a"}}, "fields[0].options", "not_allowed"},
		{"email options", form.FieldSpec{Label: "x", Type: "email", Options: []string{"a"}}, "fields[0].options", "not_allowed"},
		{"number options", form.FieldSpec{Label: "x", Type: "number", Options: []string{"a"}}, "fields[0].options", "not_allowed"},
		{"textarea options", form.FieldSpec{Label: "x", Type: "textarea", Options: []string{"a"}}, "fields[0].options", "not_allowed"},
		{"file options", form.FieldSpec{Label: "x", Type: "file", Options: []string{"a"}}, "fields[0].options", "not_allowed"},
		{"date options", form.FieldSpec{Label: "x", Type: "date", Options: []string{"a"}}, "fields[0].options", "not_allowed"},
		// options unique and non-empty
		{"dropdown duplicate option", form.FieldSpec{Label: "x", Type: "dropdown", Options: []string{"a", "b", "a"}}, "fields[0].options[2]", "duplicate"},
		{"radio empty option", form.FieldSpec{Label: "x", Type: "radio", Options: []string{"a", ""}}, "fields[0].options[1]", "required"},
		{"checkbox whitespace option", form.FieldSpec{Label: "x", Type: "checkbox", Options: []string{" ", "a"}}, "fields[0].options[0]", "required"},
		{"checkbox duplicate option", form.FieldSpec{Label: "x", Type: "checkbox", Options: []string{"a", "a"}}, "fields[0].options[1]", "duplicate"},
		// option limit (default 500)
		{"500 options", form.FieldSpec{Label: "x", Type: "dropdown", Options: options(500)}, "", ""},
		{"501 options", form.FieldSpec{Label: "x", Type: "dropdown", Options: options(501)}, "fields[0].options", "too_many"},
		{"501 checkbox options", form.FieldSpec{Label: "x", Type: "checkbox", Options: options(501)}, "fields[0].options", "too_many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := seqIDs()
			f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: []form.FieldSpec{tt.spec}}, ids, form.DefaultLimits, t0)
			if tt.wantPath == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got := f.Fields()[0].Type; string(got) != tt.spec.Type {
					t.Fatalf("type = %q", got)
				}
				return
			}
			vs := violations(t, err)
			if !hasViolation(vs, tt.wantPath, tt.wantCode) {
				t.Fatalf("violations = %+v, want %s/%s", vs, tt.wantPath, tt.wantCode)
			}
			if f != nil {
				t.Fatal("form returned with an error")
			}
		})
	}
}

func TestFieldLimits(t *testing.T) {
	small := form.Limits{MaxFields: 3, MaxOptions: 2}
	tests := []struct {
		name   string
		lim    form.Limits
		fields []form.FieldSpec
		want   string // expected violation path; empty when valid
	}{
		{"default 200 fields", form.DefaultLimits, textFields(200), ""},
		{"default 201 fields", form.DefaultLimits, textFields(201), "fields"},
		{"small 3 fields", small, textFields(3), ""},
		{"small 4 fields", small, textFields(4), "fields"},
		{"small 2 options", small, []form.FieldSpec{{Label: "x", Type: "radio", Options: options(2)}}, ""},
		{"small 3 options", small, []form.FieldSpec{{Label: "x", Type: "radio", Options: options(3)}}, "fields[0].options"},
		{"small 3 checkbox options", small, []form.FieldSpec{{Label: "a", Type: "text"}, {Label: "x", Type: "checkbox", Options: options(3)}}, "fields[1].options"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := seqIDs()
			f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: tt.fields}, ids, tt.lim, t0)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if len(f.Fields()) != len(tt.fields) {
					t.Fatalf("fields = %d, want %d", len(f.Fields()), len(tt.fields))
				}
				return
			}
			vs := violations(t, err)
			if !hasViolation(vs, tt.want, "too_many") {
				t.Fatalf("violations = %+v, want %s too_many", vs, tt.want)
			}
		})
	}
}

func TestEveryViolationReported(t *testing.T) {
	ids, _ := seqIDs()
	_, err := form.New("frm_1", "wsp_1", form.Draft{Name: "  ", Fields: []form.FieldSpec{
		{Label: "ok", Type: "text"},
		{Label: "", Type: "bogus"},
		{Label: "c", Type: "dropdown"},
		{Label: "d", Type: "date", Options: []string{"x"}},
		{Label: "e", Type: "radio", Options: []string{"a", "a", ""}},
	}}, ids, form.DefaultLimits, t0)
	vs := violations(t, err)
	want := []string{
		"fields[1].label", "fields[1].type", "fields[2].options", "fields[3].options",
		"fields[4].options[1]", "fields[4].options[2]", "name",
	}
	if got := paths(vs); !reflect.DeepEqual(got, want) {
		t.Fatalf("paths = %v, want %v", got, want)
	}
}

func TestParseHelpers(t *testing.T) {
	for _, s := range []string{"draft", "published", "archived"} {
		if st, ok := form.ParseStatus(s); !ok || string(st) != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, st, ok)
		}
	}
	for _, s := range []string{"", "Draft", "closed", "deleted"} {
		if _, ok := form.ParseStatus(s); ok {
			t.Errorf("ParseStatus(%q) ok", s)
		}
	}
	nine := []string{"text", "email", "number", "dropdown", "checkbox", "radio", "textarea", "file", "date"}
	for _, s := range nine {
		if ft, ok := form.ParseFieldType(s); !ok || string(ft) != s {
			t.Errorf("ParseFieldType(%q) = %q, %v", s, ft, ok)
		}
	}
	for _, s := range []string{"", "TEXT", "select", "url", "phone", "time", "datetime"} {
		if _, ok := form.ParseFieldType(s); ok {
			t.Errorf("ParseFieldType(%q) ok", s)
		}
	}
}

func TestFieldHelpers(t *testing.T) {
	tests := []struct {
		f    form.Field
		want bool
	}{
		{form.Field{Type: form.TypeCheckbox, Options: []string{"a"}}, true},
		{form.Field{Type: form.TypeCheckbox}, false},
		{form.Field{Type: form.TypeFile}, true},
		{form.Field{Type: form.TypeDropdown, Options: []string{"a"}}, false},
		{form.Field{Type: form.TypeText}, false},
	}
	for _, tt := range tests {
		if got := tt.f.Multiple(); got != tt.want {
			t.Errorf("%+v.Multiple() = %v", tt.f, got)
		}
	}
	f := form.Field{Options: []string{"a", "b"}}
	if !f.HasOption("b") || f.HasOption("c") || f.HasOption("") {
		t.Error("HasOption wrong")
	}
}

func TestApplyOnlyIncludedPropertiesChange(t *testing.T) {
	desc := "old"
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Old", Description: &desc,
		Fields: []form.FieldSpec{{Label: "a", Type: "text"}}}, ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatal(err)
	}
	newDesc := "new"
	tests := []struct {
		name  string
		patch form.Patch
		check func(t *testing.T, f *form.Form)
	}{
		{"empty patch", form.Patch{}, func(t *testing.T, f *form.Form) {
			if f.Name() != "Old" || *f.Description() != "old" || f.Status() != form.StatusDraft || len(f.Fields()) != 1 {
				t.Errorf("changed: %q %v %q %v", f.Name(), f.Description(), f.Status(), f.Fields())
			}
		}},
		{"name only", form.Patch{Name: ptr("  New ")}, func(t *testing.T, f *form.Form) {
			if f.Name() != "New" || *f.Description() != "old" || f.Status() != form.StatusDraft || len(f.Fields()) != 1 {
				t.Errorf("got %q %v %q %v", f.Name(), f.Description(), f.Status(), f.Fields())
			}
		}},
		{"description only", form.Patch{Description: ptr(&newDesc)}, func(t *testing.T, f *form.Form) {
			if f.Name() != "Old" || *f.Description() != "new" || len(f.Fields()) != 1 {
				t.Errorf("got %q %v %v", f.Name(), f.Description(), f.Fields())
			}
		}},
		{"description cleared", form.Patch{Description: ptr[*string](nil)}, func(t *testing.T, f *form.Form) {
			if f.Description() != nil || f.Name() != "Old" {
				t.Errorf("got %q %v", f.Name(), f.Description())
			}
		}},
		{"status only", form.Patch{Status: ptr("archived")}, func(t *testing.T, f *form.Form) {
			if f.Status() != form.StatusArchived || f.Name() != "Old" || len(f.Fields()) != 1 {
				t.Errorf("got %q %q %v", f.Status(), f.Name(), f.Fields())
			}
		}},
		{"fields only", form.Patch{Fields: &[]form.FieldSpec{}}, func(t *testing.T, f *form.Form) {
			if len(f.Fields()) != 0 || f.Name() != "Old" || *f.Description() != "old" {
				t.Errorf("got %q %v %v", f.Name(), f.Description(), f.Fields())
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := *f
			if _, err := c.Apply(tt.patch, ids, form.DefaultLimits, t1); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			tt.check(t, &c)
			if !c.UpdatedAt().Equal(t1) || !c.CreatedAt().Equal(t0) {
				t.Errorf("times = %v / %v", c.CreatedAt(), c.UpdatedAt())
			}
		})
	}
}

func TestApplyStatusTransitions(t *testing.T) {
	statuses := []form.Status{form.StatusDraft, form.StatusPublished, form.StatusArchived}
	for _, from := range statuses {
		for _, to := range statuses {
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				f := form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "F", nil, from, nil, form.DefaultSettings(), t0, t0)
				ids, _ := seqIDs()
				published, err := f.Apply(form.Patch{Status: ptr(string(to))}, ids, form.DefaultLimits, t1)
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				if f.Status() != to {
					t.Errorf("status = %q, want %q", f.Status(), to)
				}
				wantPub := to == form.StatusPublished && from != form.StatusPublished
				if published != wantPub {
					t.Errorf("published = %v, want %v", published, wantPub)
				}
			})
		}
	}
}

func TestApplyPublishedOnlyWithStatusChange(t *testing.T) {
	f := form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "F", nil, form.StatusPublished, nil, form.DefaultSettings(), t0, t0)
	ids, _ := seqIDs()
	published, err := f.Apply(form.Patch{Name: ptr("G")}, ids, form.DefaultLimits, t1)
	if err != nil || published {
		t.Fatalf("rename of a published form: published=%v err=%v", published, err)
	}
}

func TestApplyInvalidStatus(t *testing.T) {
	for _, s := range []string{"", "open", "Published", "deleted"} {
		t.Run(s, func(t *testing.T) {
			f := form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "F", nil, form.StatusDraft, nil, form.DefaultSettings(), t0, t0)
			ids, _ := seqIDs()
			published, err := f.Apply(form.Patch{Status: ptr(s)}, ids, form.DefaultLimits, t1)
			vs := violations(t, err)
			if !hasViolation(vs, "status", "invalid_value") || published {
				t.Fatalf("violations = %v published = %v", vs, published)
			}
			if f.Status() != form.StatusDraft {
				t.Fatalf("status = %q", f.Status())
			}
		})
	}
}

func TestApplyFields(t *testing.T) {
	// Existing fields: fld_1 (text), fld_2 (radio), fld_3 (email).
	base := func(t *testing.T) (*form.Form, func() string) {
		return newForm(t,
			form.FieldSpec{Label: "Name", Type: "text", Required: true},
			form.FieldSpec{Label: "Colour", Type: "radio", Options: []string{"red", "blue"}},
			form.FieldSpec{Label: "Email", Type: "email"},
		)
	}
	t.Run("keep, create, remove and reorder", func(t *testing.T) {
		f, ids := base(t)
		_, err := f.Apply(form.Patch{Fields: &[]form.FieldSpec{
			{ID: "fld_3", Label: "E-mail", Type: "email", Required: true},
			{Label: "Age", Type: "number"},
			{ID: "fld_1", Label: "Full name", Type: "textarea"},
		}}, ids, form.DefaultLimits, t1)
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		got := f.Fields()
		if len(got) != 3 {
			t.Fatalf("fields = %+v", got)
		}
		want := []struct {
			id, label string
			typ       form.FieldType
			required  bool
		}{
			{"fld_3", "E-mail", form.TypeEmail, true},
			{"fld_4", "Age", form.TypeNumber, false},
			{"fld_1", "Full name", form.TypeTextarea, false},
		}
		for i, w := range want {
			if got[i].ID != w.id || got[i].Label != w.label || got[i].Type != w.typ || got[i].Required != w.required {
				t.Errorf("field %d = %+v, want %+v", i, got[i], w)
			}
		}
		if _, ok := f.Field("fld_2"); ok {
			t.Error("omitted field fld_2 kept")
		}
	})
	t.Run("foreign ID", func(t *testing.T) {
		f, ids := base(t)
		before := f.Fields()
		_, err := f.Apply(form.Patch{Fields: &[]form.FieldSpec{
			{ID: "fld_1", Label: "Name", Type: "text"},
			{ID: "fld_other", Label: "X", Type: "text"},
		}}, ids, form.DefaultLimits, t1)
		vs := violations(t, err)
		if !hasViolation(vs, "fields[1].id", "") {
			t.Fatalf("violations = %+v, want fields[1].id", vs)
		}
		if !reflect.DeepEqual(f.Fields(), before) {
			t.Fatal("fields changed after a rejected patch")
		}
	})
	t.Run("ID of another form's field", func(t *testing.T) {
		// fld_1 exists on other forms, but not on this one.
		f := form.UnmarshalWithSettingsFromDatabase("frm_2", "wsp_1", "F", nil, form.StatusDraft,
			[]form.Field{{ID: "fld_x", Label: "X", Type: form.TypeText}}, form.DefaultSettings(), t0, t0)
		ids, _ := seqIDs()
		_, err := f.Apply(form.Patch{Fields: &[]form.FieldSpec{{ID: "fld_1", Label: "A", Type: "text"}}}, ids, form.DefaultLimits, t1)
		if vs := violations(t, err); !hasViolation(vs, "fields[0].id", "") {
			t.Fatalf("violations = %+v", vs)
		}
	})
	t.Run("duplicate ID", func(t *testing.T) {
		f, ids := base(t)
		_, err := f.Apply(form.Patch{Fields: &[]form.FieldSpec{
			{ID: "fld_2", Label: "Colour", Type: "radio", Options: []string{"a"}},
			{ID: "fld_2", Label: "Colour 2", Type: "radio", Options: []string{"a"}},
		}}, ids, form.DefaultLimits, t1)
		vs := violations(t, err)
		if !hasViolation(vs, "fields[1].id", "duplicate") {
			t.Fatalf("violations = %+v, want fields[1].id duplicate", vs)
		}
		if len(f.Fields()) != 3 {
			t.Fatal("fields changed after a rejected patch")
		}
	})
	t.Run("violation paths of a PATCH", func(t *testing.T) {
		f, ids := base(t)
		_, err := f.Apply(form.Patch{Fields: &[]form.FieldSpec{
			{ID: "fld_1", Label: "Name", Type: "text"},
			{Label: "Pick", Type: "dropdown"},
			{ID: "fld_2", Label: "Colour", Type: "radio", Options: []string{"a", ""}},
		}}, ids, form.DefaultLimits, t1)
		vs := violations(t, err)
		if got, want := paths(vs), []string{"fields[1].options", "fields[2].options[1]"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("paths = %v, want %v", got, want)
		}
	})
	t.Run("too many fields with custom limits", func(t *testing.T) {
		f, ids := base(t)
		_, err := f.Apply(form.Patch{Fields: ptr(textFields(4))}, ids, form.Limits{MaxFields: 3, MaxOptions: 10}, t1)
		if vs := violations(t, err); !hasViolation(vs, "fields", "too_many") {
			t.Fatalf("violations = %+v", vs)
		}
		if len(f.Fields()) != 3 {
			t.Fatal("fields changed")
		}
	})
}

func TestApplyIsAtomic(t *testing.T) {
	desc := "d"
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Old", Description: &desc,
		Fields: []form.FieldSpec{{Label: "a", Type: "text"}}}, ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatal(err)
	}
	other := "x"
	bad := []struct {
		name  string
		patch form.Patch
		paths []string
	}{
		{"bad name, good rest", form.Patch{Name: ptr(""), Description: ptr(&other), Status: ptr("published"),
			Fields: &[]form.FieldSpec{{Label: "b", Type: "date"}}}, []string{"name"}},
		{"bad status, good rest", form.Patch{Name: ptr("New"), Status: ptr("gone")}, []string{"status"}},
		{"bad fields, good rest", form.Patch{Name: ptr("New"), Status: ptr("published"),
			Fields: &[]form.FieldSpec{{Label: "b", Type: "radio"}}}, []string{"fields[0].options"}},
		{"all bad", form.Patch{Name: ptr(strings.Repeat("n", 201)), Status: ptr("x"),
			Fields: &[]form.FieldSpec{{Label: "", Type: "text"}}}, []string{"fields[0].label", "name", "status"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			c := *f
			published, err := c.Apply(tt.patch, ids, form.DefaultLimits, t1)
			vs := violations(t, err)
			if got := paths(vs); !reflect.DeepEqual(got, tt.paths) {
				t.Errorf("paths = %v, want %v", got, tt.paths)
			}
			if published {
				t.Error("published reported on failure")
			}
			if c.Name() != "Old" || *c.Description() != "d" || c.Status() != form.StatusDraft ||
				!reflect.DeepEqual(c.Fields(), f.Fields()) || !c.UpdatedAt().Equal(t0) {
				t.Errorf("form changed: %q %v %q %v %v", c.Name(), c.Description(), c.Status(), c.Fields(), c.UpdatedAt())
			}
		})
	}
}

func TestFieldsReturnsACopy(t *testing.T) {
	f, _ := newForm(t, form.FieldSpec{Label: "a", Type: "text"})
	fs := f.Fields()
	fs[0].Label = "mutated"
	if f.Fields()[0].Label != "a" {
		t.Fatal("Fields exposes internal slice")
	}
}

func TestAcceptsSubmissions(t *testing.T) {
	tests := []struct {
		status      form.Status
		api, public error
	}{
		{form.StatusDraft, nil, domain.ErrFormClosed},
		{form.StatusPublished, nil, nil},
		{form.StatusArchived, domain.ErrFormClosed, domain.ErrFormClosed},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			f := form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "F", nil, tt.status, nil, form.DefaultSettings(), t0, t0)
			if err := f.AcceptsAPISubmissions(); !errors.Is(err, tt.api) || (tt.api == nil && err != nil) {
				t.Errorf("AcceptsAPISubmissions = %v, want %v", err, tt.api)
			}
			if err := f.AcceptsPublicSubmissions(); !errors.Is(err, tt.public) || (tt.public == nil && err != nil) {
				t.Errorf("AcceptsPublicSubmissions = %v, want %v", err, tt.public)
			}
		})
	}
}
