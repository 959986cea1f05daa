package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/formward/formward/domain/form"
)

// The builder's languages page (/app/forms/{id}/translations): the form's languages, and a
// side-by-side editor of one language's translations (the default language's text on the
// left, the translation on the right), marking what is missing. It works without JavaScript
// (server-rendered, POST, errors next to their inputs with the typed values kept) and saves
// through UpdateForm, as the API does.

// translationRow is one translatable text: the original and its translation.
type translationRow struct {
	// Name is the input's name; Label says what the text is ("Label", "Option 2").
	Name, Label, Original, Value, Error string
	Long                                bool // a textarea
}

// translationGroup is the rows of the form itself or of one field.
type translationGroup struct {
	Heading string
	Rows    []translationRow
}

// languageTab is one of the form's other languages with its count of missing texts.
type languageTab struct {
	Tag, Name, Href string
	Missing         int
	Current         bool
}

type translationsData struct {
	FormID, FormName, Back string
	// Languages is the languages input's value; LanguagesError its error.
	Languages, LanguagesError string
	Default, DefaultName      string
	Tabs                      []languageTab
	// Lang is the language being edited ("" when the form has no other language).
	Lang, LangName string
	Groups         []translationGroup
	Missing        int
	Error          string
}

func (h *Handler) translations(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	h.drawTranslations(c, http.StatusOK, fv.Form, c.Query("lang"), nil, nil, "", "")
}

// drawTranslations draws the page for lang (the first other language when lang is not one);
// posted are the typed values to draw again, errs the errors by input name.
func (h *Handler) drawTranslations(c *gin.Context, status int, f *form.Form, lang string, posted url.Values, errs map[string]string, langsValue, langsErr string) {
	langs := f.Languages()
	d := translationsData{FormID: f.ID(), FormName: f.Name(), Back: "/app/forms/" + f.ID(), Languages: strings.Join(langs, ", "), LanguagesError: langsErr}
	if langsValue != "" || langsErr != "" {
		d.Languages = langsValue
	}
	if len(langs) > 0 {
		d.Default, d.DefaultName = langs[0], languageName(langs[0])
	}
	if len(langs) > 1 && !slices.Contains(langs[1:], lang) {
		lang = langs[1]
	}
	if len(langs) < 2 {
		lang = ""
	}
	missing := f.MissingTranslations()
	for _, l := range langs[min(1, len(langs)):] {
		d.Tabs = append(d.Tabs, languageTab{Tag: l, Name: languageName(l), Href: "/app/forms/" + f.ID() + "/translations?lang=" + url.QueryEscape(l),
			Missing: missing[l], Current: l == lang})
	}
	if lang != "" {
		d.Lang, d.LangName, d.Missing = lang, languageName(lang), missing[lang]
		d.Groups = translationGroups(f, lang, posted, errs)
	}
	if errs != nil {
		d.Error = errs[""]
	}
	h.render(c, status, "form_translations", &view{Title: "Languages · " + f.Name(), Data: d})
}

// languageName is a tag with its English name, "de (German)".
func languageName(tag string) string {
	if n := englishLanguageName(tag); n != "" && n != tag {
		return tag + " (" + n + ")"
	}
	return tag
}

// translationGroups lays out the form's texts and their translations into lang.
func translationGroups(f *form.Form, lang string, posted url.Values, errs map[string]string) []translationGroup {
	value := func(name, stored string) string {
		if posted != nil {
			return posted.Get(name)
		}
		return stored
	}
	ft := f.Translations()[lang]
	s := f.Settings()
	g := translationGroup{Heading: "The form"}
	add := func(g *translationGroup, name, label, original, stored string, long bool) {
		if original == "" {
			return // nothing to translate
		}
		g.Rows = append(g.Rows, translationRow{Name: name, Label: label, Original: original, Value: value(name, stored), Error: errs[name], Long: long})
	}
	add(&g, "t_name", "Name", f.Name(), ft.Name, false)
	add(&g, "t_description", "Description", deref(f.Description()), ft.Description, true)
	add(&g, "t_thank_you_message", "Thank-you message", deref(s.ThankYouMessage), ft.ThankYouMessage, true)
	add(&g, "t_closed_message", "Closed message", deref(s.Closing.Message), ft.ClosedMessage, true)
	out := []translationGroup{g}
	for i, fl := range f.Fields() {
		t := fl.Translations[lang]
		fg := translationGroup{Heading: fmt.Sprintf("Question %d: %s", i+1, fl.Label)}
		p := "f_" + fl.ID + "_"
		add(&fg, p+"label", "Label", fl.Label, t.Label, false)
		add(&fg, p+"help", "Help", deref(fl.Help), t.Help, true)
		add(&fg, p+"placeholder", "Placeholder", deref(fl.Placeholder), t.Placeholder, false)
		for j, o := range fl.Options {
			stored := ""
			if j < len(t.Options) {
				stored = t.Options[j]
			}
			name := p + "opt_" + strconv.Itoa(j)
			add(&fg, name, "Option "+strconv.Itoa(j+1), o, stored, false)
			if e := errs[p+"options"]; e != "" && j == 0 {
				fg.Rows[len(fg.Rows)-1].Error = e
			}
		}
		out = append(out, fg)
	}
	return out
}

func (h *Handler) saveTranslations(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	f := fv.Form
	if c.PostForm("_action") == "languages" {
		h.saveLanguages(c, f)
		return
	}
	lang := c.PostForm("lang")
	if !slices.Contains(f.Languages()[min(1, len(f.Languages())):], lang) {
		h.drawTranslations(c, http.StatusUnprocessableEntity, f, "", nil, map[string]string{"": "Choose one of the form's languages to translate into."}, "", "")
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, err)
		return
	}
	pf := c.Request.PostForm
	tr := f.Translations()
	if tr == nil {
		tr = map[string]form.FormTranslation{}
	}
	tr[lang] = form.FormTranslation{Name: strings.TrimSpace(pf.Get("t_name")), Description: pf.Get("t_description"),
		ThankYouMessage: pf.Get("t_thank_you_message"), ClosedMessage: pf.Get("t_closed_message")}
	fields := f.Fields()
	specs := specsOf(fields)
	for i, fl := range fields {
		p := "f_" + fl.ID + "_"
		t := form.FieldTranslation{Label: strings.TrimSpace(pf.Get(p + "label")), Help: pf.Get(p + "help"), Placeholder: pf.Get(p + "placeholder")}
		opts := make([]string, len(fl.Options))
		some := false
		for j := range fl.Options {
			opts[j] = strings.TrimSpace(pf.Get(p + "opt_" + strconv.Itoa(j)))
			some = some || opts[j] != ""
		}
		if some {
			t.Options = opts
		}
		all := make(map[string]form.FieldTranslation, len(fl.Translations)+1)
		for k, v := range fl.Translations {
			all[k] = v
		}
		all[lang] = t
		specs[i].Translations = all
	}
	err := h.updateForm(c, f.ID(), form.Patch{Translations: &tr, Fields: &specs})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		errs := map[string]string{}
		var rest []string
		for _, d := range b.Details {
			name := translationInput(d.Field, fields)
			if name == "" {
				rest = append(rest, sentence(d.Message))
			} else if errs[name] == "" {
				errs[name] = sentence(d.Message)
			}
		}
		errs[""] = strings.Join(rest, " ")
		h.drawTranslations(c, b.Status, f, lang, pf, errs, "", "")
		return
	}
	h.redirect(c, "/app/forms/"+f.ID()+"/translations?lang="+url.QueryEscape(lang), languageName(lang)+" saved.")
}

// saveLanguages sets the form's languages from a list typed with commas or spaces.
func (h *Handler) saveLanguages(c *gin.Context, f *form.Form) {
	typed := c.PostForm("languages")
	tags := strings.FieldsFunc(typed, func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '\n' || r == '\r' || r == '\t' })
	if tags == nil {
		tags = []string{}
	}
	if err := h.updateForm(c, f.ID(), form.Patch{Languages: &tags}); err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		var msgs []string
		for _, d := range b.Details {
			msgs = append(msgs, sentence(d.Message))
		}
		h.drawTranslations(c, b.Status, f, "", nil, nil, typed, strings.Join(msgs, " "))
		return
	}
	h.redirect(c, "/app/forms/"+f.ID()+"/translations", "Languages saved.")
}

var translationPath = regexp.MustCompile(`^(?:fields\[(\d+)\]\.)?translations\.[^.]+\.([a-z_]+)(?:\[(\d+)\])?$`)

// translationInput names the page's input a violation path is about, or "".
func translationInput(path string, fields []form.Field) string {
	m := translationPath.FindStringSubmatch(path)
	if m == nil {
		return ""
	}
	if m[1] == "" {
		return "t_" + m[2]
	}
	i, _ := strconv.Atoi(m[1])
	if i >= len(fields) {
		return ""
	}
	p := "f_" + fields[i].ID + "_"
	if m[2] == "options" {
		if m[3] != "" {
			return p + "opt_" + m[3]
		}
		return p + "options"
	}
	return p + m[2]
}

// englishLanguageName is a tag's language named in English ("German"), or "".
func englishLanguageName(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return ""
	}
	return display.English.Languages().Name(t)
}

// translatedInto lists the languages a field is translated into, for the history's compare
// page ("de, fr"), or "none".
func translatedInto(f form.Field) string {
	if len(f.Translations) == 0 {
		return "none"
	}
	tags := make([]string, 0, len(f.Translations))
	for tag := range f.Translations {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	return strings.Join(tags, ", ")
}
