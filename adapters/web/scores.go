package web

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// thankedKey holds, on the request's context, the submission the thank-you page answers, so
// that the page can show its score ({{score}}).
const thankedKey = "web.thanked"

// thankYouScore puts the score into a thank-you message: every {{score}} (spaces inside the
// braces allowed) becomes the score, written as people read it. A form without scores keeps
// its message as written. score nil on a form with scores (a silently refused post) reads 0.
func thankYouScore(msg string, f *form.Form, score *float64) string {
	if f == nil || !strings.Contains(msg, "{{") || !f.HasScores() {
		return msg
	}
	s := "0"
	if score != nil {
		s = form.FormatScore(*score)
	}
	return replaceVar(msg, "score", s)
}

// thankedScore is the score of the submission this request stored, if any.
func thankedScore(c *gin.Context) *float64 {
	if v, ok := c.Get(thankedKey); ok {
		if s, ok := v.(*submission.Submission); ok && s != nil {
			return s.Metadata().Score
		}
	}
	return nil
}

// replaceVar replaces every {{name}} (spaces inside the braces allowed) in s with val.
func replaceVar(s, name, val string) string {
	return replaceVars(s, func(n string) (string, bool) { return val, n == name })
}

// replaceVars replaces each {{name}} (spaces inside the braces allowed) in s for which value
// answers ok; the others stay exactly as written.
func replaceVars(s string, value func(name string) (string, bool)) string {
	var b strings.Builder
	rest := s
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(rest[start+2:], "}}")
		if end < 0 {
			break
		}
		b.WriteString(rest[:start])
		if v, ok := value(strings.TrimSpace(rest[start+2 : start+2+end])); ok {
			b.WriteString(v)
		} else {
			b.WriteString(rest[start : start+2+end+2])
		}
		rest = rest[start+2+end+2:]
	}
	b.WriteString(rest)
	return b.String()
}
