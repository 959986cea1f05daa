package text

import (
	"errors"
	"testing"

	"github.com/formward/formward/domain"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{
		{"", nil},
		{"Contact form", nil},
		{"tab\tline\nreturn\r", nil},
		{"Ünïcödé ✓ 日本 🙂", nil},
		{"replacement \uFFFD is a real character", nil},
		{"\u2028 line separator is not a control character", nil},
		{"nul \x00", ErrControlCharacter},
		{"bell \x07", ErrControlCharacter},
		{"escape \x1b[31m", ErrControlCharacter},
		{"delete \x7f", ErrControlCharacter},
		{"C1 \u0085", ErrControlCharacter},
		{"C1 \u009f", ErrControlCharacter},
		{"bad \xff byte", ErrInvalidUTF8},
		{"truncated \xc3", ErrInvalidUTF8},
		{"surrogate \xed\xa0\x80", ErrInvalidUTF8},
		{"overlong \xc0\xaf", ErrInvalidUTF8},
	} {
		if err := Check(c.in); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Check(%q) = %v, want %v", c.in, err, c.want)
		}
		if Valid(c.in) != (c.want == nil) {
			t.Errorf("Valid(%q) = %v", c.in, Valid(c.in))
		}
	}
}

func TestAnyReportsJSONPaths(t *testing.T) {
	var vs domain.Violations
	ok := Any(&vs, "config", map[string]any{
		"to":      "a@example.com",
		"subject": "New\x00",
		"count":   3.0,
		"on":      true,
		"rows":    []any{"fine", map[string]any{"k": "\x01"}},
		"list":    []string{"a", "b\x02"},
		"bad\x00": "v",
		"nil":     nil,
	})
	if ok {
		t.Fatal("Any accepted control characters")
	}
	got := map[string]string{}
	for _, v := range vs {
		got[v.Field] = v.Code
	}
	for _, path := range []string{"config.subject", "config.rows[1].k", "config.list[1]", `config."bad\x00"`} {
		if got[path] != CodeInvalid {
			t.Errorf("no %s violation at %s; got %v", CodeInvalid, path, got)
		}
	}
	if len(vs) != 4 {
		t.Errorf("%d violations, want 4: %v", len(vs), vs)
	}
	if !ValidAny([]any{"a", 1.0, map[string]any{"b": []string{"c\td"}}}) {
		t.Error("valid nested text refused")
	}
	if ValidAny(map[string]string{"k": "\x00"}) {
		t.Error("map[string]string not walked")
	}
}

func TestFieldsNamesItems(t *testing.T) {
	var vs domain.Violations
	if Fields(&vs, "options", []string{"ok", "\x00", "fine", "\x7f"}) {
		t.Fatal("Fields accepted control characters")
	}
	if len(vs) != 2 || vs[0].Field != "options[1]" || vs[1].Field != "options[3]" {
		t.Fatalf("violations %v", vs)
	}
}
