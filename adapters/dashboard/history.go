package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// mountHistory adds a form's history: its versions with who made them and what changed, a
// diff between any two, and a restore.
func (h *Handler) mountHistory(w *gin.RouterGroup) {
	w.GET("/forms/:id/history", h.history)
	w.GET("/forms/:id/history/compare", h.compareVersions)
	w.GET("/forms/:id/history/:n/restore", h.restoreVersionConfirm)
	w.POST("/forms/:id/history/:n/restore", h.restoreVersion)
}

// versionRow is one version in the history list.
type versionRow struct {
	Version int
	// Prev is the version before, 0 for version 1.
	Prev    int
	Current bool
	By      string
	At      relativeTime
	Fields  int
	// Summary says in a few words what changed since the version before ("2 added, 1
	// relabelled"); First marks version 1, which changed nothing.
	Summary []string
	First   bool
	// Changes are the changed fields in words, at most historyChangesShown of them.
	Changes []string
	More    int
}

// historyChangesShown bounds the lines of changes one version shows in the list; the diff
// page shows all.
const historyChangesShown = 6

type historyData struct {
	FormID, FormName string
	Tabs             []navItem
	Versions         []versionRow
	Current          int
	CanRestore       bool
	Archived         bool
	// From and To are the compare form's defaults: the version before the current, and the current.
	From, To int
	// All are the version numbers the compare form offers, newest first.
	All []int
	// Older links the next page of older versions; Newer the newest.
	Older, Newer string
}

// historyPageSize is how many versions a page of the history shows.
const historyPageSize = 20

func (h *Handler) history(c *gin.Context) {
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	f := fv.Form
	// One version more than the page shows: the last one shown is compared with it.
	before, _ := strconv.Atoi(c.Query("before"))
	vs, more, err := h.app.Queries.ListFormVersions.Handle(c.Request.Context(), forms.ListFormVersions{ID: f.ID(), Before: max(before, 0), Limit: historyPageSize + 1})
	if err != nil {
		h.fail(c, err)
		return
	}
	now := h.now()
	d := historyData{FormID: f.ID(), FormName: f.Name(), Tabs: formTabs(f.ID(), "history"), Current: f.Version(),
		CanRestore: principal(c).Allows(access.Write), Archived: f.Status() == form.StatusArchived, To: f.Version(), From: f.Version() - 1}
	if d.From < 1 {
		d.From = 1
	}
	for n := f.Version(); n >= 1; n-- {
		d.All = append(d.All, n)
	}
	shown := vs
	if len(vs) > historyPageSize {
		shown, more = vs[:historyPageSize], true
	}
	if more {
		d.Older = fmt.Sprintf("/app/forms/%s/history?before=%d", f.ID(), shown[len(shown)-1].Version)
	}
	if before > 0 {
		d.Newer = "/app/forms/" + f.ID() + "/history"
	}
	for i, v := range shown {
		row := versionRow{Version: v.Version, Prev: v.Version - 1, Current: v.Version == f.Version(), By: versionAuthor(v), At: relativeTime{At: v.CreatedAt, Ago: ago(v.CreatedAt, now)}, Fields: len(v.Fields)}
		// The list is newest first: the version before v is the next one.
		if i+1 < len(vs) && vs[i+1].Version == v.Version-1 {
			diff := form.DiffFields(vs[i+1].Fields, v.Fields)
			row.Summary = diffSummary(diff)
			lines := changeLines(diff)
			if len(lines) > historyChangesShown {
				row.More = len(lines) - historyChangesShown
				lines = lines[:historyChangesShown]
			}
			row.Changes = lines
		} else if v.Version == 1 {
			row.First = true
		}
		d.Versions = append(d.Versions, row)
	}
	h.render(c, http.StatusOK, "history", &view{Title: "History · " + f.Name(), Data: d})
}

// versionAuthor is who made a version as the history shows it.
func versionAuthor(v ports.FormVersion) string {
	if v.CreatedBy == nil {
		return "Unknown (made before the history was kept)"
	}
	if v.CreatedBy.Type == audit.ActorAPIKey {
		return "API key “" + actorName(*v.CreatedBy) + "”"
	}
	return actorName(*v.CreatedBy)
}

// diffSummary counts a diff's changes in words: "1 added", "2 relabelled", "options changed".
func diffSummary(d form.FieldsDiff) []string {
	added, removed, relabelled, changed := d.Count()
	var out []string
	plural := func(n int, what string) {
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, what))
		}
	}
	plural(added, "added")
	plural(removed, "removed")
	plural(relabelled, "relabelled")
	plural(changed, "changed")
	if d.Reordered {
		out = append(out, "reordered")
	}
	if len(out) == 0 {
		out = append(out, "no change to the questions")
	}
	return out
}

// changeLines reads each change of a diff as one sentence, for the history list.
func changeLines(d form.FieldsDiff) []string {
	var out []string
	for _, ch := range d.Changes {
		f := ch.Field()
		switch {
		case ch.Added():
			out = append(out, fmt.Sprintf("Added “%s” (%s)", f.Label, typeLabel(f.Type)))
		case ch.Removed():
			out = append(out, fmt.Sprintf("Removed “%s” (its answers are kept)", f.Label))
		case ch.Relabelled():
			out = append(out, fmt.Sprintf("Relabelled “%s” to “%s”", ch.Before.Label, ch.After.Label))
		default:
			out = append(out, fmt.Sprintf("Changed “%s”: %s", f.Label, strings.Join(aspectWords(ch), ", ")))
		}
	}
	if d.Reordered {
		out = append(out, "Questions reordered")
	}
	return out
}

// aspectWords names what changed on a field, for people.
func aspectWords(ch form.FieldChange) []string {
	words := map[string]string{
		form.AspectLabel: "label", form.AspectKey: "key", form.AspectType: "type", form.AspectRequired: "required",
		form.AspectOptions: "options", form.AspectLogic: "logic", form.AspectHelp: "help text", form.AspectPlaceholder: "placeholder",
		form.AspectPage: "page", form.AspectHidden: "hidden", form.AspectFiles: "file rules", form.AspectScores: "scores", form.AspectOther: "other settings",
		form.AspectTranslations: "translations",
	}
	out := make([]string, 0, len(ch.Aspects))
	for _, a := range ch.Aspects {
		w := words[a]
		if a == form.AspectOptions {
			var parts []string
			if n := len(ch.OptionsAdded); n > 0 {
				parts = append(parts, fmt.Sprintf("%d added", n))
			}
			if n := len(ch.OptionsRemoved); n > 0 {
				parts = append(parts, fmt.Sprintf("%d removed", n))
			}
			if len(parts) == 0 {
				parts = append(parts, "reordered or renamed")
			}
			w += " (" + strings.Join(parts, ", ") + ")"
		}
		out = append(out, w)
	}
	return out
}

// diffRow is one field of the diff page: what it was and what it became, aspect by aspect.
type diffRow struct {
	Label  string
	Key    string
	Status string // added, removed, relabelled, changed, unchanged
	// Lines are the aspects that differ, each with its value before and after.
	Lines []diffLine
}

type diffLine struct {
	What          string
	Before, After template.HTML
	// Added and Removed list the options only one side has.
	Added, Removed []string
}

type compareData struct {
	FormID, FormName string
	Tabs             []navItem
	From, To         int
	Versions         []int
	Rows             []diffRow
	Summary          []string
	Reordered        bool
	Unchanged        int
	// FromOrder and ToOrder are the question labels in order, for a reorder.
	FromOrder, ToOrder []string
}

// compareVersions shows the diff between two versions (?from=&to=, any order).
func (h *Handler) compareVersions(c *gin.Context) {
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	f := fv.Form
	ctx := c.Request.Context()
	from, to := versionParam(c.Query("from"), f.Version()-1), versionParam(c.Query("to"), f.Version())
	d := compareData{FormID: f.ID(), FormName: f.Name(), Tabs: formTabs(f.ID(), "history"), From: from, To: to}
	for n := f.Version(); n >= 1; n-- {
		d.Versions = append(d.Versions, n)
	}
	a, errA := h.app.Queries.GetFormVersion.Handle(ctx, forms.GetFormVersion{ID: f.ID(), Version: from})
	b, errB := h.app.Queries.GetFormVersion.Handle(ctx, forms.GetFormVersion{ID: f.ID(), Version: to})
	if err := errors.Join(errA, errB); err != nil {
		if !errors.Is(err, domain.ErrNotFound) {
			h.fail(c, err)
			return
		}
		h.render(c, http.StatusNotFound, "message", &view{Title: "No such version", Data: message{Heading: "No such version",
			Paragraphs: []string{fmt.Sprintf("This form has versions 1 to %d.", f.Version())},
			Action:     &link{Href: "/app/forms/" + f.ID() + "/history", Label: "Back to the history"}}})
		return
	}
	diff := form.DiffFields(a.Fields, b.Fields)
	d.Summary, d.Reordered, d.Unchanged = diffSummary(diff), diff.Reordered, diff.Unchanged
	beforeSpecs, afterSpecs := specsOf(a.Fields), specsOf(b.Fields)
	for _, ch := range diff.Changes {
		d.Rows = append(d.Rows, diffRowOf(ch, beforeSpecs, afterSpecs))
	}
	if diff.Reordered {
		for _, fl := range a.Fields {
			d.FromOrder = append(d.FromOrder, fl.Label)
		}
		for _, fl := range b.Fields {
			d.ToOrder = append(d.ToOrder, fl.Label)
		}
	}
	h.render(c, http.StatusOK, "history_compare", &view{Title: fmt.Sprintf("Version %d and %d · %s", from, to, f.Name()), Data: d})
}

// versionParam reads a version number from the query, def when absent or not a number.
func versionParam(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	if def < 1 {
		return 1
	}
	return def
}

func diffRowOf(ch form.FieldChange, beforeSpecs, afterSpecs []form.FieldSpec) diffRow {
	f := ch.Field()
	r := diffRow{Label: f.Label, Key: f.Key}
	switch {
	case ch.Added():
		r.Status = "added"
		r.Lines = []diffLine{{What: "Type", After: text(typeLabel(f.Type))}}
		return r
	case ch.Removed():
		r.Status = "removed"
		r.Lines = []diffLine{{What: "Type", Before: text(typeLabel(f.Type))}}
		return r
	case ch.Relabelled():
		r.Status = "relabelled"
	default:
		r.Status = "changed"
	}
	b, a := *ch.Before, *ch.After
	for _, aspect := range ch.Aspects {
		l := diffLine{}
		switch aspect {
		case form.AspectLabel:
			l.What, l.Before, l.After = "Label", text(b.Label), text(a.Label)
		case form.AspectKey:
			l.What, l.Before, l.After = "Key", text(b.Key), text(a.Key)
		case form.AspectType:
			l.What, l.Before, l.After = "Type", text(typeLabel(b.Type)), text(typeLabel(a.Type))
		case form.AspectRequired:
			l.What, l.Before, l.After = "Required", text(yesNo(b.Required)), text(yesNo(a.Required))
		case form.AspectOptions:
			l.What, l.Before, l.After = "Options", text(strings.Join(b.Options, ", ")), text(strings.Join(a.Options, ", "))
			l.Added, l.Removed = ch.OptionsAdded, ch.OptionsRemoved
		case form.AspectLogic:
			l.What, l.Before, l.After = "Logic", ruleOf(b.ID, beforeSpecs), ruleOf(a.ID, afterSpecs)
		case form.AspectHelp:
			l.What, l.Before, l.After = "Help text", text(deref(b.Help)), text(deref(a.Help))
		case form.AspectPlaceholder:
			l.What, l.Before, l.After = "Placeholder", text(deref(b.Placeholder)), text(deref(a.Placeholder))
		case form.AspectPage:
			l.What, l.Before, l.After = "Page", text(strconv.Itoa(b.Page)), text(strconv.Itoa(a.Page))
		case form.AspectHidden:
			l.What, l.Before, l.After = "Hidden", text(yesNo(b.Hidden)), text(yesNo(a.Hidden))
		case form.AspectFiles:
			l.What, l.Before, l.After = "File rules", text(fileRules(b)), text(fileRules(a))
		case form.AspectTranslations:
			l.What, l.Before, l.After = "Translations", text(translatedInto(b)), text(translatedInto(a))
		case form.AspectScores:
			l.What, l.Before, l.After = "Scores", text(scoresText(b.Scores)), text(scoresText(a.Scores))
		default:
			l.What, l.Before, l.After = "Other settings", text("as before"), text("changed")
		}
		r.Lines = append(r.Lines, l)
	}
	return r
}

// ruleOf reads the display rule of the field with the ID in words, or "Always shown".
func ruleOf(id string, specs []form.FieldSpec) template.HTML {
	if i := fieldAt(specs, id); i >= 0 && specs[i].ShowIf != nil {
		return logicSentence(specs[i].ShowIf, specs)
	}
	return "Always shown"
}

func fileRules(f form.Field) string {
	var parts []string
	if len(f.Accept) > 0 {
		parts = append(parts, strings.Join(f.Accept, ", "))
	} else {
		parts = append(parts, "any type")
	}
	if f.MaxFileBytes > 0 {
		parts = append(parts, "at most "+bytesText(f.MaxFileBytes))
	}
	return strings.Join(parts, ", ")
}

// text is plain text for a diff cell, escaped; "—" when empty.
func text(s string) template.HTML {
	if s == "" {
		return "—"
	}
	return template.HTML(template.HTMLEscapeString(s)) // #nosec G203 -- escaped here
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

// restoreVersionConfirm asks before a restore, saying what it does to the questions.
func (h *Handler) restoreVersionConfirm(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	f := fv.Form
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil {
		h.notFound(c)
		return
	}
	v, err := h.app.Queries.GetFormVersion.Handle(c.Request.Context(), forms.GetFormVersion{ID: f.ID(), Version: n})
	if err != nil {
		h.fail(c, err)
		return
	}
	diff := form.DiffFields(f.Fields(), v.Fields)
	paras := []string{fmt.Sprintf("The questions become those of version %d (%d questions), saved as a new version %d. Nothing is deleted: every stored answer stays, and the history keeps every version.", n, len(v.Fields), f.Version()+1)}
	if !diff.Empty() {
		paras = append(paras, "Compared with now: "+strings.Join(diffSummary(diff), ", ")+".")
	}
	d := confirmData{Heading: fmt.Sprintf("Restore version %d of %s?", n, f.Name()), Action: fmt.Sprintf("/app/forms/%s/history/%d/restore", f.ID(), n),
		Button: fmt.Sprintf("Restore version %d", n), Cancel: "/app/forms/" + f.ID() + "/history", Paragraphs: paras}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Restore a version", Data: d})
}

func (h *Handler) restoreVersion(c *gin.Context) {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil {
		h.notFound(c)
		return
	}
	id := c.Param("id")
	before, ok := h.loadForm(c)
	if !ok {
		return
	}
	v, err := h.app.Commands.RestoreFormVersion.Handle(c.Request.Context(), forms.RestoreFormVersion{ID: id, Version: n})
	if err != nil {
		h.fail(c, err)
		return
	}
	notice := fmt.Sprintf("Version %d restored as version %d.", n, v.Form.Version())
	if v.Form.Version() == before.Form.Version() {
		notice = fmt.Sprintf("The questions already match version %d: nothing changed.", n)
	}
	h.redirect(c, "/app/forms/"+id+"/history", notice)
}

// versionLabels returns a lookup of the questions' labels (by field ID) in a version of f,
// reading each earlier version once per request; the current version and versions that
// cannot be read give nil, and the page shows the current labels.
func (h *Handler) versionLabels(c *gin.Context, f *form.Form) func(version int) map[string]string {
	read := map[int]map[string]string{}
	return func(version int) map[string]string {
		if version <= 0 || version == f.Version() {
			return nil
		}
		if m, ok := read[version]; ok {
			return m
		}
		v, err := h.app.Queries.GetFormVersion.Handle(c.Request.Context(), forms.GetFormVersion{ID: f.ID(), Version: version})
		if err != nil {
			h.log.Warn("dashboard: a form version could not be read", zap.String("form_id", f.ID()), zap.Int("version", version), zap.Error(err))
			read[version] = nil
			return nil
		}
		m := make(map[string]string, len(v.Fields))
		for _, fl := range v.Fields {
			m[fl.ID] = fl.Label
		}
		read[version] = m
		return m
	}
}
