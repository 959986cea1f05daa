package capture

import (
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// LanguageColumn is the title of the tabular exports' last column on a form with languages:
// the language of the page each response was given on. A form without languages has no such
// column, so its exports stay as they were.
const LanguageColumn = "language"

// withLanguage adds the language column to cols when f has languages.
func withLanguage(f *form.Form, cols []string) []string {
	if len(f.Languages()) == 0 {
		return cols
	}
	return append(cols, LanguageColumn)
}

// withLanguageColumn adds the language column to the export when its form has languages.
func (e *Export) withLanguageColumn() {
	if len(e.Form.Languages()) == 0 {
		return
	}
	e.language = true
	e.Columns = append(e.Columns, LanguageColumn)
	e.Kinds = append(e.Kinds, TextColumn)
}

// languageCell is the language a response was given in, or empty.
func languageCell(m submission.Metadata) string {
	if m.Language == nil {
		return ""
	}
	return *m.Language
}
