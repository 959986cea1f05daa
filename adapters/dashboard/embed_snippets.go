package dashboard

import (
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/formward/formward/docs"
	"github.com/formward/formward/domain/form"
)

// The share panel offers the recipes of docs/embedding.md filled in for one form. They are read
// from the documentation compiled into the binary, so the panel and the page never disagree:
// only the example's address, its frame title and its example fields are replaced.

// Placeholders of docs/embedding.md that the panel fills in.
const (
	docFormURL    = "https://forms.example.com/f/frm_06H0A8…"
	docFrameTitle = `title="Register for the event"`
	// docFormID and the "-error" suffix are how the recipe's script finds the form and the
	// error line of each control; the controls made here follow them.
	docFormID = `<form id="signup"`
)

// embedRecipes are the two recipes of docs/embedding.md, split where the panel fills them in.
type embedRecipes struct {
	// frame is the <iframe> recipe.
	frame string
	// formHead is the JSON recipe up to its <form> tag, formTail from its submit button to the
	// end of the script; the example controls between them are replaced by the form's own.
	formHead, formTail string
}

var recipes = mustEmbedRecipes(docs.Embedding)

func mustEmbedRecipes(doc string) embedRecipes {
	r, err := parseEmbedRecipes(doc)
	if err != nil {
		panic("dashboard: docs/embedding.md: " + err.Error()) // compiled in: a build defect, caught by the tests
	}
	return r
}

// parseEmbedRecipes finds the two ```html blocks of the page and checks the placeholders the
// panel fills in are there.
func parseEmbedRecipes(doc string) (embedRecipes, error) {
	var r embedRecipes
	frame, ok := htmlBlock(doc, "<iframe")
	if !ok || !strings.Contains(frame, `src="`+docFormURL+`"`) || !strings.Contains(frame, docFrameTitle) {
		return r, errors.New("no <iframe> recipe with the example address and title")
	}
	script, ok := htmlBlock(doc, `<script type="module">`)
	if !ok || !strings.Contains(script, `const FORM = "`+docFormURL+`"`) || !strings.Contains(script, `"-error"`) {
		return r, errors.New("no script recipe with the example address and error lines")
	}
	lines := strings.SplitAfter(script, "\n")
	head, tail := -1, -1
	for i, l := range lines {
		if head < 0 && strings.HasPrefix(l, docFormID) {
			head = i
		}
		if head >= 0 && tail < 0 && strings.Contains(l, `<button type="submit">`) {
			tail = i
		}
	}
	if head < 0 || tail < 0 {
		return r, fmt.Errorf("the script recipe has no %s … <button type=\"submit\"> to fill in", docFormID)
	}
	r.frame = frame
	r.formHead = strings.Join(lines[:head+1], "")
	r.formTail = strings.Join(lines[tail:], "")
	return r, nil
}

// htmlBlock returns the first ```html block of doc that contains marker.
func htmlBlock(doc, marker string) (string, bool) {
	parts := strings.Split(doc, "```html\n")
	for _, part := range parts[1:] {
		block, _, _ := strings.Cut(part, "\n```")
		if strings.Contains(block, marker) {
			return block, true
		}
	}
	return "", false
}

// iframeSnippet is the <iframe> recipe for the form at publicURL.
func (r embedRecipes) iframeSnippet(publicURL, name string) string {
	return strings.NewReplacer(docFormURL, publicURL, docFrameTitle, `title="`+html.EscapeString(name)+`"`).Replace(r.frame)
}

// jsonSnippet is the recipe that posts JSON, for the form at publicURL: the page's script, and
// one labelled control per field with its error line, named by the field ID.
func (r embedRecipes) jsonSnippet(publicURL string, fields []form.Field) string {
	var b strings.Builder
	b.WriteString(r.formHead)
	ids := map[string]bool{"signup": true, "status": true}
	for _, f := range fields {
		writeControl(&b, f, ids)
	}
	b.WriteString(strings.ReplaceAll(r.formTail, docFormURL, publicURL))
	return b.String()
}

// writeControl writes the field's label, help text (named by the control's aria-describedby),
// control and error line as the recipe's script reads them: a file field needs the hosted
// page, and a hidden field is left to the site.
func writeControl(b *strings.Builder, f form.Field, ids map[string]bool) {
	label := html.EscapeString(f.Label)
	comment := strings.ReplaceAll(f.Label, "--", "—")
	switch {
	case f.Type == form.TypeFile:
		fmt.Fprintf(b, "  <!-- %s (%s): a file field; JSON carries no files, use the <iframe> for it -->\n\n", comment, f.ID)
		return
	case f.Hidden:
		fmt.Fprintf(b, "  <!-- %s (%s): a hidden field; add <input type=\"hidden\" name=\"%s\" value=\"…\"> to send it -->\n\n", comment, f.ID, f.ID)
		return
	}
	id := f.Key
	if id == "" || ids[id] {
		id = f.ID
	}
	ids[id] = true
	req := ""
	if f.Required {
		req = " required"
	}
	ph := ""
	if f.Placeholder != nil && *f.Placeholder != "" {
		ph = ` placeholder="` + html.EscapeString(*f.Placeholder) + `"`
	}
	// last is what every control writes at the end of its tag: required, and the help's
	// aria-describedby.
	help, last := "", req
	if f.Help != nil && strings.TrimSpace(*f.Help) != "" {
		help = fmt.Sprintf("  <p id=\"%s-help\" class=\"help\">%s</p>\n", id, strings.ReplaceAll(html.EscapeString(*f.Help), "\n", "<br>"))
		last += ` aria-describedby="` + id + `-help"`
	}
	options := func() {
		for _, o := range f.Options {
			o = html.EscapeString(o)
			fmt.Fprintf(b, "    <option value=\"%s\">%s</option>\n", o, o)
		}
	}
	fmt.Fprintf(b, "  <label for=\"%s\">%s</label>\n", id, label)
	b.WriteString(help)
	switch {
	case f.Type == form.TypeTextarea:
		fmt.Fprintf(b, "  <textarea id=\"%s\" name=\"%s\"%s%s></textarea>\n", id, f.ID, ph, last)
	case f.Type == form.TypeDropdown || f.Type == form.TypeRadio:
		fmt.Fprintf(b, "  <select id=\"%s\" name=\"%s\"%s>\n    <option value=\"\">Choose…</option>\n", id, f.ID, last)
		options()
		b.WriteString("  </select>\n")
	case f.Type == form.TypeCheckbox && len(f.Options) > 0:
		fmt.Fprintf(b, "  <select id=\"%s\" name=\"%s\" multiple%s>\n", id, f.ID, last)
		options()
		b.WriteString("  </select>\n")
	case f.Type == form.TypeCheckbox:
		fmt.Fprintf(b, "  <input id=\"%s\" name=\"%s\" type=\"checkbox\"%s>\n", id, f.ID, last)
	default:
		fmt.Fprintf(b, "  <input id=\"%s\" name=\"%s\" type=\"%s\"%s%s>\n", id, f.ID, inputType(f.Type), ph, last)
	}
	fmt.Fprintf(b, "  <p id=\"%s-error\" class=\"error\" hidden></p>\n\n", id)
}

func inputType(t form.FieldType) string {
	switch t {
	case form.TypeEmail, form.TypeNumber, form.TypeDate:
		return string(t)
	}
	return "text"
}
