// Package text holds the one rule every piece of text Formward stores obeys, whatever aggregate
// it belongs to: valid UTF-8 without control characters other than tab, line feed and carriage
// return. PostgreSQL cannot store NUL in text at all, and other control characters only ever
// come from mistakes or attacks, so both databases get the same refusal up front.
package text

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/formward/formward/domain"
)

// CodeInvalid is the violation code of text that breaks the rule.
const CodeInvalid = "invalid_value"

// Message explains the rule in a violation.
const Message = "must be valid UTF-8 text without control characters (tab, line feed and carriage return are allowed)"

// ErrInvalidUTF8 means the text is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("text is not valid UTF-8")

// ErrControlCharacter means the text holds NUL or another control character.
var ErrControlCharacter = errors.New("text holds a control character")

// Check returns nil for valid text, else ErrInvalidUTF8 or ErrControlCharacter (wrapped with
// the offending character's position).
func Check(s string) error {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return fmt.Errorf("byte %d: %w", i, ErrInvalidUTF8)
			}
		}
		if forbidden(r) {
			return fmt.Errorf("byte %d (U+%04X): %w", i, r, ErrControlCharacter)
		}
	}
	return nil
}

// Valid reports whether s is valid text.
func Valid(s string) bool { return Check(s) == nil }

func forbidden(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
}

// Field adds an invalid_value violation at path when s is not valid text, and reports whether
// it was valid.
func Field(vs *domain.Violations, path, s string) bool {
	if Valid(s) {
		return true
	}
	vs.Add(path, CodeInvalid, Message)
	return false
}

// Fields checks every string of a list; violations name each item (path[i]).
func Fields(vs *domain.Violations, path string, list []string) bool {
	ok := true
	for i, s := range list {
		ok = Field(vs, path+"["+strconv.Itoa(i)+"]", s) && ok
	}
	return ok
}

// Any checks every string inside a JSON-like value (strings, maps with string keys, slices),
// keys included; violations carry the JSON path of the string (path.key, path[i]). Other
// values (numbers, booleans, nil) are not text and pass.
func Any(vs *domain.Violations, path string, v any) bool {
	switch x := v.(type) {
	case string:
		return Field(vs, path, x)
	case []string:
		return Fields(vs, path, x)
	case []any:
		ok := true
		for i, item := range x {
			ok = Any(vs, path+"["+strconv.Itoa(i)+"]", item) && ok
		}
		return ok
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		ok := true
		for _, k := range keys {
			if !Valid(k) {
				vs.Add(join(path, strconv.Quote(k)), CodeInvalid, "property names "+Message)
				ok = false
				continue
			}
			ok = Any(vs, join(path, k), x[k]) && ok
		}
		return ok
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return Any(vs, path, m)
	}
	return true
}

// ValidAny reports whether every string inside v (as Any walks it) is valid text.
func ValidAny(v any) bool {
	var vs domain.Violations
	return Any(&vs, "", v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
