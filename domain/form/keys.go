package form

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/formward/formward/domain"
)

// maxKey is the longest field key.
const maxKey = 64

var keyPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ValidKey reports whether s is a well-formed field key: a lowercase letter, then up to 63
// lowercase letters, digits or underscores.
func ValidKey(s string) bool { return keyPattern.MatchString(s) }

// DefaultKey is a label made snake_case: ASCII letters and digits kept (lowercased), every
// other run of characters one underscore; "field" when nothing is left, "f_" before a digit.
func DefaultKey(label string) string {
	var b strings.Builder
	gap := false
	for _, r := range strings.ToLower(label) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
			continue
		}
		gap = true
	}
	s := b.String()
	if s == "" {
		s = "field"
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "f_" + s
	}
	if len(s) > maxKey-4 { // room for a "_NNN" suffix
		s = strings.TrimRight(s[:maxKey-4], "_")
	}
	return s
}

// dedupe returns base, or base_2, base_3, … : the first not in taken.
func dedupe(base string, taken map[string]bool) string {
	if !taken[base] {
		return base
	}
	for n := 2; ; n++ {
		k := base + "_" + strconv.Itoa(n)
		if !taken[k] {
			return k
		}
	}
}

// assignKeys gives every field its key: the one the spec names (checked), the one the field
// already had when the spec leaves it out, or the label's default, deduplicated.
func assignKeys(vs *domain.Violations, specs []FieldSpec, out []Field, existing []Field) {
	old := make(map[string]string, len(existing))
	for _, f := range existing {
		old[f.ID] = f.Key
	}
	taken := map[string]bool{}
	for i, s := range specs {
		if s.Key == nil {
			continue
		}
		path := fmt.Sprintf("fields[%d].key", i)
		k := *s.Key
		switch {
		case !ValidKey(k):
			vs.Add(path, "invalid_value", "key must start with a lowercase letter and hold at most 64 lowercase letters, digits and underscores")
		case taken[k]:
			vs.Add(path, "duplicate", "key "+k+" appears twice")
		}
		taken[k] = true
		out[i].Key = k
	}
	for i, s := range specs {
		if s.Key != nil || s.ID == "" {
			continue
		}
		if k := old[s.ID]; k != "" && !taken[k] {
			out[i].Key, taken[k] = k, true
		}
	}
	for i := range out {
		if out[i].Key == "" {
			k := dedupe(DefaultKey(out[i].Label), taken)
			out[i].Key, taken[k] = k, true
		}
	}
}

// fillKeys gives stored fields that predate keys their default keys, in field order.
func fillKeys(fields []Field) []Field {
	missing := false
	taken := map[string]bool{}
	for _, f := range fields {
		if f.Key == "" {
			missing = true
		}
		taken[f.Key] = true
	}
	if !missing {
		return fields
	}
	out := append([]Field(nil), fields...)
	for i := range out {
		if out[i].Key == "" {
			k := dedupe(DefaultKey(out[i].Label), taken)
			out[i].Key, taken[k] = k, true
		}
	}
	return out
}
