package formstats

import (
	"math"
	"sort"
	"strconv"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// Kind is how a field's answers are summarised.
type Kind int

const (
	// KindOther fields are only counted as answered.
	KindOther Kind = iota
	// KindChoice fields (dropdown, radio, checkbox with options, a single checkbox) count each
	// chosen option.
	KindChoice
	// KindNumber fields count each distinct value, for min, median and max.
	KindNumber
)

// KindOf is how the answers of a field are summarised.
func KindOf(f form.Field) Kind {
	switch f.Type {
	case form.TypeDropdown, form.TypeRadio, form.TypeCheckbox:
		return KindChoice
	case form.TypeNumber:
		return KindNumber
	}
	return KindOther
}

// SingleCheckboxOptions are the options a checkbox without options is summarised by.
var SingleCheckboxOptions = []string{"true", "false"}

// Answer is what one submission says of one field, as the counters keep it: the field was
// answered, with these options (a choice field) or this canonical number (a number field).
type Answer struct {
	FieldID string
	Kind    Kind
	// Value holds the chosen options of a choice field, the one canonical value of a number
	// field; the counters read it for those kinds only.
	Value submission.Value
}

// Answers lists the fields that values answer, in the form's order; values are the
// submission's canonical answers by field ID (before they are sealed: counting never needs
// to decrypt a stored submission).
func Answers(fields []form.Field, values map[string]submission.Value) []Answer {
	out := make([]Answer, 0, len(values))
	for _, f := range fields {
		if v, ok := values[f.ID]; ok {
			out = append(out, Answer{FieldID: f.ID, Kind: KindOf(f), Value: v})
		}
	}
	return out
}

// AppendAnswers appends the answers of a submission of the form to dst, in no particular
// order, without copying the form's fields or the submission's answers: the capture calls it
// once per submission with a recycled dst, so counting allocates nothing.
func AppendAnswers(dst []Answer, f *form.Form, s *submission.Submission) []Answer {
	s.EachAnswer(func(id string, v submission.Value) {
		if fl, ok := f.Field(id); ok {
			dst = append(dst, Answer{FieldID: id, Kind: KindOf(fl), Value: v})
		}
	})
	return dst
}

// MaxNumberValues bounds the distinct values of one number field counted per form and UTC day
// in one process between two writes: past it, a new value is rounded to RoundedDigits
// significant digits before it is counted, so a field of free-form amounts cannot grow the
// counters without bound. Min, median and max stay exact below the bound and are exact to
// those digits past it.
const (
	MaxNumberValues = 1000
	RoundedDigits   = 3
)

// RoundNumber writes the canonical number s with RoundedDigits significant digits; a value
// that does not parse is returned as it is.
func RoundNumber(s string) string {
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(n, 'g', RoundedDigits, 64), 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// FieldCounts are the summed counters of one field.
type FieldCounts struct {
	Answered int64
	// Options counts each chosen option; Numbers each distinct canonical number.
	Options map[string]int64
	Numbers map[string]int64
}

// Option is one option of a choice field and how many submissions chose it.
type Option struct {
	Option string
	Count  int64
}

// FieldSummary is one question's answers over a period.
type FieldSummary struct {
	FieldID string
	Label   string
	Type    form.FieldType
	Kind    Kind
	// Answered counts the submissions that answered the field.
	Answered int64
	// Options are a choice field's options in the form's order, each with its count.
	Options []Option
	// Min, Median and Max of a number field's answers; nil without any.
	Min, Median, Max *float64
}

// PageReach is how many respondents reached one page of a multi-page form.
type PageReach struct {
	Page    int
	Reached int64
	// Saved is how many open drafts (settings.partial) wait at this page now, whatever the
	// report's period: respondents who saved to finish later.
	Saved int64
}

// Summaries are the per-question summaries of the form's current fields, in its order.
func Summaries(fields []form.Field, counts map[string]FieldCounts) []FieldSummary {
	out := make([]FieldSummary, 0, len(fields))
	for _, f := range fields {
		c := counts[f.ID]
		s := FieldSummary{FieldID: f.ID, Label: f.Label, Type: f.Type, Kind: KindOf(f), Answered: c.Answered}
		switch s.Kind {
		case KindChoice:
			opts := f.Options
			if len(opts) == 0 {
				opts = SingleCheckboxOptions
			}
			s.Options = make([]Option, len(opts))
			for i, o := range opts {
				s.Options[i] = Option{Option: o, Count: c.Options[o]}
			}
		case KindNumber:
			s.Min, s.Median, s.Max = NumberSummary(c.Numbers)
		}
		out = append(out, s)
	}
	return out
}

// NumberSummary returns the least, the median (the mean of the two middle values for an even
// count) and the greatest of the values counted in hist (canonical number → count); nil
// without any.
func NumberSummary(hist map[string]int64) (lo, median, hi *float64) {
	type bin struct {
		v float64
		n int64
	}
	bins := make([]bin, 0, len(hist))
	var total int64
	for s, n := range hist {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || n <= 0 || math.IsNaN(v) {
			continue
		}
		bins = append(bins, bin{v, n})
		total += n
	}
	if total == 0 {
		return nil, nil, nil
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].v < bins[j].v })
	// nth returns the k-th smallest value (0-based).
	nth := func(k int64) float64 {
		for _, b := range bins {
			if k < b.n {
				return b.v
			}
			k -= b.n
		}
		return bins[len(bins)-1].v
	}
	m := nth(total / 2)
	if total%2 == 0 {
		m = (nth(total/2-1) + m) / 2
	}
	first, last := bins[0].v, bins[len(bins)-1].v
	return &first, &m, &last
}

// Reach lists the steps of a multi-page form (the pages holding a field respondents see)
// with how many reached each; nil for a single-page form.
func Reach(fields []form.Field, reached map[int]int64) []PageReach {
	if !form.Paged(fields) {
		return nil
	}
	steps := form.Steps(fields, nil)
	out := make([]PageReach, len(steps))
	for i, p := range steps {
		out[i] = PageReach{Page: p, Reached: reached[p]}
	}
	return out
}

// Add returns the sum of two fields' counters (new maps: neither c nor o changes).
func (c FieldCounts) Add(o FieldCounts) FieldCounts {
	out := FieldCounts{Answered: c.Answered + o.Answered}
	for _, src := range []map[string]int64{c.Options, o.Options} {
		for k, n := range src {
			if out.Options == nil {
				out.Options = map[string]int64{}
			}
			out.Options[k] += n
		}
	}
	for _, src := range []map[string]int64{c.Numbers, o.Numbers} {
		for k, n := range src {
			if out.Numbers == nil {
				out.Numbers = map[string]int64{}
			}
			out.Numbers[k] += n
		}
	}
	return out
}
