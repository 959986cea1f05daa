package submission

import (
	"slices"
	"strings"

	"github.com/formward/formward/domain/form"
)

// NormalizeEmail is the form of an address a respondent's privacy request is matched by:
// trimmed and lower-cased, so "Jane@Example.org " and "jane@example.org" are one person.
func NormalizeEmail(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// EmailAnswers returns the answers to the fields of type email, normalised, each once and in
// order: what the keyed index of respondents' addresses holds for a submission.
func EmailAnswers(fields []form.Field, data map[string]Value) []string {
	var out []string
	for _, fl := range fields {
		if fl.Type != form.TypeEmail {
			continue
		}
		v, ok := data[fl.ID]
		if !ok {
			continue
		}
		for _, s := range v.Strings() {
			if e := NormalizeEmail(s); e != "" && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// Emails returns the submission's email answers (see EmailAnswers) as of the form it was built
// or last updated against; nil for a submission read back from the database, whose form the
// caller must supply to EmailAnswers.
func (s *Submission) Emails() []string { return append([]string(nil), s.emails...) }

// HasEmails reports whether Emails was computed against a form (built or updated in this
// process) rather than left empty by rehydration.
func (s *Submission) HasEmails() bool { return s.emailsKnown }

// ValidEmail reports whether s is an email address an email field would accept.
func ValidEmail(s string) bool { return validEmail(s) }
