package dashboard

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/form"
)

// builderTabs are the builder's three views of a form; each is its own address (?tab=), so
// they work without JavaScript and a reload stays where it was.
var builderTabs = []struct{ ID, Label string }{{"questions", "Questions"}, {"settings", "Settings"}, {"share", "Share"}}

type tabLink struct {
	ID, Label, Href string
	Current         bool
}

// addForm is what the owner typed into an add form that was refused.
type addForm struct {
	Type, Label, After, Key string
	Hidden                  bool
}

// fieldRow is one field in the builder with its errors by property.
type fieldRow struct {
	Index                            int
	ID, Label, Type, TypeLabel, Key  string
	Placeholder, Options, Accept     string
	Help                             string
	MaxFileMB                        string
	Required, HasOptions, IsFile, Ph bool
	Hidden, First, Last              bool
	Page                             int
	Errors                           map[string]string
	Open                             bool
	Logic                            logicForm
	Sentence                         template.HTML
	PrefillURL                       string
	Types                            []selectOption
	FormID                           string
	// Scores are the score boxes beside a choice field's options (builder_scores.go).
	Scores []scoreInput
}

// addSlot is one "add a question" form: at the end (After empty) or below a question. Only
// the slot a refused add came from shows what was typed and the errors.
type addSlot struct {
	D                               builderData
	After, AfterLabel, Prefix, Type string
	Label                           string
	Errors                          map[string]string
}

func addAt(d builderData, after, afterLabel string) addSlot {
	sl := addSlot{D: d, After: after, AfterLabel: afterLabel, Prefix: "add-", Type: "text"}
	if after != "" {
		sl.Prefix = "add-" + after + "-"
	}
	if !d.Add.Hidden && d.Add.After == after && d.AddErrors != nil {
		sl.Type, sl.Label, sl.Errors = d.Add.Type, d.Add.Label, d.AddErrors
	}
	return sl
}

// builderItem is a question or a page break in the questions' order.
type builderItem struct {
	Field *fieldRow
	// Break is the n-th page break (page Break+1 starts after it); 0: not a break.
	Break                 int
	FirstBreak, LastBreak bool
}

type builderData struct {
	ID, Name, Status, StatusClass string
	Submissions                   int64
	// Version is the number of the form's current version of its questions.
	Version        int
	CanWrite       bool
	Tab            string
	Tabs           []tabLink
	Items          []builderItem
	Hidden         []fieldRow
	Pages          int
	Types          []struct{ Value, Label string }
	FieldsError    string
	Settings       settingsForm
	SettingsErrors map[string]string
	// Captchas are the captcha providers of this build, the selected one marked.
	Captchas                 []selectOption
	PublicURL, IframeSnippet string
	// JSONSnippet is the recipe that posts JSON from the site's own HTML with a script.
	JSONSnippet string
	// FormSnippet is a plain HTML form that posts to the form (form-backend mode).
	FormSnippet string
	// QR is a data: URL of a PNG this package drew.
	QR                  template.URL
	Published, Archived bool
	// PreviewPhone draws the preview at phone width (?preview=phone).
	PreviewPhone bool
	Add          addForm
	AddErrors    map[string]string
	// Appearances are the theme's appearance choices.
	Appearances []struct{ Value, Label string }
	// EmailFields are the form's email fields, for the closing and confirmation pickers.
	EmailFields []selectOption
}

func (h *Handler) drawBuilder(c *gin.Context, fv forms.FormView, st builderState) {
	f := fv.Form
	p := principal(c)
	d := builderData{ID: f.ID(), Name: f.Name(), Status: string(f.Status()), StatusClass: statusClass(f.Status()), Submissions: fv.SubmissionCount, Version: f.Version(),
		CanWrite: p.Allows(access.Write), Published: f.Status() == form.StatusPublished, Archived: f.Status() == form.StatusArchived,
		FieldsError: st.rest, SettingsErrors: st.setErr, Add: st.add, AddErrors: st.addErr, Tab: st.tab, PreviewPhone: st.phone}
	if d.Tab == "" {
		d.Tab = c.Query("tab")
	}
	known := false
	for _, t := range builderTabs {
		known = known || t.ID == d.Tab
	}
	if !known {
		d.Tab = "questions"
	}
	for _, t := range builderTabs {
		href := "/app/forms/" + f.ID()
		if t.ID != "questions" {
			href += "?tab=" + t.ID
		}
		d.Tabs = append(d.Tabs, tabLink{ID: t.ID, Label: t.Label, Href: href, Current: t.ID == d.Tab})
	}
	d.Types, d.Appearances = fieldTypes, appearances
	specs := st.fields
	if specs == nil {
		specs = specsOf(f.Fields())
	}
	d.PublicURL = h.publicLink(f.ID())
	rows := make(map[string]*fieldRow, len(specs))
	for i, s := range specs {
		r := builderRow(i, s, specs, st.fieldErr[i])
		r.Scores = scoreInputs(s, st.typedScores[i])
		r.FormID = f.ID()
		r.Open = len(r.Errors) > 0 || (st.open != "" && st.open == s.ID)
		if s.Hidden {
			r.PrefillURL = d.PublicURL + "?" + url.Values{r.Key: {"VALUE"}}.Encode()
		}
		rows[s.ID] = &r
		if s.Type == string(form.TypeEmail) && s.ID != "" {
			d.EmailFields = append(d.EmailFields, selectOption{Value: s.ID, Label: s.Label})
		}
	}
	// Every field drawn has an ID: a refused new field is drawn in its add form instead.
	row := func(s *form.FieldSpec) *fieldRow { return rows[s.ID] }
	hidden, seq := layoutOf(specs)
	for i := range hidden {
		d.Hidden = append(d.Hidden, *row(&hidden[i]))
	}
	breaks, n := layoutPages(seq)-1, 0
	d.Pages = breaks + 1
	page := 1
	for i, s := range seq {
		if s == nil {
			n++
			page++
			d.Items = append(d.Items, builderItem{Break: n, FirstBreak: n == 1, LastBreak: n == breaks})
			continue
		}
		r := row(s)
		r.Page, r.First, r.Last = page, i == 0, i == len(seq)-1
		d.Items = append(d.Items, builderItem{Field: r})
	}
	if st.settings != nil {
		d.Settings = *st.settings
	} else {
		d.Settings = settingsFormOf(f)
	}
	for i, o := range d.EmailFields {
		d.EmailFields[i].Selected = o.Value == d.Settings.OnePerEmail
	}
	d.Captchas = captchaOptions(h.app.FormLimits, d.Settings.Captcha)
	// The two recipes of docs/embedding.md, filled in for this form.
	d.IframeSnippet = recipes.iframeSnippet(d.PublicURL, f.Name())
	d.JSONSnippet = recipes.jsonSnippet(d.PublicURL, f.Fields())
	var b strings.Builder
	fmt.Fprintf(&b, "<form action=\"%s\" method=\"post\" enctype=\"multipart/form-data\">\n", d.PublicURL)
	for _, fl := range f.Fields() {
		fmt.Fprintf(&b, "  <!-- %s (%s) -->\n  <input name=\"%s\">\n", strings.ReplaceAll(fl.Label, "--", "—"), fl.Type, fl.Key)
	}
	b.WriteString("  <input name=\"_gotcha\" style=\"display:none\" tabindex=\"-1\" autocomplete=\"off\">\n  <button type=\"submit\">Send</button>\n</form>")
	d.FormSnippet = b.String()
	if q, err := qrDataURL(d.PublicURL); err == nil {
		d.QR = template.URL(q)
	}
	// The builder frames its own preview; nothing else changes in the policy.
	c.Header("Content-Security-Policy", contentSecurityPolicy+"; frame-src 'self'")
	v := &view{Title: f.Name() + " · Builder", Data: d, Error: st.rest}
	status := st.status
	if status == 0 {
		status = http.StatusOK
	}
	h.render(c, status, "form_builder", v)
}

// builderRow draws one field's edit form from its spec (as stored, or as posted and refused).
func builderRow(i int, s form.FieldSpec, specs []form.FieldSpec, errs map[string]string) fieldRow {
	t, _ := form.ParseFieldType(s.Type)
	r := fieldRow{Index: i, ID: s.ID, Label: s.Label, Type: s.Type, TypeLabel: typeLabel(t), Placeholder: deref(s.Placeholder), Help: deref(s.Help),
		Options: strings.Join(s.Options, "\n"), Accept: strings.Join(s.Accept, ", "), Required: s.Required, Hidden: s.Hidden,
		HasOptions: t == form.TypeDropdown || t == form.TypeRadio || t == form.TypeCheckbox, IsFile: t == form.TypeFile,
		Ph:     t == form.TypeText || t == form.TypeTextarea || t == form.TypeEmail || t == form.TypeNumber,
		Errors: errs}
	if s.Key != nil {
		r.Key = *s.Key
	}
	if s.MaxFileBytes != nil && *s.MaxFileBytes > 0 {
		r.MaxFileMB = strconv.FormatFloat(float64(*s.MaxFileBytes)/(1<<20), 'f', -1, 64)
	}
	for _, ft := range fieldTypes {
		r.Types = append(r.Types, selectOption{Value: ft.Value, Label: ft.Label, Selected: ft.Value == s.Type})
	}
	if !s.Hidden {
		r.Logic = logicFormOf(s.ShowIf, sourcesFor(specs, s.ID), errs)
		r.Sentence = logicSentence(s.ShowIf, specs)
	}
	return r
}

// captchaLabels name the built-in captcha providers; a provider a custom build adds shows
// its registered name.
var captchaLabels = map[form.CaptchaProvider]string{
	form.CaptchaTurnstile: "Cloudflare Turnstile", form.CaptchaHCaptcha: "hCaptcha", form.CaptchaReCAPTCHA: "reCAPTCHA",
}

// captchaOptions are the providers forms may name under lim, built-in ones first in their
// usual order, with selected marked.
func captchaOptions(lim form.Limits, selected string) []selectOption {
	known := lim.CaptchaProviders
	if known == nil {
		known = form.BuiltinCaptchaProviders
	}
	var out []selectOption
	for _, p := range form.BuiltinCaptchaProviders {
		if slices.Contains(known, p) {
			out = append(out, selectOption{Value: string(p), Label: captchaLabels[p], Selected: string(p) == selected})
		}
	}
	for _, p := range known {
		if _, builtin := captchaLabels[p]; !builtin {
			out = append(out, selectOption{Value: string(p), Label: string(p), Selected: string(p) == selected})
		}
	}
	return out
}
