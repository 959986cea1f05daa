package submission

import (
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/text"
)

// Value is one stored answer: a string, or a list of strings for multi-value fields.
type Value struct {
	one  string
	many []string
	list bool
}

// Single builds a one-string value.
func Single(s string) Value { return Value{one: s} }

// List builds a multi-value answer.
func List(items []string) Value { return Value{many: append([]string{}, items...), list: true} }

// IsList reports whether the value is a list.
func (v Value) IsList() bool { return v.list }

// String returns the single value, or the list joined with ", ".
func (v Value) String() string {
	if v.list {
		return strings.Join(v.many, ", ")
	}
	return v.one
}

// Strings returns the list, or the single value as a list of one.
func (v Value) Strings() []string {
	if v.list {
		return append([]string{}, v.many...)
	}
	return []string{v.one}
}

// Each calls fn with each string of the value (the single value, or each item of a list),
// without copying the list.
func (v Value) Each(fn func(string)) {
	if !v.list {
		fn(v.one)
		return
	}
	for _, s := range v.many {
		fn(s)
	}
}

// Upload is a file the server itself stored for a public form post; its reference (the
// object's key) is trusted. Clients can only send links, which must be HTTPS.
type Upload struct{ Ref string }

// Number is a JSON number in its textual form, as the edge decoded it.
type Number string

// Input is what a client sent for one field: nil, string, Number, bool, or []any of those.
type Input = any

const (
	maxText     = 1000
	maxTextarea = 10000
	maxEmail    = 254
)

// errRequired marks an empty answer so the caller can decide whether emptiness is allowed.
type fieldError struct{ code, message string }

var errRequired = &fieldError{"required", "a value is required"}

// parse checks one input against its field and returns the canonical value; ok is false for an empty answer.
// public is true for a public form post, whose file fields take uploads only.
func parse(f form.Field, in Input, public bool) (Value, bool, *fieldError) {
	if in == nil {
		return Value{}, false, nil
	}
	if !text.ValidAny(in) {
		return Value{}, false, &fieldError{text.CodeInvalid, text.Message}
	}
	switch f.Type {
	case form.TypeText, form.TypeTextarea:
		s, ferr := asString(in)
		if ferr != nil {
			return Value{}, false, ferr
		}
		if strings.TrimSpace(s) == "" {
			return Value{}, false, nil
		}
		max := maxText
		if f.Type == form.TypeTextarea {
			max = maxTextarea
		}
		if utf8.RuneCountInString(s) > max {
			return Value{}, false, &fieldError{"too_long", fmt.Sprintf("must be at most %d characters", max)}
		}
		return Single(s), true, nil
	case form.TypeEmail:
		s, ferr := asString(in)
		if ferr != nil {
			return Value{}, false, ferr
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return Value{}, false, nil
		}
		if !validEmail(s) {
			return Value{}, false, &fieldError{"invalid_email", "must be one email address like name@example.com"}
		}
		return Single(s), true, nil
	case form.TypeNumber:
		var s string
		switch x := in.(type) {
		case Number:
			s = string(x)
		case float64:
			s = strconv.FormatFloat(x, 'g', -1, 64)
		case string:
			s = strings.TrimSpace(x)
			if s == "" {
				return Value{}, false, nil
			}
		default:
			return Value{}, false, &fieldError{"invalid_type", "must be a number"}
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || !decimalSyntax(s) || math.IsInf(n, 0) || math.IsNaN(n) {
			return Value{}, false, &fieldError{"invalid_number", "must be a finite number"}
		}
		return Single(canonicalNumber(n)), true, nil
	case form.TypeDropdown, form.TypeRadio:
		s, ferr := asString(in)
		if ferr != nil {
			return Value{}, false, ferr
		}
		if strings.TrimSpace(s) == "" {
			return Value{}, false, nil
		}
		if !f.HasOption(s) {
			return Value{}, false, &fieldError{"invalid_option", "must be one of the field's options"}
		}
		return Single(s), true, nil
	case form.TypeCheckbox:
		if len(f.Options) == 0 {
			return parseBool(f, in)
		}
		items, ferr := asStrings(in)
		if ferr != nil {
			return Value{}, false, ferr
		}
		if len(items) == 0 {
			return Value{}, false, nil
		}
		seen := make(map[string]bool, len(items))
		for _, it := range items {
			if !f.HasOption(it) {
				return Value{}, false, &fieldError{"invalid_option", fmt.Sprintf("%q is not one of the field's options", it)}
			}
			if seen[it] {
				return Value{}, false, &fieldError{"duplicate", fmt.Sprintf("%q is chosen twice", it)}
			}
			seen[it] = true
		}
		return List(items), true, nil
	case form.TypeDate:
		s, ferr := asString(in)
		if ferr != nil {
			return Value{}, false, ferr
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return Value{}, false, nil
		}
		if len(s) != 10 {
			return Value{}, false, &fieldError{"invalid_date", "must be a date written YYYY-MM-DD"}
		}
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return Value{}, false, &fieldError{"invalid_date", "must be a real calendar date written YYYY-MM-DD"}
		}
		return Single(s), true, nil
	case form.TypeFile:
		if files, ok := in.([]FileInfo); ok {
			// Files of a public post, checked by Prepare; their keys are attached once stored.
			refs := make([]string, len(files))
			return List(refs), len(refs) > 0, nil
		}
		if ups, ok := in.([]Upload); ok {
			refs := make([]string, 0, len(ups))
			for _, u := range ups {
				refs = append(refs, u.Ref)
			}
			return List(refs), len(refs) > 0, nil
		}
		items, ferr := asStrings(in)
		if ferr != nil {
			return Value{}, false, ferr
		}
		if len(items) == 0 {
			return Value{}, false, nil
		}
		if public {
			return Value{}, false, &fieldError{"invalid_value", "upload the file itself; links are not accepted"}
		}
		for _, it := range items {
			u, err := url.Parse(it)
			if err != nil || u.Scheme != "https" || u.Host == "" || len(it) > 2048 {
				return Value{}, false, &fieldError{"invalid_url", "must be HTTPS URLs of uploaded files"}
			}
		}
		return List(items), true, nil
	}
	return Value{}, false, &fieldError{"invalid_type", "field type is not supported"}
}

func parseBool(f form.Field, in Input) (Value, bool, *fieldError) {
	var b bool
	switch x := in.(type) {
	case bool:
		b = x
	case string:
		switch strings.TrimSpace(strings.ToLower(x)) {
		case "true":
			b = true
		case "false":
			b = false
		case "":
			return Value{}, false, nil
		default:
			return Value{}, false, &fieldError{"invalid_type", "must be true or false"}
		}
	default:
		return Value{}, false, &fieldError{"invalid_type", "must be true or false"}
	}
	if !b && f.Required {
		return Value{}, false, errRequired
	}
	return Single(strconv.FormatBool(b)), true, nil
}

func asString(in Input) (string, *fieldError) {
	s, ok := in.(string)
	if !ok {
		return "", &fieldError{"invalid_type", "must be a string"}
	}
	return s, nil
}

func asStrings(in Input) ([]string, *fieldError) {
	switch x := in.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, nil
		}
		return []string{x}, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, &fieldError{"invalid_type", "must be a string or an array of strings"}
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, &fieldError{"invalid_type", "must be a string or an array of strings"}
}

func validEmail(s string) bool {
	if len(s) > maxEmail || strings.ContainsAny(s, " <>\"(),;:\\[]\r\n\t") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	local, dom, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.Contains(dom, "@") {
		return false
	}
	labels := strings.Split(dom, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return false
		}
	}
	tld := labels[len(labels)-1]
	if len(tld) < 2 || strings.Trim(tld, "0123456789") == "" || strings.Contains(dom, "_") {
		return false
	}
	for _, r := range tld {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r > 127) {
			return false
		}
	}
	return true
}

// decimalSyntax reports whether s uses only decimal number characters: ParseFloat also takes
// Go-only forms such as hexadecimal floats ("0x1p4") and digit separators ("1_000").
func decimalSyntax(s string) bool {
	return strings.Trim(s, "0123456789+-.eE") == ""
}

// canonicalNumber writes n in its shortest decimal form, without exponent for ordinary magnitudes.
func canonicalNumber(n float64) string {
	if n == 0 {
		return "0"
	}
	if a := math.Abs(n); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	// 'g' pads the exponent ("1e-07", "1e+21"); the shortest form is "1e-7", "1e21".
	mant, exp, ok := strings.Cut(strconv.FormatFloat(n, 'g', -1, 64), "e")
	if !ok {
		return mant
	}
	sign := ""
	if exp[0] == '-' {
		sign = "-"
	}
	return mant + "e" + sign + strings.TrimLeft(exp[1:], "0")
}

// Validate checks every input against the form's fields and returns canonical values keyed
// by field ID. Input names a field by its ID or its key (byFieldID). Every failing field is
// reported; names that are not fields of the form are unknown_field.
func Validate(fields []form.Field, input map[string]Input) (map[string]Value, error) {
	input, named := byFieldID(fields, input)
	return validate(fields, input, false, named)
}

// byFieldID returns input keyed by field ID: a client names a field by its ID or by its key.
// A field named both ways is invalid_value (reported at its ID; the answer under the ID is the
// one kept). A name that is neither stays as it is, for validation to report as unknown_field.
// A name that is one field's ID and another's key means the field with that ID.
func byFieldID(fields []form.Field, input map[string]Input) (map[string]Input, domain.Violations) {
	ids := make(map[string]bool, len(fields))
	for _, f := range fields {
		ids[f.ID] = true
	}
	var keyed []string
	for name := range input {
		if !ids[name] && form.ValidKey(name) {
			keyed = append(keyed, name)
		}
	}
	if len(keyed) == 0 {
		return input, nil // named by ID (or unknown): nothing to translate
	}
	byKey := make(map[string]form.Field, len(fields))
	for _, f := range fields {
		if f.Key != "" {
			byKey[f.Key] = f
		}
	}
	out := make(map[string]Input, len(input))
	for name, v := range input {
		out[name] = v
	}
	sort.Strings(keyed)
	var vs domain.Violations
	for _, name := range keyed {
		f, ok := byKey[name]
		if !ok {
			continue
		}
		v := out[name]
		delete(out, name)
		if _, both := input[f.ID]; both {
			vs.Add(f.ID, "invalid_value", fmt.Sprintf("%s: sent twice, by its ID %s and by its key %s; send it once", f.Label, f.ID, name))
			continue
		}
		out[f.ID] = v
	}
	return out, vs
}

// validate is Validate of input keyed by field ID; public refuses anything but uploads in file
// fields, and more are violations the caller already found: they are reported with the others,
// and a field among them is not checked again.
func validate(fields []form.Field, input map[string]Input, public bool, more domain.Violations) (map[string]Value, error) {
	vs := more
	reported := make(map[string]bool, len(more))
	for _, v := range more {
		reported[v.Field] = true
	}
	byID := make(map[string]form.Field, len(fields))
	for _, f := range fields {
		byID[f.ID] = f
	}
	for _, k := range sortedKeys(input) {
		if _, ok := byID[k]; !ok {
			vs.Add(k, "unknown_field", "not a field of this form")
		}
	}
	out := make(map[string]Value, len(fields))
	skipped := skippedFields(fields, input, public)
	for _, f := range fields {
		if skipped[f.ID] || reported[f.ID] {
			continue // not shown: not required, and its value is dropped; or already refused
		}
		v, ok, ferr := parse(f, input[f.ID], public)
		switch {
		case ferr != nil:
			vs.Add(f.ID, ferr.code, f.Label+": "+ferr.message)
		case ok:
			out[f.ID] = v
		case f.Required:
			vs.Add(f.ID, errRequired.code, f.Label+": "+errRequired.message)
		}
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// OwnLinks reports the file links in input (keyed by field ID or key) that point under base,
// the server's own public URL: only the server's own uploads live there, and a typed link must never pass for one.
// Links are compared by host name (any scheme or port) and path.
func OwnLinks(fields []form.Field, input map[string]Input, base string) domain.Violations {
	own, err := url.Parse(strings.TrimSpace(base))
	if err != nil || own.Hostname() == "" {
		return nil
	}
	input, _ = byFieldID(fields, input) // a field named both ways is refused by validation
	var vs domain.Violations
	for _, f := range fields {
		if f.Type != form.TypeFile {
			continue
		}
		items, ferr := asStrings(input[f.ID])
		if ferr != nil {
			continue // not links; validation reports it
		}
		for _, it := range items {
			u, err := url.Parse(strings.TrimSpace(it))
			if err != nil {
				continue
			}
			if strings.EqualFold(u.Hostname(), own.Hostname()) && strings.HasPrefix(u.EscapedPath()+"/", strings.TrimSuffix(own.EscapedPath(), "/")+"/") {
				vs.Add(f.ID, "invalid_value", f.Label+": links to this server's own files are not accepted; send a link to a file stored elsewhere")
				break
			}
		}
	}
	return vs
}

// Fits reports whether a stored answer is a valid answer to f as it is now: a change of a
// field's type (or options) must not leave stored answers that the field would refuse. A list
// fits only a field that takes lists; a file answer (references to stored files) fits only a
// file field.
func Fits(f form.Field, v Value) bool {
	if f.Type == form.TypeFile {
		return v.IsList()
	}
	var in Input = v.one
	if v.IsList() {
		if !f.Multiple() {
			return false
		}
		items := make([]any, len(v.many))
		for i, s := range v.many {
			items[i] = s
		}
		in = items
	}
	_, _, ferr := parse(f, in, false)
	return ferr == nil
}
