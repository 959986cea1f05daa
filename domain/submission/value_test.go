package submission_test

import (
	"errors"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// emailOfLen builds a syntactically valid address of exactly n bytes (n >= 70).
func emailOfLen(n int) string {
	local := strings.Repeat("a", 60)
	rest := n - len(local) - 1 - len(".com")
	var labels []string
	for rest > 0 {
		l := 50
		if rest <= 51 {
			l = rest
		} else if rest-51 < 2 {
			l = rest - 3 // leave room for a label of 2 after the dot
		}
		labels = append(labels, strings.Repeat("b", l))
		rest -= l
		if rest > 0 {
			rest-- // the dot
		}
	}
	return local + "@" + strings.Join(labels, ".") + ".com"
}

func fieldOf(typ form.FieldType, required bool, opts ...string) form.Field {
	return form.Field{ID: "fld_x", Label: "X", Type: typ, Required: required, Options: opts}
}

func violationsOf(t *testing.T, err error) []domain.Violation {
	t.Helper()
	var ve *domain.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("expected *domain.ValidationError, got %T: %v", err, err)
	}
	return ve.Violations
}

type valueCase struct {
	name  string
	field form.Field
	in    submission.Input
	want  any    // string or []string when valid; nil when the value is absent (optional, empty)
	code  string // expected violation code when invalid
}

func runValueCases(t *testing.T, cases []valueCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			input := map[string]submission.Input{}
			if tt.in != nil {
				input["fld_x"] = tt.in
			}
			var (
				data map[string]submission.Value
				err  error
			)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Validate panicked: %v", r)
					}
				}()
				data, err = submission.Validate([]form.Field{tt.field}, input)
			}()
			if tt.code != "" {
				if err == nil {
					t.Fatalf("Validate accepted %#v as %v", tt.in, data["fld_x"])
				}
				vs := violationsOf(t, err)
				if len(vs) != 1 || vs[0].Field != "fld_x" || vs[0].Code != tt.code {
					t.Fatalf("violations = %+v, want one fld_x/%s", vs, tt.code)
				}
				if data != nil {
					t.Fatalf("data returned with an error: %v", data)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate(%#v): %v", tt.in, err)
			}
			v, ok := data["fld_x"]
			switch w := tt.want.(type) {
			case nil:
				if ok {
					t.Fatalf("value stored for an empty optional answer: %#v", v)
				}
			case string:
				if !ok || v.IsList() || v.String() != w {
					t.Fatalf("value = %#v (list %v), want %q", v.String(), v.IsList(), w)
				}
			case []string:
				if !ok || !v.IsList() || !reflect.DeepEqual(v.Strings(), w) {
					t.Fatalf("value = %#v (list %v), want %q", v.Strings(), v.IsList(), w)
				}
			}
		})
	}
}

func TestValidateText(t *testing.T) {
	text, textarea := fieldOf(form.TypeText, false), fieldOf(form.TypeTextarea, false)
	runValueCases(t, []valueCase{
		{"text", text, "hello", "hello", ""},
		{"text keeps inner spacing", text, " hello  world ", " hello  world ", ""},
		{"text 1000", text, strings.Repeat("a", 1000), strings.Repeat("a", 1000), ""},
		{"text 1000 emoji", text, strings.Repeat("😀", 1000), strings.Repeat("😀", 1000), ""},
		{"text 1001", text, strings.Repeat("a", 1001), nil, "too_long"},
		{"text 1001 emoji", text, strings.Repeat("😀", 1001), nil, "too_long"},
		{"text empty optional", text, "", nil, ""},
		{"text omitted optional", text, nil, nil, ""},
		{"text number", text, submission.Number("12"), nil, "invalid_type"},
		{"text float", text, 12.0, nil, "invalid_type"},
		{"text bool", text, true, nil, "invalid_type"},
		{"text object", text, map[string]any{"a": "b"}, nil, "invalid_type"},
		{"text array", text, []any{"a"}, nil, "invalid_type"},
		{"textarea 10000", textarea, strings.Repeat("ß", 10000), strings.Repeat("ß", 10000), ""},
		{"textarea 10001", textarea, strings.Repeat("ß", 10001), nil, "too_long"},
		{"textarea newlines", textarea, "a\nb", "a\nb", ""},
		{"textarea object", textarea, map[string]any{}, nil, "invalid_type"},
	})
}

func TestValidateEmail(t *testing.T) {
	f := fieldOf(form.TypeEmail, false)
	e254, e255 := emailOfLen(254), emailOfLen(255)
	if len(e254) != 254 || len(e255) != 255 {
		t.Fatalf("helper lengths %d %d", len(e254), len(e255))
	}
	runValueCases(t, []valueCase{
		{"plain", f, "jane@example.com", "jane@example.com", ""},
		{"subdomain and plus", f, "jane.doe+tag@mail.example.co.uk", "jane.doe+tag@mail.example.co.uk", ""},
		{"trimmed", f, "  jane@example.com ", "jane@example.com", ""},
		{"254 chars", f, e254, e254, ""},
		{"255 chars", f, e255, nil, "invalid_email"},
		{"display name", f, "Jane <jane@example.com>", nil, "invalid_email"},
		{"angle brackets", f, "<jane@example.com>", nil, "invalid_email"},
		{"two addresses comma", f, "a@example.com, b@example.com", nil, "invalid_email"},
		{"two addresses semicolon", f, "a@example.com;b@example.com", nil, "invalid_email"},
		{"no tld", f, "jane@localhost", nil, "invalid_email"},
		{"one-letter tld", f, "jane@example.c", nil, "invalid_email"},
		{"trailing dot", f, "jane@example.com.", nil, "invalid_email"},
		{"empty label", f, "jane@example..com", nil, "invalid_email"},
		{"no at", f, "jane.example.com", nil, "invalid_email"},
		{"two ats", f, "jane@doe@example.com", nil, "invalid_email"},
		{"no local", f, "@example.com", nil, "invalid_email"},
		{"no domain", f, "jane@", nil, "invalid_email"},
		{"space inside", f, "ja ne@example.com", nil, "invalid_email"},
		{"newline injection", f, "jane@example.com\nBcc: x@example.com", nil, "invalid_email"},
		{"empty optional", f, "   ", nil, ""},
		{"number", f, submission.Number("1"), nil, "invalid_type"},
		{"array", f, []any{"jane@example.com"}, nil, "invalid_type"},
	})
}

func TestValidateNumber(t *testing.T) {
	f := fieldOf(form.TypeNumber, false)
	runValueCases(t, []valueCase{
		{"json integer", f, submission.Number("42"), "42", ""},
		{"json exponent", f, submission.Number("1e3"), "1000", ""},
		{"json trailing zero", f, submission.Number("1.50"), "1.5", ""},
		{"json negative zero", f, submission.Number("-0"), "0", ""},
		{"json negative", f, submission.Number("-12.25"), "-12.25", ""},
		{"json small", f, submission.Number("0.001"), "0.001", ""},
		{"json 1E2", f, submission.Number("1E2"), "100", ""},
		{"string integer", f, "42", "42", ""},
		{"string exponent", f, "1e3", "1000", ""},
		{"string trailing zero", f, "1.50", "1.5", ""},
		{"string negative zero", f, "-0", "0", ""},
		{"string negative zero decimal", f, "-0.0", "0", ""},
		{"string spaced", f, " 7 ", "7", ""},
		{"float64", f, 2.50, "2.5", ""},
		{"float64 negative zero", f, math.Copysign(0, -1), "0", ""},
		{"string NaN", f, "NaN", nil, "invalid_number"},
		{"string nan", f, "nan", nil, "invalid_number"},
		{"string Inf", f, "Inf", nil, "invalid_number"},
		{"string +Inf", f, "+Inf", nil, "invalid_number"},
		{"string -Infinity", f, "-Infinity", nil, "invalid_number"},
		{"string overflow", f, "1e400", nil, "invalid_number"},
		{"json overflow", f, submission.Number("1e400"), nil, "invalid_number"},
		{"float64 NaN", f, math.NaN(), nil, "invalid_number"},
		{"float64 Inf", f, math.Inf(1), nil, "invalid_number"},
		{"non-numeric", f, "twelve", nil, "invalid_number"},
		{"numeric prefix", f, "12abc", nil, "invalid_number"},
		{"two numbers", f, "1 2", nil, "invalid_number"},
		{"bool", f, true, nil, "invalid_type"},
		{"array", f, []any{"1"}, nil, "invalid_type"},
		{"object", f, map[string]any{"n": 1}, nil, "invalid_type"},
		{"empty optional", f, "", nil, ""},
		// Shortest decimal form for very small and very large magnitudes.
		{"tiny", f, submission.Number("1e-7"), "1e-7", ""},
		{"tiny negative", f, "-2.5e-10", "-2.5e-10", ""},
		{"boundary 1e-6", f, submission.Number("0.000001"), "0.000001", ""},
		{"huge", f, submission.Number("1e21"), "1e21", ""},
		{"just under 1e21", f, submission.Number("999999999999999900000"), "999999999999999900000", ""},
		{"huge with mantissa", f, "1.5E+300", "1.5e300", ""},
		{"leading dot", f, ".5", "0.5", ""},
		{"plus sign", f, "+3", "3", ""},
		// Go-only syntax is not a numeric string.
		{"hex float", f, "0x1p4", nil, "invalid_number"},
		{"hex", f, "0x10", nil, "invalid_number"},
		{"digit separators", f, "1_000", nil, "invalid_number"},
		{"thousands comma", f, "1,000", nil, "invalid_number"},
	})
}

func TestValidateChoice(t *testing.T) {
	dropdown := fieldOf(form.TypeDropdown, false, "red", "green", "blue")
	radio := fieldOf(form.TypeRadio, false, "yes", "no")
	runValueCases(t, []valueCase{
		{"dropdown option", dropdown, "green", "green", ""},
		{"dropdown not an option", dropdown, "purple", nil, "invalid_option"},
		{"dropdown case differs", dropdown, "Green", nil, "invalid_option"},
		{"dropdown two options", dropdown, []any{"red", "green"}, nil, "invalid_type"},
		{"dropdown one-element array", dropdown, []any{"red"}, nil, "invalid_type"},
		{"dropdown number", dropdown, submission.Number("1"), nil, "invalid_type"},
		{"dropdown empty optional", dropdown, "", nil, ""},
		{"radio option", radio, "no", "no", ""},
		{"radio not an option", radio, "maybe", nil, "invalid_option"},
		{"radio bool", radio, true, nil, "invalid_type"},
		{"radio object", radio, map[string]any{}, nil, "invalid_type"},
	})
}

func TestValidateCheckbox(t *testing.T) {
	multi := fieldOf(form.TypeCheckbox, false, "a", "b", "c")
	multiReq := fieldOf(form.TypeCheckbox, true, "a", "b", "c")
	box := fieldOf(form.TypeCheckbox, false)
	boxReq := fieldOf(form.TypeCheckbox, true)
	runValueCases(t, []valueCase{
		{"options array", multi, []any{"a", "c"}, []string{"a", "c"}, ""},
		{"options []string", multi, []string{"b"}, []string{"b"}, ""},
		{"options single string", multi, "b", []string{"b"}, ""},
		{"options duplicate", multi, []any{"a", "a"}, nil, "duplicate"},
		{"options unknown", multi, []any{"a", "z"}, nil, "invalid_option"},
		{"options unknown single", multi, "z", nil, "invalid_option"},
		{"options non-string element", multi, []any{"a", submission.Number("1")}, nil, "invalid_type"},
		{"options nil element", multi, []any{nil}, nil, "invalid_type"},
		{"options bool", multi, true, nil, "invalid_type"},
		{"options object", multi, map[string]any{"a": true}, nil, "invalid_type"},
		{"options empty array optional", multi, []any{}, nil, ""},
		{"options empty array required", multiReq, []any{}, nil, "required"},
		{"options empty string required", multiReq, "", nil, "required"},
		{"box true", box, true, "true", ""},
		{"box false", box, false, "false", ""},
		{"box string true", box, "true", "true", ""},
		{"box string false", box, "false", "false", ""},
		{"box string TRUE", box, "TRUE", "true", ""},
		{"box string yes", box, "yes", nil, "invalid_type"},
		{"box number", box, submission.Number("1"), nil, "invalid_type"},
		{"box array", box, []any{true}, nil, "invalid_type"},
		{"box empty optional", box, "", nil, ""},
		{"box required true", boxReq, true, "true", ""},
		{"box required string true", boxReq, "true", "true", ""},
		{"box required false", boxReq, false, nil, "required"},
		{"box required string false", boxReq, "false", nil, "required"},
		{"box required missing", boxReq, nil, nil, "required"},
	})
}

func TestValidateDate(t *testing.T) {
	f := fieldOf(form.TypeDate, false)
	runValueCases(t, []valueCase{
		{"date", f, "2024-05-01", "2024-05-01", ""},
		{"leap day leap year", f, "2024-02-29", "2024-02-29", ""},
		{"leap day 2000", f, "2000-02-29", "2000-02-29", ""},
		{"leap day common year", f, "2023-02-29", nil, "invalid_date"},
		{"leap day 1900", f, "1900-02-29", nil, "invalid_date"},
		{"april 31", f, "2024-04-31", nil, "invalid_date"},
		{"month 13", f, "2024-13-01", nil, "invalid_date"},
		{"day 00", f, "2024-01-00", nil, "invalid_date"},
		{"unpadded", f, "2024-5-1", nil, "invalid_date"},
		{"datetime", f, "2024-05-01T00:00:00Z", nil, "invalid_date"},
		{"slashes", f, "2024/05/01", nil, "invalid_date"},
		{"day first", f, "01-05-2024", nil, "invalid_date"},
		{"words", f, "yesterday", nil, "invalid_date"},
		{"number", f, submission.Number("20240501"), nil, "invalid_type"},
		{"empty optional", f, " ", nil, ""},
	})
}

func TestValidateFile(t *testing.T) {
	f := fieldOf(form.TypeFile, false)
	fReq := fieldOf(form.TypeFile, true)
	runValueCases(t, []valueCase{
		{"one URL", f, "https://files.example.com/a.pdf", []string{"https://files.example.com/a.pdf"}, ""},
		{"array of URLs", f, []any{"https://x.example/a", "https://x.example/b?sig=1"}, []string{"https://x.example/a", "https://x.example/b?sig=1"}, ""},
		{"[]string", f, []string{"https://x.example/a"}, []string{"https://x.example/a"}, ""},
		{"http rejected", f, "http://files.example.com/a.pdf", nil, "invalid_url"},
		{"http inside array", f, []any{"https://x.example/a", "http://x.example/b"}, nil, "invalid_url"},
		{"ftp", f, "ftp://x.example/a", nil, "invalid_url"},
		{"no host", f, "https:///a", nil, "invalid_url"},
		{"relative", f, "/uploads/a.pdf", nil, "invalid_url"},
		{"not a URL", f, "a.pdf", nil, "invalid_url"},
		{"javascript", f, "javascript:alert(1)", nil, "invalid_url"},
		{"number", f, submission.Number("1"), nil, "invalid_type"},
		{"object", f, map[string]any{"url": "https://x.example/a"}, nil, "invalid_type"},
		{"empty array optional", f, []any{}, nil, ""},
		{"empty array required", fReq, []any{}, nil, "required"},
	})
}

func TestValidateRequired(t *testing.T) {
	types := []struct {
		typ  form.FieldType
		opts []string
	}{
		{form.TypeText, nil}, {form.TypeTextarea, nil}, {form.TypeEmail, nil}, {form.TypeNumber, nil},
		{form.TypeDropdown, []string{"a"}}, {form.TypeRadio, []string{"a"}}, {form.TypeCheckbox, []string{"a"}},
		{form.TypeCheckbox, nil}, {form.TypeDate, nil}, {form.TypeFile, nil},
	}
	empties := []struct {
		name    string
		in      submission.Input
		present bool
	}{
		{"missing", nil, false},
		{"null", nil, true},
		{"empty string", "", true},
		{"whitespace", " \t\n", true},
		{"empty array", []any{}, true},
	}
	for _, ty := range types {
		for _, e := range empties {
			name := string(ty.typ)
			if ty.typ == form.TypeCheckbox && ty.opts == nil {
				name = "checkbox-without-options"
			}
			t.Run(name+"/"+e.name, func(t *testing.T) {
				f := form.Field{ID: "fld_req", Label: "Q", Type: ty.typ, Required: true, Options: ty.opts}
				input := map[string]submission.Input{}
				if e.present {
					input["fld_req"] = e.in
				}
				_, err := submission.Validate([]form.Field{f}, input)
				if err == nil {
					t.Fatal("required field accepted an empty answer")
				}
				vs := violationsOf(t, err)
				if len(vs) != 1 || vs[0].Field != "fld_req" {
					t.Fatalf("violations = %+v", vs)
				}
				// An empty array for a single-value type is a type error rather than a missing value;
				// every other empty answer is "required".
				single := ty.typ != form.TypeFile && !(ty.typ == form.TypeCheckbox && ty.opts != nil)
				if e.name == "empty array" && single {
					if vs[0].Code != "required" && vs[0].Code != "invalid_type" {
						t.Fatalf("code = %q", vs[0].Code)
					}
					return
				}
				if vs[0].Code != "required" {
					t.Fatalf("code = %q, want required", vs[0].Code)
				}
				// The same answers are fine on an optional field.
				f.Required = false
				data, err := submission.Validate([]form.Field{f}, input)
				if err != nil {
					t.Fatalf("optional field: %v", err)
				}
				if _, ok := data["fld_req"]; ok {
					t.Fatal("an empty optional answer was stored")
				}
			})
		}
	}
}

func TestValidateReportsEveryFailure(t *testing.T) {
	fields := []form.Field{
		{ID: "fld_name", Label: "Name", Type: form.TypeText, Required: true},
		{ID: "fld_email", Label: "Email", Type: form.TypeEmail, Required: true},
		{ID: "fld_age", Label: "Age", Type: form.TypeNumber},
		{ID: "fld_when", Label: "When", Type: form.TypeDate},
		{ID: "fld_ok", Label: "Ok", Type: form.TypeText},
		{ID: "fld_opt", Label: "Optional", Type: form.TypeTextarea},
	}
	input := map[string]submission.Input{
		"fld_email": "not an email",
		"fld_age":   "abc",
		"fld_when":  "2023-02-29",
		"fld_ok":    "fine",
		"fld_nope":  "x",
		"frm_1":     "y",
	}
	_, err := submission.Validate(fields, input)
	vs := violationsOf(t, err)
	got := map[string]string{}
	for _, v := range vs {
		got[v.Field] = v.Code
	}
	want := map[string]string{
		"fld_name":  "required",
		"fld_email": "invalid_email",
		"fld_age":   "invalid_number",
		"fld_when":  "invalid_date",
		"fld_nope":  "unknown_field",
		"frm_1":     "unknown_field",
	}
	if !reflect.DeepEqual(got, want) || len(vs) != len(want) {
		t.Fatalf("violations = %+v, want %v", vs, want)
	}
}

func TestValidateOptionalOmittedAndUnknownOnly(t *testing.T) {
	fields := []form.Field{
		{ID: "fld_a", Label: "A", Type: form.TypeText, Required: true},
		{ID: "fld_b", Label: "B", Type: form.TypeNumber},
		{ID: "fld_c", Label: "C", Type: form.TypeCheckbox, Options: []string{"x"}},
	}
	data, err := submission.Validate(fields, map[string]submission.Input{"fld_a": "hi"})
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"fld_a"}) {
		t.Fatalf("keys = %v", keys)
	}
	_, err = submission.Validate(fields, map[string]submission.Input{"fld_a": "hi", "fld_zzz": nil})
	vs := violationsOf(t, err)
	if len(vs) != 1 || vs[0].Field != "fld_zzz" || vs[0].Code != "unknown_field" {
		t.Fatalf("violations = %+v", vs)
	}
}

func TestValueAccessors(t *testing.T) {
	s := submission.Single("x")
	if s.IsList() || s.String() != "x" || !reflect.DeepEqual(s.Strings(), []string{"x"}) {
		t.Errorf("Single = %v %q %v", s.IsList(), s.String(), s.Strings())
	}
	items := []string{"a", "b"}
	l := submission.List(items)
	items[0] = "mutated"
	if !l.IsList() || l.String() != "a, b" || !reflect.DeepEqual(l.Strings(), []string{"a", "b"}) {
		t.Errorf("List = %v %q %v", l.IsList(), l.String(), l.Strings())
	}
	l.Strings()[0] = "mutated"
	if l.Strings()[0] != "a" {
		t.Error("Strings exposes the internal slice")
	}
	if e := submission.List(nil); !e.IsList() || len(e.Strings()) != 0 {
		t.Errorf("empty List = %v %v", e.IsList(), e.Strings())
	}
}

func TestUploadsAreTrustedReferences(t *testing.T) {
	f := []form.Field{{ID: "fld_cv", Label: "CV", Type: form.TypeFile, Required: true}}
	out, err := submission.Validate(f, map[string]submission.Input{"fld_cv": []submission.Upload{{Ref: "http://127.0.0.1:8080/files/x/cv.pdf"}}})
	if err != nil || out["fld_cv"].Strings()[0] != "http://127.0.0.1:8080/files/x/cv.pdf" {
		t.Fatalf("%v %v", out, err)
	}
	if _, err := submission.Validate(f, map[string]submission.Input{"fld_cv": "http://127.0.0.1:8080/files/x/cv.pdf"}); err == nil {
		t.Error("a client's plain-HTTP URL was accepted")
	}
}

func TestFitsSaysWhetherAStoredAnswerSurvivesAFieldChange(t *testing.T) {
	radio := form.Field{ID: "fld_a", Label: "Plan", Type: form.TypeRadio, Options: []string{"Free", "Pro"}}
	for _, c := range []struct {
		field form.Field
		value submission.Value
		fits  bool
	}{
		{form.Field{Type: form.TypeDropdown, Options: radio.Options}, submission.Single("Pro"), true},
		{form.Field{Type: form.TypeDropdown, Options: []string{"Free"}}, submission.Single("Pro"), false},
		{form.Field{Type: form.TypeText}, submission.Single("Pro"), true},
		{form.Field{Type: form.TypeNumber}, submission.Single("Pro"), false},
		{form.Field{Type: form.TypeNumber}, submission.Single("42.5"), true},
		{form.Field{Type: form.TypeEmail}, submission.Single("ada@example.org"), true},
		{form.Field{Type: form.TypeDate}, submission.Single("2026-02-30"), false},
		{form.Field{Type: form.TypeCheckbox, Options: []string{"Free", "Pro"}}, submission.List([]string{"Free", "Pro"}), true},
		{form.Field{Type: form.TypeText}, submission.List([]string{"Free", "Pro"}), false},
		{form.Field{Type: form.TypeFile}, submission.Single("Pro"), false},
	} {
		if got := submission.Fits(c.field, c.value); got != c.fits {
			t.Errorf("Fits(%s %v, %v) = %v, want %v", c.field.Type, c.field.Options, c.value.Strings(), got, c.fits)
		}
	}
}
