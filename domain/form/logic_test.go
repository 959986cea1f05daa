package form_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

func strp(s string) *string { return &s }
func intp(n int) *int       { return &n }

func codesOf(t *testing.T, err error) map[string]string {
	t.Helper()
	var verr *domain.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a validation error, got %v", err)
	}
	out := map[string]string{}
	for _, v := range verr.Violations {
		out[v.Field] = v.Code
	}
	return out
}

func keysOf(f *form.Form) []string {
	var out []string
	for _, fl := range f.Fields() {
		out = append(out, fl.Key)
	}
	return out
}

func TestDefaultKey(t *testing.T) {
	for label, want := range map[string]string{
		"Email address":       "email_address",
		"  What's your NAME?": "what_s_your_name",
		"E-mail":              "e_mail",
		"2nd choice":          "f_2nd_choice",
		"Café":                "caf",
		"¿¿??":                "field",
		"a__b":                "a_b",
	} {
		if got := form.DefaultKey(label); got != want || !form.ValidKey(got) {
			t.Errorf("DefaultKey(%q) = %q, want %q", label, got, want)
		}
	}
	long := form.DefaultKey(string(make([]byte, 0)) + "x" + string(bytesOf('a', 200)))
	if !form.ValidKey(long) || len(long) > 60 {
		t.Errorf("long label key %q", long)
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestKeysDefaultAndDeduplicate(t *testing.T) {
	f, _ := newForm(t,
		form.FieldSpec{Label: "Email", Type: "email"},
		form.FieldSpec{Label: "email", Type: "text"},
		form.FieldSpec{Label: "E mail", Type: "text", Key: strp("email_2")},
		form.FieldSpec{Label: "Email!", Type: "text"},
	)
	got := keysOf(f)
	want := []string{"email", "email_3", "email_2", "email_4"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("keys %v, want %v", got, want)
		}
	}
	fl, ok := f.FieldByName("email_2")
	if !ok || fl.Label != "E mail" {
		t.Fatalf("FieldByName(key) = %+v %v", fl, ok)
	}
	if byID, ok := f.FieldByName(fl.ID); !ok || byID.Key != "email_2" {
		t.Fatalf("FieldByName(id) = %+v %v", byID, ok)
	}
	if _, ok := f.FieldByName("nope"); ok {
		t.Fatal("FieldByName found an unknown name")
	}
}

func TestKeysRejectInvalidAndDuplicate(t *testing.T) {
	for name, tc := range map[string]struct {
		specs []form.FieldSpec
		path  string
		code  string
	}{
		"upper case":    {[]form.FieldSpec{{Label: "A", Type: "text", Key: strp("Email")}}, "fields[0].key", "invalid_value"},
		"leading digit": {[]form.FieldSpec{{Label: "A", Type: "text", Key: strp("1a")}}, "fields[0].key", "invalid_value"},
		"empty":         {[]form.FieldSpec{{Label: "A", Type: "text", Key: strp("")}}, "fields[0].key", "invalid_value"},
		"too long":      {[]form.FieldSpec{{Label: "A", Type: "text", Key: strp("a" + string(bytesOf('b', 64)))}}, "fields[0].key", "invalid_value"},
		"duplicate": {[]form.FieldSpec{{Label: "A", Type: "text", Key: strp("x")}, {Label: "B", Type: "text", Key: strp("x")}},
			"fields[1].key", "duplicate"},
	} {
		t.Run(name, func(t *testing.T) {
			ids, _ := seqIDs()
			_, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: tc.specs}, ids, form.DefaultLimits, t0)
			if got := codesOf(t, err)[tc.path]; got != tc.code {
				t.Fatalf("%s: %q, want %q (%v)", tc.path, got, tc.code, err)
			}
		})
	}
	ok := string(bytesOf('a', 64))
	if !form.ValidKey(ok) || form.ValidKey(ok+"a") {
		t.Fatal("64 characters is the limit")
	}
}

func TestKeysKeptAcrossPatch(t *testing.T) {
	f, ids := newForm(t, form.FieldSpec{Label: "Email", Type: "email"}, form.FieldSpec{Label: "Name", Type: "text", Key: strp("who")})
	fields := f.Fields()
	specs := []form.FieldSpec{
		{ID: fields[0].ID, Label: "Work email", Type: "email"},
		{ID: fields[1].ID, Label: "Full name", Type: "text"},
		{Label: "Email", Type: "text"},
	}
	if _, err := f.Apply(form.Patch{Fields: &specs}, ids, form.DefaultLimits, t0); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(f); got[0] != "email" || got[1] != "who" || got[2] != "email_2" {
		t.Fatalf("keys %v", got)
	}
	stored := form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "F", nil, form.StatusDraft, []form.Field{
		{ID: "fld_a", Label: "Name", Type: form.TypeText}, {ID: "fld_b", Label: "Name", Type: form.TypeText, Key: "name"},
	}, form.DefaultSettings(), t0, t0)
	if got := keysOf(stored); got[0] != "name_2" || got[1] != "name" {
		t.Fatalf("stored fields without keys: %v", got)
	}
	if stored.Fields()[0].Page != 1 {
		t.Fatal("stored fields default to page 1")
	}
}

func rule(match string, conds ...form.ConditionSpec) *form.ShowIfSpec {
	return &form.ShowIfSpec{Match: match, Conditions: conds}
}

func cond(field, op string, v any) form.ConditionSpec {
	return form.ConditionSpec{FieldID: field, Operator: op, Value: v, HasValue: true}
}

func TestShowIfChecks(t *testing.T) {
	base := func(show *form.ShowIfSpec, page int) []form.FieldSpec {
		return []form.FieldSpec{
			{Label: "Plan", Type: "radio", Options: []string{"Free", "Pro"}, Page: intp(1)},
			{Label: "CV", Type: "file", Page: intp(2)},
			{Label: "Company", Type: "text", ShowIf: show, Page: intp(page)},
			{Label: "Later", Type: "text", Page: intp(2)},
		}
	}
	for name, tc := range map[string]struct {
		specs []form.FieldSpec
		path  string
		code  string
	}{
		"later field":   {base(rule("all", cond("later", "equals", "x")), 2), "fields[2].show_if.conditions[0].field_id", "invalid_value"},
		"itself":        {base(rule("all", cond("company", "equals", "x")), 2), "fields[2].show_if.conditions[0].field_id", "invalid_value"},
		"later page":    {[]form.FieldSpec{{Label: "A", Type: "text", Page: intp(2)}, {Label: "B", Type: "text", ShowIf: rule("all", cond("a", "equals", "x"))}}, "fields[1].show_if.conditions[0].field_id", "invalid_value"},
		"unknown":       {base(rule("all", cond("fld_nope", "equals", "x")), 2), "fields[2].show_if.conditions[0].field_id", "unknown_field"},
		"file field":    {base(rule("all", cond("cv", "equals", "x")), 2), "fields[2].show_if.conditions[0].field_id", "invalid_value"},
		"operator":      {base(rule("all", cond("plan", "is", "x")), 2), "fields[2].show_if.conditions[0].operator", "invalid_value"},
		"match":         {base(rule("most", cond("plan", "equals", "x")), 2), "fields[2].show_if.match", "invalid_value"},
		"no conditions": {base(rule("all"), 2), "fields[2].show_if.conditions", "invalid_length"},
		"value type":    {base(rule("all", cond("plan", "equals", []any{"x"})), 2), "fields[2].show_if.conditions[0].value", "invalid_type"},
		"no value":      {base(rule("all", form.ConditionSpec{FieldID: "plan", Operator: "equals"}), 2), "fields[2].show_if.conditions[0].value", "required"},
		"page zero":     {base(nil, 0), "fields[2].page", "invalid_value"},
		"not an option": {base(rule("all", cond("plan", "equals", "Enterprise")), 2), "fields[2].show_if.conditions[0].value", "invalid_value"},
		"page gap":      {[]form.FieldSpec{{Label: "A", Type: "text"}, {Label: "B", Type: "text", Page: intp(3)}}, "fields", "invalid_value"},
		"hidden page":   {[]form.FieldSpec{{Label: "A", Type: "text"}, {Label: "B", Type: "text", Hidden: true, Page: intp(2)}}, "fields", "invalid_value"},
		"file not last": {[]form.FieldSpec{{Label: "CV", Type: "file"}, {Label: "B", Type: "text", Page: intp(2)}}, "fields[0].page", "invalid_value"},
	} {
		t.Run(name, func(t *testing.T) {
			ids, _ := seqIDs()
			_, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: tc.specs}, ids, form.DefaultLimits, t0)
			if got := codesOf(t, err)[tc.path]; got != tc.code {
				t.Fatalf("%s: %q, want %q (%v)", tc.path, got, tc.code, err)
			}
		})
	}
	// A condition names an earlier field by key or ID; it is stored by ID.
	f, _ := newForm(t, base(rule("any", cond("plan", "equals", "Pro"), cond("plan", "equals", json.Number("2"))), 2)...)
	fields := f.Fields()
	r := fields[2].ShowIf
	if r == nil || !r.Any || r.Match() != "any" || r.Conditions[0].FieldID != fields[0].ID || r.Conditions[1].Value != "2" || r.Conditions[1].Kind != "number" {
		t.Fatalf("rule %+v", r)
	}
}

func one(s string) form.Answer     { return form.Answer{Items: []string{s}} }
func list(s ...string) form.Answer { return form.Answer{Items: s, List: true} }
func answers(m map[string]form.Answer) func(string) (form.Answer, bool) {
	return func(id string) (form.Answer, bool) { a, ok := m[id]; return a, ok }
}

func TestConditionOperators(t *testing.T) {
	tests := []struct {
		op, value string
		a         form.Answer
		present   bool
		want      bool
	}{
		{"equals", "Pro", one("Pro"), true, true},
		{"equals", "Pro", one("pro"), true, false},
		{"equals", "10", one("10.0"), true, true},
		{"equals", "x", list("x"), true, true},
		{"equals", "x", list("x", "y"), true, false},
		{"equals", "x", form.Answer{}, false, false},
		{"not_equals", "x", one("y"), true, true},
		{"not_equals", "x", one("x"), true, false},
		{"not_equals", "x", form.Answer{}, false, true},
		{"not_equals", "x", one(""), true, true},
		{"contains", "ell", one("hello"), true, true},
		{"contains", "z", one("hello"), true, false},
		{"contains", "b", list("a", "b"), true, true},
		{"contains", "b", list("abc"), true, false},
		{"contains", "b", list(), true, false},
		{"greater_than", "10", one("11"), true, true},
		{"greater_than", "10", one("9.5"), true, false},
		{"greater_than", "2026-01-01", one("2026-02-01"), true, true},
		{"greater_than", "10", one("abc"), true, false},
		{"greater_than", "10", list("11"), true, false},
		{"less_than", "10", one("-1"), true, true},
		{"less_than", "2026-01-01", one("2025-12-31"), true, true},
		{"less_than", "2026-01-01", one("2026-01-01"), true, false},
		{"less_than", "1", form.Answer{}, false, false},
	}
	for _, tt := range tests {
		c := form.Condition{FieldID: "f", Operator: tt.op, Value: tt.value}
		if got := c.Holds(tt.a, tt.present); got != tt.want {
			t.Errorf("%s %q of %+v (present %v) = %v, want %v", tt.op, tt.value, tt.a, tt.present, got, tt.want)
		}
	}
}

func TestSkippedAllAnyAndChainsAcrossPages(t *testing.T) {
	f, _ := newForm(t,
		form.FieldSpec{Label: "Role", Type: "radio", Options: []string{"Student", "Employee"}},
		form.FieldSpec{Label: "Age", Type: "number"},
		form.FieldSpec{Label: "Company", Type: "text", Page: intp(2), ShowIf: rule("all", cond("role", "equals", "Employee"), cond("age", "greater_than", 17))},
		form.FieldSpec{Label: "Team", Type: "text", Page: intp(2), ShowIf: rule("all", cond("company", "contains", ""))},
		form.FieldSpec{Label: "School", Type: "text", Page: intp(3), ShowIf: rule("any", cond("role", "equals", "Student"), cond("age", "less_than", 18))},
		form.FieldSpec{Label: "Done", Type: "text", Page: intp(4)},
	)
	fl := f.Fields()
	id := func(i int) string { return fl[i].ID }
	cases := []struct {
		name  string
		in    map[string]form.Answer
		off   []int
		steps []int
	}{
		{"employee adult", map[string]form.Answer{id(0): one("Employee"), id(1): one("30"), id(2): one("ACME")}, []int{4}, []int{1, 2, 4}},
		{"employee minor", map[string]form.Answer{id(0): one("Employee"), id(1): one("16")}, []int{2, 3}, []int{1, 3, 4}},
		{"student", map[string]form.Answer{id(0): one("Student"), id(1): one("30"), id(2): one("typed before")}, []int{2, 3}, []int{1, 3, 4}},
		{"nothing", nil, []int{2, 3, 4}, []int{1, 4}},
	}
	for _, tc := range cases {
		skipped := form.Skipped(fl, answers(tc.in))
		want := map[string]bool{}
		for _, i := range tc.off {
			want[id(i)] = true
		}
		if len(skipped) != len(want) {
			t.Errorf("%s: skipped %v, want %v", tc.name, skipped, want)
		}
		for k := range want {
			if !skipped[k] {
				t.Errorf("%s: %s shown, want skipped", tc.name, k)
			}
		}
		steps := form.Steps(fl, skipped)
		if len(steps) != len(tc.steps) {
			t.Errorf("%s: steps %v, want %v", tc.name, steps, tc.steps)
			continue
		}
		for i := range steps {
			if steps[i] != tc.steps[i] {
				t.Errorf("%s: steps %v, want %v", tc.name, steps, tc.steps)
			}
		}
	}
	if form.Skipped([]form.Field{{ID: "a", Page: 1}}, answers(nil)) != nil {
		t.Fatal("a form without rules skips nothing")
	}
}
