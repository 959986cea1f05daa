package dashboard

import (
	"math"
	"strconv"
	"strings"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// scoreText writes a score as people read it: 2, 0.5, -1.25.
func scoreText(x float64) string { return form.FormatScore(x) }

// scoresText lists a field's scores for the history, or "none".
func scoresText(scores []float64) string {
	if len(scores) == 0 {
		return "none"
	}
	parts := make([]string, len(scores))
	for i, x := range scores {
		parts[i] = scoreText(x)
	}
	return strings.Join(parts, ", ")
}

// scoreInput is one option's score box in the builder: the option it scores and the text in
// the box (as stored, or as typed and refused).
type scoreInput struct {
	N      int
	Option string
	Value  string
}

// scoreInputs are the score boxes of a choice field, one beside each option; none for other
// fields. typed, when the save was refused, holds what was typed, by option.
func scoreInputs(s form.FieldSpec, typed map[string]string) []scoreInput {
	t, _ := form.ParseFieldType(s.Type)
	if !(form.Field{Type: t, Options: s.Options}).IsChoice() {
		return nil
	}
	out := make([]scoreInput, len(s.Options))
	for j, o := range s.Options {
		out[j] = scoreInput{N: j, Option: o}
		if typed != nil {
			out[j].Value = typed[o]
		} else if s.Scores != nil && j < len(*s.Scores) {
			out[j].Value = scoreText((*s.Scores)[j])
		}
	}
	return out
}

// readScores reads the score boxes of a saved field into s: each box ("score") names its
// option ("score_for"), so scores follow their options when options are added, removed or
// reordered in the same save (a new option scores 0). All boxes blank removes the scores; a
// field that is no longer a choice field loses them. Without boxes in the post, s is left as
// it is. typed is what was typed, by option, for drawing the form again; problem is a sentence
// for the owner when a box holds no number.
func readScores(post map[string][]string, s *form.FieldSpec) (typed map[string]string, problem string) {
	t, _ := form.ParseFieldType(s.Type)
	none := []float64{}
	if !(form.Field{Type: t, Options: s.Options}).IsChoice() {
		s.Scores = &none
		return nil, ""
	}
	boxes, of := post["score"], post["score_for"]
	if len(boxes) == 0 || len(boxes) != len(of) {
		return nil, ""
	}
	typed = make(map[string]string, len(boxes))
	any := false
	for k, b := range boxes {
		b = strings.TrimSpace(b)
		typed[of[k]] = b
		any = any || b != ""
	}
	if !any {
		s.Scores = &none
		return nil, ""
	}
	scores := make([]float64, len(s.Options))
	for j, o := range s.Options {
		b := typed[o]
		if b == "" {
			continue
		}
		x, err := strconv.ParseFloat(strings.Replace(b, ",", ".", 1), 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return typed, "Enter a number for each score, such as 2, 0.5 or -1; leave a box empty for 0."
		}
		scores[j] = x
	}
	s.Scores = &scores
	return typed, ""
}

// scoreOf is whether the form scores its responses and s's score in words ("" when s has
// none: it came before the form had scores).
func scoreOf(f *form.Form, s *submission.Submission) (bool, string) {
	if sc := s.Metadata().Score; sc != nil {
		return true, scoreText(*sc)
	}
	return f.HasScores(), ""
}
