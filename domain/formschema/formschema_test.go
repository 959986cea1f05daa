package formschema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/formschema"
	"github.com/formward/formward/domain/submission"
)

const schemaID = "https://forms.example.com/v1/forms/frm_1/versions/1/schema"

var at = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// everyType is a form with each of the nine field types, a required field with a display
// rule, and a removed field.
func everyType(t *testing.T) *form.Form {
	t.Helper()
	n := 0
	newID := func() string { n++; return fmt.Sprintf("fld_%d", n) }
	specs := []form.FieldSpec{
		{Label: "Name", Type: "text", Required: true, Key: ptr("name")},
		{Label: "About you", Type: "textarea", Key: ptr("bio")},
		{Label: "Email", Type: "email", Required: true, Key: ptr("mail")},
		{Label: "Age", Type: "number", Key: ptr("age")},
		{Label: "Colour", Type: "dropdown", Required: true, Options: []string{"Red", "Green", "Blue"}, Key: ptr("colour")},
		{Label: "Size", Type: "radio", Options: []string{"S", "M", "L"}, Key: ptr("size")},
		{Label: "Tags", Type: "checkbox", Options: []string{"a", "b", "c"}, Key: ptr("tags")},
		{Label: "I agree", Type: "checkbox", Required: true, Key: ptr("agree")},
		{Label: "Newsletter", Type: "checkbox", Key: ptr("news")},
		{Label: "Born", Type: "date", Key: ptr("born")},
		{Label: "CV", Type: "file", Key: ptr("cv")},
		{Label: "Why red", Type: "text", Required: true, Key: ptr("why"),
			ShowIf: &form.ShowIfSpec{Match: "all", Conditions: []form.ConditionSpec{{FieldID: "colour", Operator: "equals", Value: "Red", HasValue: true}}}},
		{Label: "Gone", Type: "text", Key: ptr("gone")},
	}
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Every type", Fields: specs}, newID, form.DefaultLimits, at)
	if err != nil {
		t.Fatalf("form: %v", err)
	}
	kept := make([]form.FieldSpec, 0, len(specs)-1)
	for _, fl := range f.Fields()[:len(specs)-1] {
		kept = append(kept, form.FieldSpec{ID: fl.ID, Label: fl.Label, Type: string(fl.Type), Required: fl.Required, Options: fl.Options, Key: ptr(fl.Key), ShowIf: specOf(fl.ShowIf)})
	}
	if _, err := f.Apply(form.Patch{Fields: &kept}, newID, form.DefaultLimits, at); err != nil {
		t.Fatalf("remove a field: %v", err)
	}
	if len(f.RemovedFields()) != 1 {
		t.Fatalf("removed fields = %v, want one", f.RemovedFields())
	}
	return f
}

func specOf(s *form.ShowIf) *form.ShowIfSpec {
	if s == nil {
		return nil
	}
	out := &form.ShowIfSpec{Match: s.Match()}
	for _, c := range s.Conditions {
		out.Conditions = append(out.Conditions, form.ConditionSpec{FieldID: c.FieldID, Operator: c.Operator, Value: c.Value, HasValue: true})
	}
	return out
}

// ids maps each field's key to its ID.
func ids(f *form.Form) map[string]string {
	out := map[string]string{}
	for _, fl := range f.Fields() {
		out[fl.Key] = fl.ID
	}
	return out
}

func compile(t *testing.T, f *form.Form) *jsonschema.Schema {
	t.Helper()
	raw, err := formschema.JSON(schemaID, f.Fields())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaID)
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, raw)
	}
	return s
}

// asJSON is v as a JSON document decodes it (what a consumer of the API or an event holds).
func asJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// data is a submission's data as the API returns it: strings, and arrays for lists.
func data(s *submission.Submission) map[string]any {
	out := map[string]any{}
	for k, v := range s.Data() {
		if v.IsList() {
			out[k] = v.Strings()
		} else {
			out[k] = v.String()
		}
	}
	return out
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// randomInput is an answer set the server should accept, in the many forms a client may send.
func randomInput(r *rand.Rand, id map[string]string) map[string]submission.Input {
	in := map[string]submission.Input{}
	name := func(k string) string { // a client names a field by ID or by key
		if r.IntN(2) == 0 {
			return k
		}
		return id[k]
	}
	in[name("name")] = pick(r, []string{"Ada", "  Grace Hopper ", "Zoë", "李雷", "x"}) + strconv.Itoa(r.IntN(1000))
	if r.IntN(2) == 0 {
		in[name("bio")] = pick(r, []string{"line one\nline two", "Hello", "  ", ""})
	}
	// ASCII addresses only: the server also takes internationalised domains ("x@例え.jp"),
	// which format "email" (RFC 5321) refuses when a validator asserts formats; the pattern
	// alone accepts them.
	in[name("mail")] = pick(r, []string{"ada@example.com", " grace@navy.mil ", "a.b+c@sub.example.org", "o'neil@mail.example.co.uk"})
	switch r.IntN(6) {
	case 0:
		in[name("age")] = submission.Number(pick(r, []string{"42", "-3.5", "1e3", "0.000001", "1E-7", "2.50"}))
	case 1:
		in[name("age")] = r.Float64()*1e6 - 5e5
	case 2:
		in[name("age")] = pick(r, []string{"7", " 8 ", ".5", "+1", "1.", "-0", "12345678901234567890123"})
	case 3:
		in[name("age")] = ""
	}
	colour := pick(r, []string{"Red", "Green", "Blue"})
	in[name("colour")] = colour
	if colour == "Red" || r.IntN(3) == 0 { // an answer to a hidden field is dropped
		in[name("why")] = "Because " + strconv.Itoa(r.IntN(100))
	}
	if r.IntN(2) == 0 {
		in[name("size")] = pick(r, []string{"S", "M", "L", ""})
	}
	switch r.IntN(3) {
	case 0:
		var tags []any
		for _, o := range []string{"a", "b", "c"} {
			if r.IntN(2) == 0 {
				tags = append(tags, o)
			}
		}
		in[name("tags")] = tags
	case 1:
		in[name("tags")] = pick(r, []string{"b", ""})
	}
	in[name("agree")] = pick[any](r, []any{true, "true", " TRUE "})
	if r.IntN(2) == 0 {
		in[name("news")] = pick[any](r, []any{true, false, "false", "true", ""})
	}
	if r.IntN(2) == 0 {
		in[name("born")] = fmt.Sprintf("%04d-%02d-%02d", 1900+r.IntN(200), 1+r.IntN(12), 1+r.IntN(28))
	}
	if r.IntN(2) == 0 {
		n := 1 + r.IntN(3)
		links := make([]any, n)
		for i := range links {
			links[i] = fmt.Sprintf("https://files.example.com/cv-%d.pdf", r.IntN(1000))
		}
		in[name("cv")] = links
	}
	return in
}

// TestEveryAcceptedSubmissionMatchesTheSchema: 1,000 generated submissions the server accepts,
// each one's data as the API returns it is valid under the schema.
func TestEveryAcceptedSubmissionMatchesTheSchema(t *testing.T) {
	f := everyType(t)
	schema := compile(t, f)
	id := ids(f)
	r := rand.New(rand.NewPCG(25, 2))
	for i := 0; i < 1000; i++ {
		in := randomInput(r, id)
		s, err := submission.New(fmt.Sprintf("sub_%d", i), f, in, submission.Metadata{Source: submission.SourceAPI}, at)
		if err != nil {
			t.Fatalf("submission %d refused: %v\ninput %#v", i, err, in)
		}
		d := data(s)
		if err := schema.Validate(asJSON(t, d)); err != nil {
			t.Fatalf("submission %d: data %v does not match the schema: %v", i, d, err)
		}
	}
}

// TestSchemaRefusesWhatTheServerRefuses: each broken answer set is refused by the server and
// by the schema alike.
func TestSchemaRefusesWhatTheServerRefuses(t *testing.T) {
	f := everyType(t)
	schema := compile(t, f)
	id := ids(f)
	valid := func() map[string]any {
		return map[string]any{id["name"]: "Ada", id["mail"]: "ada@example.com", id["colour"]: "Green", id["agree"]: "true",
			id["age"]: "42", id["tags"]: []any{"a"}, id["born"]: "2000-01-31", id["size"]: "M"}
	}
	cases := map[string]func(in map[string]any){
		"option not offered":            func(in map[string]any) { in[id["colour"]] = "Purple" },
		"radio option not offered":      func(in map[string]any) { in[id["size"]] = "XL" },
		"checkbox option not offered":   func(in map[string]any) { in[id["tags"]] = []any{"a", "z"} },
		"checkbox option twice":         func(in map[string]any) { in[id["tags"]] = []any{"a", "a"} },
		"words in a number":             func(in map[string]any) { in[id["age"]] = "twelve" },
		"hexadecimal number":            func(in map[string]any) { in[id["age"]] = "0x1p4" },
		"digit separators":              func(in map[string]any) { in[id["age"]] = "1_000" },
		"infinity":                      func(in map[string]any) { in[id["age"]] = "Inf" },
		"bare exponent":                 func(in map[string]any) { in[id["age"]] = "1e" },
		"not an email":                  func(in map[string]any) { in[id["mail"]] = "not-an-email" },
		"email without a dot":           func(in map[string]any) { in[id["mail"]] = "ada@localhost" },
		"email with a name":             func(in map[string]any) { in[id["mail"]] = "Ada <ada@example.com>" },
		"email with a numeric tld":      func(in map[string]any) { in[id["mail"]] = "ada@example.123" },
		"date in another order":         func(in map[string]any) { in[id["born"]] = "31/01/2000" },
		"month thirteen":                func(in map[string]any) { in[id["born"]] = "2000-13-01" },
		"thirtieth of february":         func(in map[string]any) { in[id["born"]] = "2023-02-30" },
		"missing required text":         func(in map[string]any) { delete(in, id["name"]) },
		"blank required text":           func(in map[string]any) { in[id["name"]] = "   " },
		"missing required email":        func(in map[string]any) { delete(in, id["mail"]) },
		"missing required option":       func(in map[string]any) { delete(in, id["colour"]) },
		"required box not ticked":       func(in map[string]any) { in[id["agree"]] = "false" },
		"unknown field":                 func(in map[string]any) { in["fld_nope"] = "x" },
		"removed field":                 func(in map[string]any) { in[f.RemovedFields()[0].ID] = "x" },
		"list for a text":               func(in map[string]any) { in[id["name"]] = []any{"Ada"} },
		"number for an option list":     func(in map[string]any) { in[id["tags"]] = 5.0 },
		"list for a date":               func(in map[string]any) { in[id["born"]] = []any{"2000-01-01"} },
		"too long text":                 func(in map[string]any) { in[id["name"]] = string(bytes.Repeat([]byte("a"), 1001)) },
		"list of numbers for the files": func(in map[string]any) { in[id["cv"]] = []any{1.0} },
	}
	// The starting point is valid both ways, so each case's refusal comes from its one change.
	if _, err := submission.New("sub_ok", f, valid(), submission.Metadata{Source: submission.SourceAPI}, at); err != nil {
		t.Fatalf("valid base refused by the server: %v", err)
	}
	if err := schema.Validate(asJSON(t, valid())); err != nil {
		t.Fatalf("valid base refused by the schema: %v", err)
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			in := valid()
			breakIt(in)
			if _, err := submission.New("sub_bad", f, in, submission.Metadata{Source: submission.SourceAPI}, at); err == nil {
				t.Errorf("server accepted %v", in)
			}
			if err := schema.Validate(asJSON(t, in)); err == nil {
				t.Errorf("schema accepted %v", in)
			}
		})
	}
}

// TestSchemaShape pins the document's parts a consumer relies on.
func TestSchemaShape(t *testing.T) {
	f := everyType(t)
	id := ids(f)
	s := formschema.ForFields(schemaID, f.Fields())
	if s["$schema"] != formschema.Draft || s["$id"] != schemaID || s["additionalProperties"] != false {
		t.Fatalf("header = %v %v %v", s["$schema"], s["$id"], s["additionalProperties"])
	}
	props := s["properties"].(map[string]any)
	if len(props) != len(f.Fields()) {
		t.Fatalf("%d properties, want %d", len(props), len(f.Fields()))
	}
	if _, ok := props[f.RemovedFields()[0].ID]; ok {
		t.Fatal("a removed field is in the schema")
	}
	name := props[id["name"]].(map[string]any)
	if name["title"] != "Name" || name["x-formward-key"] != "name" {
		t.Fatalf("name = %v", name)
	}
	want := []string{id["name"], id["mail"], id["colour"], id["agree"]}
	if got := s["required"].([]string); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("required = %v, want %v (the rule-bound field is not required)", got, want)
	}
}

// TestPatternsAgreeWithTheServer: random strings made of the characters that matter are
// accepted by the server exactly when the schema accepts them (numbers: the decimal pattern;
// dates: pattern and format).
func TestPatternsAgreeWithTheServer(t *testing.T) {
	fields := []form.Field{{ID: "fld_n", Label: "N", Type: form.TypeNumber}, {ID: "fld_d", Label: "D", Type: form.TypeDate}}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(must(formschema.JSON(schemaID, fields))))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(schemaID, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(schemaID)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(25, 3))
	randomString := func(alphabet string, max int) string {
		b := make([]byte, 1+r.IntN(max))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	checked := map[string]int{}
	for i := 0; i < 20000; i++ {
		var id, s string
		if i%2 == 0 {
			id, s = "fld_n", randomString("0123456789+-.eE_x", 6)
			if _, err := strconv.ParseFloat(s, 64); err != nil && errors.Is(err, strconv.ErrRange) {
				continue // too large for a float: the server refuses what the pattern takes
			}
		} else {
			id = "fld_d"
			s = fmt.Sprintf("%04d-%02d-%02d", r.IntN(10000), r.IntN(14), r.IntN(33))
			if r.IntN(4) == 0 {
				s = randomString("0123456789-/", 11)
			}
		}
		_, serverErr := submission.Validate(fields, map[string]submission.Input{id: s})
		schemaErr := schema.Validate(map[string]any{id: s})
		if (serverErr == nil) != (schemaErr == nil) {
			t.Fatalf("%s %q: server %v, schema %v", id, s, serverErr, schemaErr)
		}
		if serverErr == nil {
			checked[id]++
		}
	}
	t.Logf("accepted: %v", checked)
	if checked["fld_n"] < 500 || checked["fld_d"] < 500 {
		t.Fatalf("too few accepted values to compare: %v", checked)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestSchemaNeverTakesAnEmailTheServerRefuses: on random addresses made of the characters that
// matter, an address the server refuses is refused by the schema (pattern and format email).
// The other way the schema is stricter: format email wants a host name, while the server also
// takes a domain label with "'" or "+" and internationalised domains.
func TestSchemaNeverTakesAnEmailTheServerRefuses(t *testing.T) {
	fields := []form.Field{{ID: "fld_e", Label: "E", Type: form.TypeEmail}}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(must(formschema.JSON(schemaID, fields))))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(schemaID, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(schemaID)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(25, 4))
	part := func(alphabet string, max int) string {
		b := make([]byte, 1+r.IntN(max))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	refused, both := 0, 0
	for i := 0; i < 20000; i++ {
		local := part("aaaabbb11.-_+'", 5)
		if r.IntN(8) == 0 {
			local += part(" @<\"", 1)
		}
		at := "@"
		if r.IntN(10) == 0 {
			at = "."
		}
		s := local + at + part("aaaabbb11.-_", 5) + "." + part("aaab1-.", 3)
		if _, err := submission.Validate(fields, map[string]submission.Input{"fld_e": s}); err == nil {
			continue
		}
		refused++
		if err := schema.Validate(map[string]any{"fld_e": s}); err == nil {
			t.Fatalf("%q: the server refuses it, the schema takes it", s)
		}
		both++
	}
	if refused < 1000 || refused > 19500 {
		t.Fatalf("%d of 20000 refused: the generator does not probe the boundary", refused)
	}
	t.Logf("%d refused both ways", both)
}
