package submission

import "github.com/formward/formward/domain/form"

// Score is the sum of the scores of the answered options (every chosen option of a checkbox);
// a field skipped by its display rule has no answer and counts 0. Nil when no field of the
// form carries scores: such forms store no score.
func Score(fields []form.Field, data map[string]Value) *float64 {
	if !form.HasScores(fields) {
		return nil
	}
	var sum float64
	for _, f := range fields {
		if len(f.Scores) == 0 {
			continue
		}
		v, ok := data[f.ID]
		if !ok {
			continue
		}
		v.Each(func(s string) {
			if x, ok := f.OptionScore(s); ok {
				sum += x
			}
		})
	}
	sum = form.RoundScore(sum)
	return &sum
}

// CheckScored is Check that also returns the score the post would store (nil for a form
// without scores): the builder's preview shows it on its thank-you page.
func CheckScored(f *form.Form, input map[string]Input, limits FileLimits) (*float64, error) {
	d, err := prepare(f, input, Metadata{Source: SourceForm}, limits)
	if err != nil {
		return nil, err
	}
	return d.meta.Score, nil
}
