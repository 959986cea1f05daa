package form

import (
	"fmt"
	"math"
	"strconv"

	"github.com/formward/formward/domain"
)

// MaxScore bounds the size of one option's score (either sign).
const MaxScore = 1e9

// IsChoice reports whether the field is a choice field: dropdown, radio, or checkbox with options.
func (f Field) IsChoice() bool {
	return f.Type == TypeDropdown || f.Type == TypeRadio || (f.Type == TypeCheckbox && len(f.Options) > 0)
}

// OptionScore returns the score of option v; ok is false when the field has no scores or v
// is not one of its options.
func (f Field) OptionScore(v string) (float64, bool) {
	if len(f.Scores) == 0 {
		return 0, false
	}
	for i, o := range f.Options {
		if o == v && i < len(f.Scores) {
			return f.Scores[i], true
		}
	}
	return 0, false
}

// HasScores reports whether any field of the list carries scores.
func HasScores(fields []Field) bool {
	for _, f := range fields {
		if len(f.Scores) > 0 {
			return true
		}
	}
	return false
}

// HasScores reports whether the form scores its submissions (a field carries scores).
func (f *Form) HasScores() bool { return HasScores(f.fields) }

// RoundScore rounds a sum of scores to six decimals, so that 0.1+0.2 reads 0.3.
func RoundScore(x float64) float64 {
	r := math.Round(x*1e6) / 1e6
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return x
	}
	return r
}

// checkScores checks the scores of field i and returns what the field keeps. Spec scores nil:
// an existing choice field keeps its scores (prev), which must still match its options; an
// empty list clears them.
func checkScores(vs *domain.Violations, path string, t FieldType, options []string, scores *[]float64, prev []float64) []float64 {
	choice := t == TypeDropdown || t == TypeRadio || (t == TypeCheckbox && len(options) > 0)
	var given []float64
	switch {
	case scores != nil:
		given = *scores
	case choice:
		given = prev
	}
	if len(given) == 0 {
		return nil
	}
	if !choice {
		if t != "" {
			vs.Add(path, "not_allowed", "scores are only allowed on dropdown, radio and checkbox fields with options")
		}
		return nil
	}
	if len(given) != len(options) {
		vs.Add(path, "length_mismatch", fmt.Sprintf("scores must have one number per option (%d options, %d scores)", len(options), len(given)))
		return nil
	}
	for j, x := range given {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > MaxScore {
			vs.Add(fmt.Sprintf("%s[%d]", path, j), "invalid_value", fmt.Sprintf("a score must be a number from %g to %g", -MaxScore, MaxScore))
		}
	}
	return append([]float64(nil), given...)
}

// FormatScore writes a score as people read it: 7, 2.5, -1.25 (no exponent, no trailing zeros).
func FormatScore(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
