package web

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// recallPiece is a piece of a label or help text as the template draws it: plain Text, or
// (Source not empty) the answer of the field with that ID, in a <span data-recall> that the
// page's script keeps up to date as the respondent types. html/template escapes both: an
// answer is never markup.
type recallPiece struct {
	Text, Source string
}

// recalled draws text with its {{key}} spots filled from the answers known (values, by field
// ID): plain is the whole text for places that take text only (the error summary), pieces
// are for the template (nil when the text recalls nothing). An answer not known yet reads
// empty; a spot naming no field stays as written (the form's save refuses those).
func recalled(text string, fields []form.Field, values map[string][]string) (plain string, pieces []recallPiece) {
	parts := form.SplitRecall(text)
	if parts == nil {
		return text, nil
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Name == "" {
			b.WriteString(p.Text)
			pieces = append(pieces, recallPiece{Text: p.Text})
			continue
		}
		src, ok := form.RecallSource(fields, p.Name)
		if !ok || src.Type == form.TypeFile {
			t := "{{" + p.Name + "}}"
			b.WriteString(t)
			pieces = append(pieces, recallPiece{Text: t})
			continue
		}
		v := answerText(src, values[src.ID])
		b.WriteString(v)
		pieces = append(pieces, recallPiece{Text: v, Source: src.ID})
	}
	return b.String(), pieces
}

// answerText is an answer as recall shows it: a choice's option text, a checkbox list joined
// with ", ", a single yes/no box "Yes" when ticked.
func answerText(f form.Field, vals []string) string {
	if f.Type == form.TypeCheckbox && len(f.Options) == 0 {
		if len(vals) > 0 && vals[0] == "true" {
			return "Yes"
		}
		return ""
	}
	var kept []string
	for _, v := range vals {
		if v != "" {
			kept = append(kept, v)
		}
	}
	return strings.Join(kept, ", ")
}

// recallView fills a field view's label and help from the answers known.
func recallView(v *fieldView, fields []form.Field, values map[string][]string) {
	raw := v.Label
	v.Label, v.LabelParts = recalled(v.Label, fields, values)
	if v.LabelParts != nil && strings.HasPrefix(v.Error, raw) {
		// The domain's message names the field by its label as written: show it recalled.
		v.Error = v.Label + strings.TrimPrefix(v.Error, raw)
	}
	if v.Help != "" {
		v.Help, v.HelpParts = recalled(v.Help, fields, values)
	}
}

// thankYouRecall fills the {{key}} spots of a thank-you message with the submission's answers
// (by field ID); {{score}} is left to thankYouScore, and a spot that names no field stays
// exactly as written.
func thankYouRecall(msg string, f *form.Form, answers map[string][]string) string {
	if f == nil || !strings.Contains(msg, "{{") {
		return msg
	}
	fields := f.Fields()
	scored := f.HasScores()
	return replaceVars(msg, func(name string) (string, bool) {
		src, ok := form.RecallSource(fields, name)
		if !ok || src.Type == form.TypeFile || (name == "score" && scored) {
			return "", false
		}
		return answerText(src, answers[src.ID]), true
	})
}

// thankedAnswers are the answers of the submission this request stored (by field ID); nil
// when none.
func thankedAnswers(c *gin.Context) map[string][]string {
	v, ok := c.Get(thankedKey)
	if !ok {
		return nil
	}
	s, ok := v.(*submission.Submission)
	if !ok || s == nil {
		return nil
	}
	out := make(map[string][]string, len(s.Data()))
	s.EachAnswer(func(id string, v submission.Value) { out[id] = v.Strings() })
	return out
}

// recall digests the recalled pieces of a label and a help into the page cache's key.
func (fp *fingerprint) recall(lists ...[]recallPiece) {
	for _, parts := range lists {
		fp.num(len(parts))
		for _, p := range parts {
			fp.str(p.Text, p.Source)
		}
	}
}
