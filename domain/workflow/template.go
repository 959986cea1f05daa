package workflow

import (
	"html"
	"strings"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// Render substitutes every {{name}} in template from vars; unknown names become empty. With
// html, the substituted values are HTML-escaped (the template itself is left as written).
func Render(template string, vars map[string]string, htmlBody bool) string {
	var b strings.Builder
	rest := template
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			b.WriteString(rest)
			return b.String()
		}
		end := strings.Index(rest[start+2:], "}}")
		if end < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:start])
		name := strings.TrimSpace(rest[start+2 : start+2+end])
		val := vars[name]
		if htmlBody {
			val = html.EscapeString(val)
		}
		b.WriteString(val)
		rest = rest[start+2+end+2:]
	}
}

// TemplateVars builds the variables of a template: one per field ID (lists joined with ", "),
// plus submission_id, form_id, form_name and submitted_at.
func TemplateVars(fields map[string]submission.Value, submissionID, formID, formName string, submittedAt time.Time) map[string]string {
	vars := make(map[string]string, len(fields)+4)
	for k, v := range fields {
		vars[k] = v.String()
	}
	vars["submission_id"] = submissionID
	vars["form_id"] = formID
	vars["form_name"] = formName
	vars["submitted_at"] = domain.FormatTime(submittedAt)
	return vars
}

// AddFieldKeys lets templates name fields by key ({{key}}) as well as by ID: each field's
// value is copied under its key, unless a variable of that name already exists.
func AddFieldKeys(vars map[string]string, fields []form.Field) {
	for _, f := range fields {
		if f.Key == "" {
			continue
		}
		if _, taken := vars[f.Key]; taken {
			continue
		}
		vars[f.Key] = vars[f.ID]
	}
}
