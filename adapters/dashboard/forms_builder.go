package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/capture"
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
	w.POST("/forms/:id/preview", h.preview)
	w.POST("/forms/:id/duplicate", h.duplicateForm)
	w.GET("/forms/:id/delete", h.deleteFormConfirm)
	w.POST("/forms/:id/delete", h.deleteForm)
	w.POST("/forms/:id/fields", h.addField)
	w.POST("/forms/:id/fields/:fid", h.saveField)
	w.POST("/forms/:id/fields/:fid/move", h.moveField)
	w.POST("/forms/:id/fields/:fid/duplicate", h.duplicateField)
	w.POST("/forms/:id/breaks", h.addBreak)
	w.POST("/forms/:id/breaks/:n", h.changeBreak)
	w.GET("/forms/:id/fields/:fid/remove", h.removeFieldConfirm)
	w.POST("/forms/:id/fields/:fid/remove", h.removeField)
	w.POST("/forms/:id/order", h.reorderFields)
	w.POST("/forms/:id/settings", h.saveFormSettings)
	w.GET("/forms/:id/translations", h.translations)
	w.POST("/forms/:id/translations", h.saveTranslations)
	w.POST("/forms/:id/logo", h.uploadLogo)
	w.POST("/forms/:id/logo/remove", h.removeLogo)
	w.GET("/forms/:id/status", h.changeFormStatusConfirm)
	w.POST("/forms/:id/status", h.changeFormStatus)
}

type formRow struct {
	ID, Name, Status, StatusClass string
	// PublicURL is the share link respondents open.
	PublicURL   string
	Submissions int64
	Published   bool
	Updated     time.Time
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
	// Starts are the choices of "New form": a blank form, then the templates.
	Starts []startChoice
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
	d.Starts = startChoices(v.Form["template"])
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
			d.Forms = append(d.Forms, formRow{ID: f.ID(), Name: f.Name(), PublicURL: h.publicLink(f.ID()), Status: string(f.Status()), StatusClass: statusClass(f.Status()),
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

// blankStart is the "New form" choice of a form without fields.
const blankStart = "blank"

// startChoice is one card of "New form": a blank form or a template.
type startChoice struct {
	ID, Name, Summary string
	Checked           bool
}

// startChoices are the cards of "New form", chosen as chosen ("" is the blank form).
func startChoices(chosen string) []startChoice {
	if chosen == "" {
		chosen = blankStart
	}
	out := []startChoice{{ID: blankStart, Name: "Blank form", Summary: "No questions yet: you add them in the builder.", Checked: chosen == blankStart}}
	for _, t := range form.Templates() {
		out = append(out, startChoice{ID: t.ID, Name: t.Name, Summary: t.Summary, Checked: chosen == t.ID})
	}
	return out
}

// createForm makes a draft, blank or from the chosen template, through the create use case,
// and opens the builder. A template's form takes the template's name when none is typed.
func (h *Handler) createForm(c *gin.Context) {
	name, start := c.PostForm("name"), c.PostForm("template")
	draft := form.Draft{Name: name}
	notice := "Form created. Add its first field."
	if start != "" && start != blankStart {
		t, ok := form.TemplateByID(start)
		if !ok {
			v := &view{Form: map[string]string{"name": name, "template": start}, Errors: map[string]string{"template": "Choose a blank form or one of the templates."}}
			h.formsList(c, http.StatusUnprocessableEntity, v)
			return
		}
		draft = t.Draft(strings.TrimSpace(name))
		notice = "Form created from the " + t.Name + " template. Change its questions as you need."
	}
	fv, err := h.app.Commands.CreateForm.Handle(c.Request.Context(), forms.CreateForm{Draft: draft})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		v := &view{Form: map[string]string{"name": name, "template": start}}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"name": "name"})
		h.formsList(c, b.Status, v)
		return
	}
	h.redirect(c, "/app/forms/"+fv.Form.ID(), notice)
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
	fv, ok := h.editable(c)
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
			Placeholder: f.Placeholder, Help: f.Help, Accept: append([]string(nil), f.Accept...), Key: &key, Hidden: f.Hidden,
			Translations: f.Translations}
		if page > 1 {
			s.Page = &page
		}
		if f.MaxFileBytes > 0 {
			n := f.MaxFileBytes
			s.MaxFileBytes = &n
		}
		if f.Scores != nil {
			sc := append([]float64(nil), f.Scores...)
			s.Scores = &sc
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
	add      addForm
	addErr   map[string]string
	tab      string
	// phone draws the preview at phone width.
	phone bool
	// typedScores are the score boxes as typed, by field index and option, when refused.
	typedScores map[int]map[string]string
}

func (h *Handler) builder(c *gin.Context) {
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	h.drawBuilder(c, fv, builderState{status: http.StatusOK, open: c.Query("field"), phone: c.Query("preview") == "phone"})
}

// preview draws the public page of the form with the public template, for any status, so the
// builder can frame it; only the dashboard itself may frame it. Its Next, Back and Submit post
// back here and step through the pages and the display rules as the public page does, storing
// and counting nothing. Such a post answers with the page drawn (not 303 to a GET page): it
// changes nothing, so a reload repeats nothing.
func (h *Handler) preview(c *gin.Context) {
	if h.renderPreview == nil {
		h.notFound(c)
		return
	}
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	var post *http.Request
	if c.Request.Method == http.MethodPost {
		post = c.Request
	}
	var buf bytes.Buffer
	status, err := h.renderPreview(&buf, fv.Form, "/app/forms/"+fv.Form.ID()+"/preview", post)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Content-Security-Policy", strings.Replace(contentSecurityPolicy, "frame-ancestors 'none'", "frame-ancestors 'self'", 1))
	c.Header("X-Frame-Options", "SAMEORIGIN")
	c.Header("Cache-Control", "no-store")
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
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
				var j int
				if n, _ := fmt.Sscanf(prop, "show_if.conditions[%d]", &j); n == 1 {
					prop = fmt.Sprintf("cond_%d", j) // next to its row of pickers
				}
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
		if fieldAt(specs, "") >= 0 {
			// A refused copy has no ID to draw an edit form for: the stored questions are
			// drawn, with every message at the top.
			for _, errs := range st.fieldErr {
				for _, m := range errs {
					st.rest = strings.TrimSpace(st.rest + " " + m)
				}
			}
			st.fields, st.fieldErr = nil, nil
		}
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

// addField adds a question of any type: at the end of the last page, or right after another
// one (after=<field id>, on that question's page), or as a hidden field (hidden=1, filled
// from the URL by its key).
func (h *Handler) addField(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	typ, label, after := c.PostForm("type"), strings.TrimSpace(c.PostForm("label")), c.PostForm("after")
	spec := form.FieldSpec{Type: typ, Label: label, Hidden: c.PostForm("hidden") != ""}
	if spec.Hidden {
		spec.Type = string(form.TypeText)
		if k := strings.TrimSpace(c.PostForm("key")); k != "" {
			spec.Key = &k
		}
	}
	if t, _ := form.ParseFieldType(typ); t == form.TypeDropdown || t == form.TypeRadio {
		spec.Options = []string{"Option 1", "Option 2"}
	}
	hidden, seq := layoutOf(specsOf(fv.Form.Fields()))
	anchor := "#questions"
	switch at := seq.indexOf(after); {
	case spec.Hidden:
		hidden, anchor = append(hidden, spec), "#hidden"
	case after != "" && at < 0:
		h.fail(c, fmt.Errorf("add field: %w", errBadOrder))
		return
	case at >= 0:
		seq = seq.insert(at+1, &spec)
	default:
		seq = append(seq, &spec)
	}
	specs, err := fieldsOf(hidden, seq)
	if err == nil {
		err = h.updateForm(c, fv.Form.ID(), form.Patch{Fields: &specs})
	}
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		st := builderState{status: b.Status, add: addForm{Type: typ, Label: label, After: after, Hidden: spec.Hidden, Key: c.PostForm("key")}, addErr: map[string]string{}}
		var rest []string
		for _, d := range b.Details {
			var i int
			var prop string
			if n, _ := fmt.Sscanf(strings.Replace(d.Field, "].", "] ", 1), "fields[%d] %s", &i, &prop); n == 2 && i < len(specs) && specs[i].ID == "" &&
				(prop == "label" || prop == "type" || prop == "key") {
				st.addErr[prop] = sentence(d.Message)
				continue
			}
			rest = append(rest, sentence(d.Message))
		}
		st.rest = strings.Join(rest, " ")
		h.drawBuilder(c, fv, st)
		return
	}
	h.redirect(c, "/app/forms/"+fv.Form.ID()+anchor, label+" added.")
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
	if typ, ok := c.GetPostForm("type"); ok {
		s.Type = typ
	}
	if k, ok := c.GetPostForm("key"); ok {
		k = strings.TrimSpace(k)
		s.Key = &k
		if k == "" {
			s.Key = nil // a new default from the label
		}
	}
	if !s.Hidden {
		s.ShowIf = logicOf(c, specs)
	}
	t, _ := form.ParseFieldType(s.Type)
	if _, ok := c.GetPostForm("help"); ok {
		// A textarea posts CRLF line breaks; the help keeps plain LF ones. Blank: no help.
		if hp := strings.TrimSpace(strings.ReplaceAll(c.PostForm("help"), "\r\n", "\n")); hp != "" {
			s.Help = &hp
		} else {
			s.Help = nil
		}
	}
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
	if typed, problem := readScores(c.Request.PostForm, s); problem != "" {
		h.drawBuilder(c, fv, builderState{status: http.StatusUnprocessableEntity, fields: specs,
			fieldErr: map[int]map[string]string{i: {"scores": problem}}, typedScores: map[int]map[string]string{i: typed}})
		return
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

// removeFieldConfirm asks before a field leaves the form, saying how many answers it has and
// that they stay visible as a removed column.
func (h *Handler) removeFieldConfirm(c *gin.Context) {
	fv, specs, i, ok := h.editableField(c)
	if !ok {
		return
	}
	fl := specs[i]
	n, err := h.app.Queries.CountFieldAnswers.Handle(c.Request.Context(), capture.CountFieldAnswers{FormID: fv.Form.ID(), FieldID: fl.ID})
	if err != nil {
		h.fail(c, err)
		return
	}
	back := "/app/forms/" + fv.Form.ID()
	answers := "It has no answers yet."
	if n > 0 {
		answers = fmt.Sprintf("“%s” has %s. They are kept: the responses table, each response and the exports with removed fields "+
			"show them in a “%s%s” column.", fl.Label, plural(int(n), "answer"), fl.Label, capture.RemovedSuffix)
	}
	leaves := "The field leaves the form: respondents no longer see it."
	if fv.Form.Status() == form.StatusPublished {
		leaves = "The field leaves the public form at once: respondents no longer see it."
	}
	d := confirmData{Heading: "Remove “" + fl.Label + "”?", Paragraphs: []string{answers, leaves},
		Action: back + "/fields/" + fl.ID + "/remove", Button: "Remove field", Cancel: back + "#field-" + fl.ID, Danger: true}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Remove field", Data: d})
}

func (h *Handler) removeField(c *gin.Context) {
	fv, specs, i, ok := h.editableField(c)
	if !ok {
		return
	}
	label := specs[i].Label
	specs = append(specs[:i], specs[i+1:]...)
	h.patchFields(c, fv, specs, "", label+" removed.", "#questions")
}

// changeFormStatusConfirm asks before a live form leaves publication (?to=archived or
// ?to=draft): its public link stops taking responses.
func (h *Handler) changeFormStatusConfirm(c *gin.Context) {
	fv, ok := h.editable(c)
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
