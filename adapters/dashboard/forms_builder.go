package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// errBadOrder: a reorder that does not name every field exactly once (the form changed since
// the page was drawn).
var errBadOrder = domain.Conflict("the fields changed in the meantime; reload the page and try again")

// mountForms adds the forms list, the builder, its settings and the share panel.
func (h *Handler) mountForms(w *gin.RouterGroup) {
	w.GET("/forms", h.forms)
	w.POST("/forms", h.createForm)
	w.GET("/forms/:id", h.builder)
	w.GET("/forms/:id/preview", h.preview)
	w.POST("/forms/:id/duplicate", h.duplicateForm)
	w.GET("/forms/:id/delete", h.deleteFormConfirm)
	w.POST("/forms/:id/delete", h.deleteForm)
	w.POST("/forms/:id/fields", h.addField)
	w.POST("/forms/:id/fields/:fid", h.saveField)
	w.POST("/forms/:id/fields/:fid/move", h.moveField)
	w.POST("/forms/:id/fields/:fid/remove", h.removeField)
	w.POST("/forms/:id/order", h.reorderFields)
	w.POST("/forms/:id/settings", h.saveFormSettings)
	w.POST("/forms/:id/logo", h.uploadLogo)
	w.POST("/forms/:id/logo/remove", h.removeLogo)
	w.GET("/forms/:id/status", h.changeFormStatusConfirm)
	w.POST("/forms/:id/status", h.changeFormStatus)
}

type formRow struct {
	ID, Name, Status, StatusClass string
	Submissions                   int64
	Published                     bool
	Updated                       time.Time
	// LastResponse is when the newest response arrived; nil when there is none.
	LastResponse *relativeTime
}

// relativeTime is a past moment as a person reads it at a glance ("3 hours ago"); the page
// gives the exact time in the <time> element's datetime and title.
type relativeTime struct {
	At  time.Time
	Ago string
}

// ago says how long before now t was, in the largest whole unit: "just now", "5 minutes ago",
// "3 hours ago", "2 days ago", "4 months ago", "1 year ago". A t after now (clocks of two
// servers) is "just now".
func ago(t, now time.Time) string {
	d := now.Sub(t)
	unit := func(n int, name string) string {
		if n == 1 {
			return "1 " + name + " ago"
		}
		return strconv.Itoa(n) + " " + name + "s ago"
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return unit(int(d/time.Hour), "hour")
	case d < 30*24*time.Hour:
		return unit(int(d/(24*time.Hour)), "day")
	case d < 365*24*time.Hour:
		return unit(int(d/(30*24*time.Hour)), "month")
	}
	return unit(int(d/(365*24*time.Hour)), "year")
}

type formsData struct {
	Forms    []formRow
	Pager    pager
	Query    string
	Status   string
	Filters  []statusFilter
	CanWrite bool
}

// statusFilter is one link of the forms list's status filter.
type statusFilter struct {
	Label, Href string
	Current     bool
}

// formStatusFilters are the list's filters, in the order shown: the label and ?status= value
// ("" for every form).
var formStatusFilters = []struct{ label, status string }{
	{"All", ""}, {"Drafts", string(form.StatusDraft)}, {"Published", string(form.StatusPublished)}, {"Archived", string(form.StatusArchived)},
}

// statusFilters makes the filter links for the list at status, keeping the search words q.
func statusFilters(status, q string) []statusFilter {
	out := make([]statusFilter, 0, len(formStatusFilters))
	for _, f := range formStatusFilters {
		v := url.Values{}
		if f.status != "" {
			v.Set("status", f.status)
		}
		if q != "" {
			v.Set("q", q)
		}
		out = append(out, statusFilter{Label: f.label, Href: pathWith("/app/forms", v), Current: f.status == status})
	}
	return out
}

func statusClass(s form.Status) string {
	switch s {
	case form.StatusPublished:
		return "badge-green"
	case form.StatusArchived:
		return "badge-red"
	}
	return "badge-amber"
}

// forms lists the workspace's forms with their submission counts; ?q= keeps those whose name
// contains the words (case-insensitive), reading pages until one is full.
func (h *Handler) forms(c *gin.Context) {
	h.formsList(c, http.StatusOK, nil)
}

func (h *Handler) formsList(c *gin.Context, status int, v *view) {
	p := principal(c)
	q := strings.TrimSpace(c.Query("q"))
	page := pageOf(c)
	d := formsData{Query: q, CanWrite: p.Allows(access.Write)}
	if v == nil {
		v = &view{}
	}
	var only *form.Status
	if raw := c.Query("status"); raw != "" {
		st, ok := form.ParseStatus(raw)
		if !ok {
			status = http.StatusBadRequest
			v.Error = "There is no status “" + raw + "”: choose All, Drafts, Published or Archived. Every form is shown."
		} else {
			only, d.Status = &st, raw
		}
	}
	d.Filters = statusFilters(d.Status, q)
	var last forms.FormView
	more := false
	for {
		views, m, err := h.app.Queries.ListForms.Handle(c.Request.Context(), forms.ListForms{Status: only, Page: page})
		if err != nil {
			h.fail(c, err)
			return
		}
		more = m
		for _, fv := range views {
			last = fv
			f := fv.Form
			if q != "" && !strings.Contains(strings.ToLower(f.Name()), strings.ToLower(q)) {
				continue
			}
			d.Forms = append(d.Forms, formRow{ID: f.ID(), Name: f.Name(), Status: string(f.Status()), StatusClass: statusClass(f.Status()),
				Submissions: fv.SubmissionCount, Published: f.Status() == form.StatusPublished, Updated: f.UpdatedAt()})
			if len(d.Forms) == pageSize {
				break
			}
		}
		if len(d.Forms) >= pageSize || !more || q == "" {
			break
		}
		page.After = &ports.Position{CreatedAt: last.Form.CreatedAt(), ID: last.Form.ID()}
	}
	if err := h.addLastResponses(c, d.Forms); err != nil {
		h.fail(c, err)
		return
	}
	if last.Form != nil {
		d.Pager = pagerFor(c, more || len(d.Forms) == pageSize && q != "", last.Form.CreatedAt(), last.Form.ID())
	}
	v.Title, v.Data = "Forms", d
	h.render(c, status, "forms", v)
}

// addLastResponses fills in when each shown form last received a response: one query for the
// page, an index lookup per form.
func (h *Handler) addLastResponses(c *gin.Context, rows []formRow) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	last, err := h.app.Queries.LastSubmissionTimes.Handle(c.Request.Context(), forms.LastSubmissionTimes{
		FormIDs: ids})
	if err != nil {
		return err
	}
	now := h.now()
	for i := range rows {
		if at, ok := last[rows[i].ID]; ok {
			rows[i].LastResponse = &relativeTime{At: at, Ago: ago(at, now)}
		}
	}
	return nil
}

// createForm makes an empty draft and opens the builder.
func (h *Handler) createForm(c *gin.Context) {
	name := c.PostForm("name")
	fv, err := h.app.Commands.CreateForm.Handle(c.Request.Context(), forms.CreateForm{Draft: form.Draft{Name: name}})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		v := &view{Form: map[string]string{"name": name}}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"name": "name"})
		h.formsList(c, b.Status, v)
		return
	}
	h.redirect(c, "/app/forms/"+fv.Form.ID(), "Form created. Add its first field.")
}

// duplicateForm copies a form's fields and settings into a new draft.
func (h *Handler) duplicateForm(c *gin.Context) {
	src, ok := h.loadForm(c)
	if !ok {
		return
	}
	f := src.Form
	specs := specsOf(f.Fields())
	for i := range specs {
		specs[i].ID = ""
		if specs[i].ShowIf != nil {
			// Rules name earlier fields by key, since the copies get new IDs.
			for j, cond := range specs[i].ShowIf.Conditions {
				if ref, ok := f.Field(cond.FieldID); ok {
					specs[i].ShowIf.Conditions[j].FieldID = ref.Key
				}
			}
		}
	}
	s := f.Settings()
	name := []rune("Copy of " + f.Name())
	if len(name) > 200 {
		name = name[:200]
	}
	fv, err := h.app.Commands.CreateForm.Handle(c.Request.Context(), forms.CreateForm{
		Draft: form.Draft{Name: string(name), Description: f.Description(), Fields: specs, Settings: &s}})
	if err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/forms/"+fv.Form.ID(), "Form duplicated. The copy is a draft.")
}

func (h *Handler) deleteFormConfirm(c *gin.Context) {
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return
	}
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	d := confirmData{Heading: "Delete " + fv.Form.Name() + "?", Action: "/app/forms/" + fv.Form.ID() + "/delete", Button: "Delete form",
		Cancel: "/app/forms", Danger: true, Paragraphs: []string{
			fmt.Sprintf("This deletes the form, its %d responses and their files, its workflows and the webhooks bound to it.", fv.SubmissionCount),
			"This cannot be undone."}}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Delete form", Data: d})
}

func (h *Handler) deleteForm(c *gin.Context) {
	if err := h.app.Commands.DeleteForm.Handle(c.Request.Context(), forms.DeleteForm{ID: c.Param("id")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/forms", "Form deleted.")
}

func (h *Handler) loadForm(c *gin.Context) (forms.FormView, bool) {
	fv, err := h.app.Queries.GetForm.Handle(c.Request.Context(), forms.GetForm{ID: c.Param("id")})
	if err != nil {
		h.fail(c, err)
		return fv, false
	}
	return fv, true
}

// specsOf turns stored fields back into the specs a patch sends, so that an unchanged field
// stays exactly as it is.
func specsOf(fields []form.Field) []form.FieldSpec {
	out := make([]form.FieldSpec, len(fields))
	for i, f := range fields {
		key, page := f.Key, f.Page
		s := form.FieldSpec{ID: f.ID, Label: f.Label, Type: string(f.Type), Required: f.Required, Options: append([]string(nil), f.Options...),
			Placeholder: f.Placeholder, Accept: append([]string(nil), f.Accept...), Key: &key, Hidden: f.Hidden}
		if page > 1 {
			s.Page = &page
		}
		if f.MaxFileBytes > 0 {
			n := f.MaxFileBytes
			s.MaxFileBytes = &n
		}
		if f.ShowIf != nil {
			r := &form.ShowIfSpec{Match: f.ShowIf.Match()}
			for _, cond := range f.ShowIf.Conditions {
				cs := form.ConditionSpec{FieldID: cond.FieldID, Operator: cond.Operator, HasValue: true, Value: cond.Value}
				switch cond.Kind {
				case "number":
					cs.Value = json.Number(cond.Value)
				case "boolean":
					cs.Value = cond.Value == "true"
				}
				r.Conditions = append(r.Conditions, cs)
			}
			s.ShowIf = r
		}
		out[i] = s
	}
	return out
}

// fieldTypes are the nine types as the builder offers them.
var fieldTypes = []struct{ Value, Label string }{
	{"text", "Short text"}, {"textarea", "Long text"}, {"email", "Email"}, {"number", "Number"}, {"date", "Date"},
	{"dropdown", "Dropdown"}, {"radio", "Single choice (radio)"}, {"checkbox", "Checkboxes"}, {"file", "File upload"},
}

func typeLabel(t form.FieldType) string {
	for _, ft := range fieldTypes {
		if ft.Value == string(t) {
			return ft.Label
		}
	}
	return string(t)
}

// fieldRow is one field in the builder with its errors by property.
type fieldRow struct {
	Index                            int
	ID, Label, Type, TypeLabel, Key  string
	Placeholder, Options, Accept     string
	MaxFileMB                        string
	Required, HasOptions, IsFile, Ph bool
	First, Last                      bool
	Errors                           map[string]string
	Open                             bool
}

type builderData struct {
	ID, Name, Status, StatusClass string
	Submissions                   int64
	CanWrite                      bool
	Fields                        []fieldRow
	Types                         []struct{ Value, Label string }
	FieldsError                   string
	Settings                      settingsForm
	SettingsErrors                map[string]string
	PublicURL, IframeSnippet      string
	// JSONSnippet is the recipe that posts JSON from the site's own HTML with a script.
	JSONSnippet string
	// FormSnippet is a plain HTML form that posts to the form (form-backend mode).
	FormSnippet string
	// QR is a data: URL of a PNG this package drew.
	QR                          template.URL
	Published, Archived         bool
	AddType, AddLabel, AddError string
	AddErrors                   map[string]string
	// Appearances are the theme's appearance choices.
	Appearances []struct{ Value, Label string }
}

type settingsForm struct {
	Name, ThankYou, Redirect, MinFill           string
	Honeypot, ProofOfWork                       bool
	FrameAncestors, CORSOrigins, AllowedOrigins string
	// Accent is the theme's accent as typed ("" for the page's own blue); Appearance is
	// light, dark or auto.
	Accent, Appearance string
	// Logo is the URL of the current logo ("" without one), with its size in pixels.
	Logo                  string
	LogoWidth, LogoHeight int
}

// appearances are the theme's appearance choices, in the order shown.
var appearances = []struct{ Value, Label string }{
	{string(form.AppearanceLight), "Light"}, {string(form.AppearanceDark), "Dark"}, {string(form.AppearanceAuto), "Follow the respondent's device"},
}

func settingsFormOf(f *form.Form) settingsForm {
	s := f.Settings()
	return settingsForm{Name: f.Name(), ThankYou: deref(s.ThankYouMessage), Redirect: deref(s.RedirectURL), MinFill: strconv.Itoa(s.Spam.MinFillSeconds),
		Honeypot: s.Spam.Honeypot, ProofOfWork: s.Spam.ProofOfWork, FrameAncestors: strings.Join(form.OriginStrings(s.Embed.FrameAncestors), "\n"),
		CORSOrigins: strings.Join(form.OriginStrings(s.Embed.CORSOrigins), "\n"), AllowedOrigins: strings.Join(form.OriginStrings(s.AllowedOrigins), "\n"),
		Accent: deref(s.Theme.Accent), Appearance: string(s.Theme.Appearance)}.withLogo(f)
}

// withLogo fills in the form's current logo (a failed post keeps what was typed, but the logo
// is the stored one).
func (sf settingsForm) withLogo(f *form.Form) settingsForm {
	sf.Logo, sf.LogoWidth, sf.LogoHeight = "", 0, 0
	if l := f.Settings().Theme.Logo; l != nil {
		sf.Logo, sf.LogoWidth, sf.LogoHeight = httpkit.FormLogoPath(f.ID(), l.Version), l.Width, l.Height
	}
	if sf.Appearance == "" {
		sf.Appearance = string(form.AppearanceLight)
	}
	return sf
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// builderState lets a failed post draw the builder again with what was typed and the errors.
type builderState struct {
	status   int
	fields   []form.FieldSpec // as posted, when the fields failed
	fieldErr map[int]map[string]string
	open     string
	rest     string
	settings *settingsForm
	setErr   map[string]string
	add      [2]string
	addErr   map[string]string
}

func (h *Handler) builder(c *gin.Context) {
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	h.drawBuilder(c, fv, builderState{status: http.StatusOK, open: c.Query("field")})
}

func (h *Handler) drawBuilder(c *gin.Context, fv forms.FormView, st builderState) {
	f := fv.Form
	p := principal(c)
	d := builderData{ID: f.ID(), Name: f.Name(), Status: string(f.Status()), StatusClass: statusClass(f.Status()), Submissions: fv.SubmissionCount,
		CanWrite: p.Allows(access.Write), Published: f.Status() == form.StatusPublished, Archived: f.Status() == form.StatusArchived,
		FieldsError: st.rest, SettingsErrors: st.setErr, AddType: st.add[0], AddLabel: st.add[1], AddErrors: st.addErr}
	d.Types = fieldTypes
	d.Appearances = appearances
	specs := st.fields
	if specs == nil {
		specs = specsOf(f.Fields())
	}
	for i, s := range specs {
		t, _ := form.ParseFieldType(s.Type)
		r := fieldRow{Index: i, ID: s.ID, Label: s.Label, Type: s.Type, TypeLabel: typeLabel(t), Placeholder: deref(s.Placeholder),
			Options: strings.Join(s.Options, "\n"), Accept: strings.Join(s.Accept, ", "), Required: s.Required,
			HasOptions: t == form.TypeDropdown || t == form.TypeRadio || t == form.TypeCheckbox, IsFile: t == form.TypeFile,
			Ph:    t == form.TypeText || t == form.TypeTextarea || t == form.TypeEmail || t == form.TypeNumber,
			First: i == 0, Last: i == len(specs)-1, Errors: st.fieldErr[i]}
		if s.Key != nil {
			r.Key = *s.Key
		}
		if s.MaxFileBytes != nil && *s.MaxFileBytes > 0 {
			r.MaxFileMB = strconv.FormatFloat(float64(*s.MaxFileBytes)/(1<<20), 'f', -1, 64)
		}
		r.Open = len(r.Errors) > 0 || (st.open != "" && st.open == s.ID)
		d.Fields = append(d.Fields, r)
	}
	if st.settings != nil {
		d.Settings = *st.settings
	} else {
		d.Settings = settingsFormOf(f)
	}
	d.PublicURL = h.publicLink(f.ID())
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

// preview draws the public page of the form with the public template, for any status, so the
// builder can frame it; only the dashboard itself may frame it.
func (h *Handler) preview(c *gin.Context) {
	if h.renderPreview == nil {
		h.notFound(c)
		return
	}
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	var buf bytes.Buffer
	if err := h.renderPreview(&buf, fv.Form); err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Content-Security-Policy", strings.Replace(contentSecurityPolicy, "frame-ancestors 'none'", "frame-ancestors 'self'", 1))
	c.Header("X-Frame-Options", "SAMEORIGIN")
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
}

// patchFields sends the whole field list; a 422 draws the builder with each error next to its
// control (domain paths fields[i].property).
func (h *Handler) patchFields(c *gin.Context, fv forms.FormView, specs []form.FieldSpec, open, notice, anchor string) {
	err := h.updateForm(c, fv.Form.ID(), form.Patch{Fields: &specs})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		st := builderState{status: b.Status, fields: specs, fieldErr: map[int]map[string]string{}, open: open}
		var rest []string
		for _, d := range b.Details {
			var i int
			var prop string
			if n, _ := fmt.Sscanf(strings.Replace(d.Field, "].", "] ", 1), "fields[%d] %s", &i, &prop); n == 2 && i < len(specs) {
				prop, _, _ = strings.Cut(prop, "[")
				prop, _, _ = strings.Cut(prop, ".")
				if st.fieldErr[i] == nil {
					st.fieldErr[i] = map[string]string{}
				}
				if st.fieldErr[i][prop] == "" {
					st.fieldErr[i][prop] = sentence(d.Message)
				}
				continue
			}
			rest = append(rest, sentence(d.Message))
		}
		st.rest = strings.Join(rest, " ")
		h.drawBuilder(c, fv, st)
		return
	}
	to := "/app/forms/" + fv.Form.ID()
	if open != "" {
		to += "?field=" + url.QueryEscape(open)
	}
	h.redirect(c, to+anchor, notice)
}

// updateForm applies patch to the form.
func (h *Handler) updateForm(c *gin.Context, id string, patch form.Patch) error {
	_, err := h.app.Commands.UpdateForm.Handle(c.Request.Context(), forms.UpdateForm{ID: id, Patch: patch})
	return err
}

func (h *Handler) editable(c *gin.Context) (forms.FormView, bool) {
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return forms.FormView{}, false
	}
	return h.loadForm(c)
}

// editableField loads the form for a change (Write) and finds the field of the route's :fid in
// its specs; it has answered the request when ok is false.
func (h *Handler) editableField(c *gin.Context) (fv forms.FormView, specs []form.FieldSpec, i int, ok bool) {
	if fv, ok = h.editable(c); !ok {
		return fv, nil, -1, false
	}
	specs = specsOf(fv.Form.Fields())
	if i = fieldAt(specs, c.Param("fid")); i < 0 {
		h.notFound(c)
		return fv, nil, -1, false
	}
	return fv, specs, i, true
}

func (h *Handler) addField(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	typ, label := c.PostForm("type"), strings.TrimSpace(c.PostForm("label"))
	spec := form.FieldSpec{Type: typ, Label: label}
	if t, _ := form.ParseFieldType(typ); t == form.TypeDropdown || t == form.TypeRadio {
		spec.Options = []string{"Option 1", "Option 2"}
	}
	specs := append(specsOf(fv.Form.Fields()), spec)
	err := h.updateForm(c, fv.Form.ID(), form.Patch{Fields: &specs})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		st := builderState{status: b.Status, add: [2]string{typ, label}, addErr: map[string]string{}}
		var rest []string
		last := fmt.Sprintf("fields[%d].", len(specs)-1)
		for _, d := range b.Details {
			if prop, ok := strings.CutPrefix(d.Field, last); ok && (prop == "label" || prop == "type") {
				st.addErr[prop] = sentence(d.Message)
				continue
			}
			rest = append(rest, sentence(d.Message))
		}
		st.rest = strings.Join(rest, " ")
		h.drawBuilder(c, fv, st)
		return
	}
	h.redirect(c, "/app/forms/"+fv.Form.ID()+"#fields", label+" added.")
}

// fieldAt finds the field of the path in the form's specs.
func fieldAt(specs []form.FieldSpec, id string) int {
	for i, s := range specs {
		if s.ID == id {
			return i
		}
	}
	return -1
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (h *Handler) saveField(c *gin.Context) {
	fv, specs, i, ok := h.editableField(c)
	if !ok {
		return
	}
	s := &specs[i]
	s.Label = c.PostForm("label")
	s.Required = c.PostForm("required") != ""
	t, _ := form.ParseFieldType(s.Type)
	if _, ok := c.GetPostForm("placeholder"); ok {
		if ph := c.PostForm("placeholder"); ph != "" {
			s.Placeholder = &ph
		} else {
			s.Placeholder = nil
		}
	}
	if _, ok := c.GetPostForm("options"); ok {
		s.Options = lines(c.PostForm("options"))
	}
	if t == form.TypeFile {
		s.Accept = nil
		for _, a := range strings.Split(c.PostForm("accept"), ",") {
			if a = strings.TrimSpace(a); a != "" {
				s.Accept = append(s.Accept, a)
			}
		}
		s.MaxFileBytes = nil
		if mb := strings.TrimSpace(c.PostForm("max_file_mb")); mb != "" {
			n, err := strconv.ParseFloat(mb, 64)
			if err != nil || n <= 0 || n > 1<<20 {
				h.drawBuilder(c, fv, builderState{status: http.StatusUnprocessableEntity, fields: specs,
					fieldErr: map[int]map[string]string{i: {"max_file_bytes": "Enter a size in megabytes, such as 10 or 2.5."}}})
				return
			}
			b := int64(n * (1 << 20))
			s.MaxFileBytes = &b
		}
	}
	h.patchFields(c, fv, specs, s.ID, "Field saved.", "#field-"+s.ID)
}

func (h *Handler) moveField(c *gin.Context) {
	fv, specs, i, ok := h.editableField(c)
	if !ok {
		return
	}
	j := i - 1
	if c.PostForm("direction") == "down" {
		j = i + 1
	}
	if j < 0 || j >= len(specs) {
		h.redirect(c, "/app/forms/"+fv.Form.ID()+"#field-"+specs[i].ID, "")
		return
	}
	specs[i], specs[j] = specs[j], specs[i]
	h.patchFields(c, fv, specs, "", fmt.Sprintf("%s moved to position %d of %d.", specs[j].Label, j+1, len(specs)), "#field-"+specs[j].ID)
}

func (h *Handler) removeField(c *gin.Context) {
	fv, specs, i, ok := h.editableField(c)
	if !ok {
		return
	}
	label := specs[i].Label
	specs = append(specs[:i], specs[i+1:]...)
	h.patchFields(c, fv, specs, "", label+" removed.", "#fields")
}

// reorderFields takes the full new order (order=fld_a,fld_b,…), as the drag and drop sends it.
func (h *Handler) reorderFields(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	specs := specsOf(fv.Form.Fields())
	ids := strings.Split(c.PostForm("order"), ",")
	if len(ids) != len(specs) {
		h.fail(c, fmt.Errorf("reorder: %w", errBadOrder))
		return
	}
	next := make([]form.FieldSpec, 0, len(specs))
	for _, id := range ids {
		i := fieldAt(specs, strings.TrimSpace(id))
		if i < 0 {
			h.fail(c, fmt.Errorf("reorder: %w", errBadOrder))
			return
		}
		next = append(next, specs[i])
		specs[i].ID = "" // taken
	}
	h.patchFields(c, fv, next, "", "Fields reordered.", "#fields")
}

func (h *Handler) saveFormSettings(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	f := fv.Form
	sf := settingsForm{Name: c.PostForm("name"), ThankYou: c.PostForm("thank_you_message"), Redirect: strings.TrimSpace(c.PostForm("redirect_url")),
		MinFill: strings.TrimSpace(c.PostForm("min_fill_seconds")), Honeypot: c.PostForm("honeypot") != "", ProofOfWork: c.PostForm("proof_of_work") != "",
		FrameAncestors: c.PostForm("frame_ancestors"), CORSOrigins: c.PostForm("cors_origins"), AllowedOrigins: c.PostForm("allowed_origins"),
		Accent: strings.TrimSpace(c.PostForm("accent")), Appearance: c.PostForm("appearance")}
	s := f.Settings()
	if _, posted := c.GetPostForm("accent"); posted { // a post without the control keeps the accent
		s.Theme.Accent = nil
		if sf.Accent != "" {
			s.Theme.Accent = &sf.Accent
		}
	} else {
		sf.Accent = deref(s.Theme.Accent)
	}
	if sf.Appearance == "" {
		sf.Appearance = string(s.Theme.Appearance) // a post without the choice keeps it
	}
	s.Theme.Appearance = form.Appearance(sf.Appearance)
	s.ThankYouMessage, s.RedirectURL = nil, nil
	if strings.TrimSpace(sf.ThankYou) != "" {
		s.ThankYouMessage = &sf.ThankYou
	}
	if sf.Redirect != "" {
		s.RedirectURL = &sf.Redirect
	}
	s.Spam.Honeypot, s.Spam.ProofOfWork = sf.Honeypot, sf.ProofOfWork
	n, err := strconv.Atoi(sf.MinFill)
	if sf.MinFill == "" {
		n, err = 0, nil
	}
	if err != nil {
		n = -1 // the domain names the range
	}
	s.Spam.MinFillSeconds = n
	// Origins are read as the API reads them (origin.Parse); a list that does not parse is
	// answered like the domain's own refusals, next to its control.
	var vs domain.Violations
	s.Embed.FrameAncestors = form.ParseOrigins(&vs, "settings.embed.frame_ancestors", lines(sf.FrameAncestors))
	s.Embed.CORSOrigins = form.ParseOrigins(&vs, "settings.embed.cors_origins", lines(sf.CORSOrigins))
	s.AllowedOrigins = form.ParseOrigins(&vs, "settings.allowed_origins", lines(sf.AllowedOrigins))
	name := sf.Name
	var ve *domain.ValidationError
	if len(vs) > 0 && errors.As(form.CheckSettings(s), &ve) {
		vs = append(vs, ve.Violations...) // the other settings' problems, shown in the same answer
	}
	err = vs.Err()
	if err == nil {
		err = h.updateForm(c, f.ID(), form.Patch{Name: &name, Settings: &s})
	}
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		errs := map[string]string{}
		var other []string
		for _, d := range b.Details {
			ctl := settingsControl(d.Field)
			if ctl == "" {
				other = append(other, sentence(d.Message))
			} else if errs[ctl] == "" {
				errs[ctl] = sentence(d.Message)
			}
		}
		sf = sf.withLogo(f)
		h.drawBuilder(c, fv, builderState{status: b.Status, settings: &sf, setErr: errs, rest: strings.Join(other, " ")})
		return
	}
	h.redirect(c, "/app/forms/"+f.ID()+"#settings", "Settings saved.")
}

// uploadLogo sets the form's logo from the posted file (POST /app/forms/{id}/logo, multipart):
// its type is detected from its bytes, and a refused file changes nothing; the rest of the
// settings is a form of its own, so nothing typed there is lost.
func (h *Handler) uploadLogo(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	f := fv.Form
	refuse := func(status int, msg string) {
		sf := settingsFormOf(f)
		h.drawBuilder(c, fv, builderState{status: status, settings: &sf, setErr: map[string]string{"logo": msg}})
	}
	// The post is the file and the form's few fields: a little over the logo limit.
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, form.MaxLogoBytes+64<<10)
	fh, err := c.FormFile("logo")
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("The logo is larger than %d KB. Choose a smaller image.", form.MaxLogoBytes>>10))
		return
	case err != nil:
		refuse(http.StatusUnprocessableEntity, "Choose an image file to upload as the logo.")
		return
	}
	file, err := fh.Open()
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The logo could not be read. Please try again.")
		return
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, form.MaxLogoBytes+1))
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The logo could not be read. Please try again.")
		return
	}
	if _, err := h.app.Commands.SetFormLogo.Handle(c.Request.Context(), forms.SetFormLogo{ID: f.ID(), Data: data}); err != nil {
		if errors.Is(err, forms.ErrNoObjectStore) {
			refuse(http.StatusUnprocessableEntity, "Logos need file storage, and none is configured on this server.")
			return
		}
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		msg := "The logo was not accepted."
		if len(b.Details) > 0 {
			msg = sentence(b.Details[0].Message)
		}
		refuse(b.Status, msg)
		return
	}
	h.redirect(c, "/app/forms/"+f.ID()+"#s-logo", "Logo uploaded.")
}

// removeLogo takes the logo off the form (POST /app/forms/{id}/logo/remove).
func (h *Handler) removeLogo(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	if _, err := h.app.Commands.RemoveFormLogo.Handle(c.Request.Context(), forms.RemoveFormLogo{ID: fv.Form.ID()}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/forms/"+fv.Form.ID()+"#s-logo", "Logo removed.")
}

// settingsControl names the settings control a domain path belongs to.
func settingsControl(path string) string {
	for _, m := range []struct{ prefix, control string }{
		{"name", "name"}, {"settings.thank_you_message", "thank_you_message"}, {"settings.redirect_url", "redirect_url"},
		{"settings.spam.min_fill_seconds", "min_fill_seconds"}, {"settings.embed.frame_ancestors", "frame_ancestors"},
		{"settings.embed.cors_origins", "cors_origins"}, {"settings.allowed_origins", "allowed_origins"},
		{"settings.theme.accent", "accent"}, {"settings.theme.appearance", "appearance"}, {"settings.theme.logo", "logo"},
	} {
		if path == m.prefix || strings.HasPrefix(path, m.prefix+"[") || strings.HasPrefix(path, m.prefix+".") {
			return m.control
		}
	}
	return ""
}

// changeFormStatusConfirm asks before a live form leaves publication (?to=archived or
// ?to=draft): its public link stops taking responses.
func (h *Handler) changeFormStatusConfirm(c *gin.Context) {
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return
	}
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	f, to := fv.Form, c.Query("to")
	back := "/app/forms/" + f.ID()
	var d confirmData
	switch to {
	case string(form.StatusArchived):
		d = confirmData{Heading: "Archive " + f.Name() + "?", Button: "Archive form", Paragraphs: []string{
			"Archived forms take no responses and leave the list of live forms. Publish it again to reopen it."}}
	case string(form.StatusDraft):
		d = confirmData{Heading: "Move " + f.Name() + " back to draft?", Button: "Move back to draft", Paragraphs: []string{
			"A draft takes no responses. Publish it again when it is ready."}}
	default:
		h.redirect(c, back, "Choose Archive or Back to draft on the form's page.")
		return
	}
	if f.Status() == form.StatusPublished {
		d.Paragraphs = append([]string{fmt.Sprintf("The form is live. Its public link, %s, stops taking responses at once: "+
			"anyone filling it in now, and every page that embeds it, can no longer submit.", h.publicLink(f.ID()))}, d.Paragraphs...)
	}
	d.Paragraphs = append(d.Paragraphs, "Its "+plural(int(fv.SubmissionCount), "response")+" and their files stay.")
	d.Action, d.Cancel, d.Danger = back+"/status", back, true
	d.Hidden = []hiddenInput{{Name: "status", Value: to}}
	h.render(c, http.StatusOK, "confirm", &view{Title: d.Button, Data: d})
}

// publicLink is the address respondents open the form at.
func (h *Handler) publicLink(formID string) string {
	return strings.TrimRight(h.opts.PublicURL, "/") + "/f/" + formID
}

func (h *Handler) changeFormStatus(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	st := c.PostForm("status")
	err := h.updateForm(c, fv.Form.ID(), form.Patch{Status: &st})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		h.drawBuilder(c, fv, builderState{status: b.Status, rest: friendly(b)})
		return
	}
	notice := map[string]string{"published": "Form published. Respondents can open its link now.",
		"archived": "Form archived. It no longer accepts responses.", "draft": "Form moved back to draft."}[st]
	h.redirect(c, "/app/forms/"+fv.Form.ID(), notice)
}
