package web

import (
	"html/template"
	"io"
	"sync"

	"github.com/formward/formward/domain/form"
)

func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Funcs(templateFuncs()).ParseFS(templateFS, "templates/*.html")
}

var previewTemplates = sync.OnceValues(parseTemplates)

// Preview writes the form's public page as a respondent first sees it (the same template and
// data as GET /f/{id}, whatever the form's status), for the builder's live preview. It carries
// no render token: a post from the preview is refused like any other post without one.
func Preview(w io.Writer, f *form.Form) error {
	t, err := previewTemplates()
	if err != nil {
		return err
	}
	return t.ExecuteTemplate(w, "form.html", formData(f, nil, nil, "", 0))
}
