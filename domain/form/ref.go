package form

import (
	"regexp"

	"github.com/formward/formward/domain"
)

// refPattern is a form's ref: lower-case letters, digits and hyphens, 1 to 64 characters,
// starting with a letter or digit.
var refPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// ValidRef reports whether s is a well-formed ref.
func ValidRef(s string) bool { return refPattern.MatchString(s) }

// checkRef adds a violation when a ref is set and malformed.
func checkRef(vs *domain.Violations, ref *string) {
	if ref != nil && !ValidRef(*ref) {
		vs.Add("ref", "invalid_value", "ref must be 1 to 64 lower-case letters, digits and hyphens, starting with a letter or digit")
	}
}

// Ref returns the form's ref, the stable name forms as code use; nil when it has none.
func (f *Form) Ref() *string {
	if f.ref == nil {
		return nil
	}
	r := *f.ref
	return &r
}

// WithRefFromDatabase gives a stored form its stored ref, without checking it again.
func (f *Form) WithRefFromDatabase(ref *string) *Form {
	f.ref = ref
	return f
}
