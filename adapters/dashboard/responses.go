package dashboard

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/formstats"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// mountResponses adds a form's responses (table, detail, deletion, export) and analytics.
func (h *Handler) mountResponses(w *gin.RouterGroup) {
	w.GET("/forms/:id/responses", h.responses)
	w.GET("/forms/:id/responses/delete", h.deleteResponsesConfirm)
	w.POST("/forms/:id/responses/delete", h.deleteResponses)
	w.POST("/forms/:id/responses/columns", h.saveColumns)
	w.GET("/forms/:id/responses/:sid", h.response)
	w.GET("/forms/:id/export", h.export)
	w.GET("/forms/:id/analytics", h.analytics)
}

// responsesPageSize is how many responses a table page shows.
const responsesPageSize = 25

// maxDeleteAtOnce bounds how many responses one confirmation deletes.
const maxDeleteAtOnce = 100

type column struct {
	ID, Label string
	Shown     bool
	Removed   bool
	// First and Last say whether the column can move up or down in the Columns panel.
	First, Last bool
}

type cell struct {
	Label string
	Items []string
	// Files are a file answer's items as named links (nil for other fields).
	Files []fileLink
	// Pieces are the items of an answer made of tokens (emails, links), cut after @ . and /:
	// the table breaks them there and nowhere else. Nil for other answers.
	Pieces [][]string
	// Short is the beginning of a long answer, shown with a "Show all" that opens the rest.
	Short string
	// AskedAs is the question's label in the version the response answered, when it differs
	// from the column's.
	AskedAs string
}

type responseRow struct {
	ID        string
	Submitted time.Time
	Href      string
	Cells     []cell
	// Version is the form version the response answered, shown when it is not the current one.
	Version int
	Earlier bool
	// Language is the page's language of the response, on a form with languages.
	Language string
	// Scored: the form has scores, and the last cell is the response's Score.
	Scored bool
	Score  string
}

type responsesData struct {
	FormID, FormName string
	Total            int64
	Columns          []column
	Shown            []column
	Removed          []column // removed fields answered on the page, after Shown
	Rows             []responseRow
	Prev, Next       string
	Newest           string
	CreatedAfter     string
	CreatedBefore    string
	Field, Contains  string
	Source           string
	Filtered         bool
	Scanned          int
	Stopped          bool
	CanDelete        bool
	ColumnsSaved     bool
	ColumnsOpen      bool
	Exports          []link
	Tabs             []navItem
	// Back is the filters as a query: the Columns panel's form goes back to them.
	Back string
	// Languages: the form has languages, and the table shows each response's.
	Languages bool
	// Scored: the form has scores; the table ends with a Score column.
	Scored bool
}

// responseFilter is the table's filters as the query names them: days, a field's value, the
// source. The table, the Columns panel and each response's Previous/Next keep them.
type responseFilter struct {
	CreatedAfter, CreatedBefore string
	Field, Contains             string
	Source                      string
}

// filterKeys are the query parameters of the filters.
var filterKeys = []string{"created_after", "created_before", "field", "contains", "source"}

func readFilter(q url.Values) responseFilter {
	return responseFilter{CreatedAfter: q.Get("created_after"), CreatedBefore: q.Get("created_before"), Field: q.Get("field"),
		Contains: strings.TrimSpace(q.Get("contains")), Source: q.Get("source")}
}

// values are the filters set, as a query.
func (r responseFilter) values() url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"created_after": r.CreatedAfter, "created_before": r.CreatedBefore, "contains": r.Contains,
		"source": r.Source} {
		if val != "" {
			v.Set(k, val)
		}
	}
	if r.Contains != "" {
		v.Set("field", r.Field)
	}
	return v
}

// query is the list query the filters make, with days in the viewer's zone loc, or a 400
// naming the filter that is wrong.
func (r responseFilter) query(f *form.Form, loc *time.Location) (capture.ListSubmissions, error) {
	q := capture.ListSubmissions{FormID: f.ID(), Page: ports.Page{Limit: responsesPageSize}}
	var err error
	if q.CreatedAfter, q.CreatedBefore, err = dayBounds(r.CreatedAfter, r.CreatedBefore, loc); err != nil {
		return q, err
	}
	if r.Contains != "" {
		if _, ok := f.Field(r.Field); !ok {
			return q, httperr.BadRequest("Choose the field to search in.")
		}
		q.Match = &capture.ValueMatch{FieldID: r.Field, Contains: r.Contains}
	}
	switch r.Source {
	case "":
	case string(submission.SourceForm), string(submission.SourceAPI):
		q.Source = submission.Source(r.Source)
	default:
		return q, httperr.BadRequest("The source must be the form page, the API, or any.")
	}
	return q, nil
}

// cursor is an opaque keyset position: base64url of "<unix nanoseconds>.<id>".
func encodeCursor(p ports.Position) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.CreatedAt.UnixNano(), 10) + "." + p.ID))
}

func decodeCursor(s string) (*ports.Position, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("bad cursor")
	}
	ns, id, ok := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, errors.New("bad cursor")
	}
	return &ports.Position{CreatedAt: time.Unix(0, n).UTC(), ID: id}, nil
}

// dayBounds reads the date filter: "from" and "to" days (YYYY-MM-DD) in the viewer's zone loc,
// both included, as the exclusive time bounds of the use cases.
func dayBounds(from, to string, loc *time.Location) (after, before *time.Time, err error) {
	if from != "" {
		d, perr := time.ParseInLocation("2006-01-02", from, loc)
		if perr != nil {
			return nil, nil, httperr.BadRequest("The start date must be a date such as 2026-01-31.")
		}
		t := d.Add(-time.Nanosecond)
		after = &t
	}
	if to != "" {
		d, perr := time.ParseInLocation("2006-01-02", to, loc)
		if perr != nil {
			return nil, nil, httperr.BadRequest("The end date must be a date such as 2026-01-31.")
		}
		t := d.AddDate(0, 0, 1)
		before = &t
	}
	return after, before, nil
}

func formTabs(id, current string) []navItem {
	return []navItem{
		{Label: "Build", Href: "/app/forms/" + id},
		{Label: "Responses", Href: "/app/forms/" + id + "/responses", Current: current == "responses"},
		{Label: "Analytics", Href: "/app/forms/" + id + "/analytics", Current: current == "analytics"},
		{Label: "History", Href: "/app/forms/" + id + "/history", Current: current == "history"},
	}
}

// responses is the table of a form's responses: one column per chosen field, newest first,
// keyset pages, filters by day and by value.
func (h *Handler) responses(c *gin.Context) {
	p := principal(c)
	ctx := c.Request.Context()
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	f := fv.Form
	filter := readFilter(c.Request.URL.Query())
	d := responsesData{FormID: f.ID(), FormName: f.Name(), Total: fv.SubmissionCount, CanDelete: p.Allows(access.Write), Languages: len(f.Languages()) > 0,
		CreatedAfter: filter.CreatedAfter, CreatedBefore: filter.CreatedBefore, Field: filter.Field, Contains: filter.Contains,
		Source: filter.Source, Tabs: formTabs(f.ID(), "responses"), ColumnsOpen: c.Query("columns") == "open"}
	q, err := filter.query(f, h.zone(c))
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Filtered = q.Match != nil || q.Source != "" || q.CreatedAfter != nil || q.CreatedBefore != nil
	cols, err := h.app.Queries.GetResponseColumns.Handle(ctx, capture.GetResponseColumns{FormID: f.ID()})
	if err != nil {
		h.fail(c, err)
		return
	}
	after, before := c.Query("after"), c.Query("before")
	switch {
	case before != "":
		if q.Before, err = decodeCursor(before); err != nil {
			h.fail(c, httperr.BadRequest("That page link is not valid."))
			return
		}
	case after != "":
		if q.Page.After, err = decodeCursor(after); err != nil {
			h.fail(c, httperr.BadRequest("That page link is not valid."))
			return
		}
	}
	page, err := h.app.Queries.ListSubmissions.Find(ctx, q)
	if err != nil {
		h.fail(c, err)
		return
	}

	d.ColumnsSaved = cols.Saved
	var shown []form.Field
	for i, rc := range cols.Columns {
		col := column{ID: rc.Field.ID, Label: rc.Field.Label, Shown: rc.Shown, Removed: rc.Removed, First: i == 0, Last: i == len(cols.Columns)-1}
		d.Columns = append(d.Columns, col)
		if rc.Shown {
			fl := rc.Field
			if rc.Removed {
				col.Label += capture.RemovedSuffix
				fl.Label += capture.RemovedSuffix
			}
			d.Shown = append(d.Shown, col)
			shown = append(shown, fl)
		}
	}
	if !cols.Saved {
		// Without a choice, removed fields appear when the page holds answers to them.
		for _, r := range answeredRemoved(f, page.Submissions) {
			d.Removed = append(d.Removed, column{ID: r.ID, Label: r.Label, Shown: true, Removed: true})
			shown = append(shown, r)
			for i := range d.Columns {
				if d.Columns[i].ID == r.ID {
					d.Columns[i].Shown = true // ticked in the panel: saving keeps what the table shows
				}
			}
		}
	}
	files := h.describeFiles(ctx, f, page.Submissions)
	detail := ""
	if v := filter.values(); len(v) > 0 {
		detail = "?" + v.Encode()
	}
	labels := h.versionLabels(c, f)
	for _, s := range page.Submissions {
		row := responseRow{ID: s.ID(), Submitted: s.SubmittedAt(), Href: "/app/forms/" + f.ID() + "/responses/" + s.ID() + detail,
			Version: s.FormVersion(), Earlier: s.FormVersion() > 0 && s.FormVersion() != f.Version()}
		if l := s.Metadata().Language; l != nil {
			row.Language = *l
		}
		asked := labels(s.FormVersion())
		for _, fl := range shown {
			cl := tableCell(fl, h.items(s, fl))
			cl.Files = h.fileLinks(s, fl, files)
			if l, ok := asked[fl.ID]; ok && row.Earlier && l != strings.TrimSuffix(fl.Label, capture.RemovedSuffix) {
				cl.AskedAs = l
			}
			row.Cells = append(row.Cells, cl)
		}
		row.Scored, row.Score = scoreOf(f, s)
		d.Scored = d.Scored || row.Scored
		d.Rows = append(d.Rows, row)
	}
	for i := range d.Rows {
		d.Rows[i].Scored = d.Scored // every row has the column when one has
	}

	// Links keep the filters; only the cursor changes (the columns are kept per person).
	base := filter.values()
	pageLink := func(key string, pos ports.Position) string {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		v.Set(key, encodeCursor(pos))
		return pathWith(c.Request.URL.Path, v)
	}
	rows := page.Submissions
	if q.Before != nil {
		if page.More && page.Resume != nil {
			d.Prev = pageLink("before", *page.Resume)
		}
		if n := len(rows); n > 0 {
			d.Next = pageLink("after", ports.Position{CreatedAt: rows[n-1].SubmittedAt(), ID: rows[n-1].ID()})
		}
	} else {
		if q.Page.After != nil && len(rows) > 0 {
			d.Prev = pageLink("before", ports.Position{CreatedAt: rows[0].SubmittedAt(), ID: rows[0].ID()})
		}
		if page.More && page.Resume != nil {
			d.Next = pageLink("after", *page.Resume)
		}
	}
	if after != "" || before != "" {
		d.Newest = pathWith(c.Request.URL.Path, base)
	}
	if q.Match != nil || q.Source != "" {
		d.Scanned = page.Scanned
		d.Stopped = page.More && len(rows) < responsesPageSize
	}
	d.Back = filter.values().Encode()
	ex := url.Values{}
	if d.CreatedAfter != "" {
		ex.Set("created_after", d.CreatedAfter)
	}
	if d.CreatedBefore != "" {
		ex.Set("created_before", d.CreatedBefore)
	}
	for _, fmtName := range []string{"csv", "xlsx", "ndjson"} {
		ex.Set("format", fmtName)
		d.Exports = append(d.Exports, link{Href: "/app/forms/" + f.ID() + "/export?" + ex.Encode(), Label: strings.ToUpper(fmtName)})
	}
	if len(f.RemovedFields()) > 0 {
		// NDJSON lines already carry every stored answer; the tables need the extra columns.
		ex.Set("include_removed", "true")
		for _, fmtName := range []string{"csv", "xlsx"} {
			ex.Set("format", fmtName)
			d.Exports = append(d.Exports, link{Href: "/app/forms/" + f.ID() + "/export?" + ex.Encode(),
				Label: strings.ToUpper(fmtName) + " with removed fields"})
		}
	}
	h.render(c, http.StatusOK, "responses", &view{Title: "Responses · " + f.Name(), Data: d})
}

// longAnswer is how many characters an answer may have before the table shortens it to its
// first shortAnswer characters (about two lines) behind a "Show all".
const (
	longAnswer  = 100
	shortAnswer = 80
)

// tableCell is an answer as a table cell: tokens (emails, links) cut where they may break,
// long answers shortened.
func tableCell(fl form.Field, items []string) cell {
	c := cell{Label: fl.Label, Items: items}
	whole := strings.Join(items, ", ")
	if n := len([]rune(whole)); n > longAnswer || strings.Contains(whole, "\n") {
		c.Short = shorten(whole, shortAnswer)
		return c
	}
	tokens := true
	for _, it := range items {
		tokens = tokens && isToken(it)
	}
	if tokens && fl.Type != form.TypeFile {
		for _, it := range items {
			c.Pieces = append(c.Pieces, breakPoints(it))
		}
	}
	return c
}

// isToken says whether an item is one long run of characters people read as a unit with
// parts (an email address, a link): no space, and an @, a dot or a slash inside.
func isToken(s string) bool {
	return len(s) > 12 && !strings.ContainsFunc(s, unicode.IsSpace) && strings.ContainsAny(s, "@./")
}

// breakPoints cuts a token after each @, dot and slash.
func breakPoints(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if (r == '@' || r == '.' || r == '/') && i+1 < len(s) {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// shorten is the first line of s up to about n characters, cut at a space when one is near,
// and an ellipsis.
func shorten(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	r := []rune(s)
	if len(r) > n {
		cut := n
		for i := n; i > n*2/3; i-- {
			if unicode.IsSpace(r[i]) {
				cut = i
				break
			}
		}
		r = r[:cut]
	}
	return strings.TrimRightFunc(string(r), unicode.IsSpace) + "…"
}

// answeredRemoved are the fields removed from f that one of subs has answered, as fields
// labelled "<label> (removed)", in the order they were removed.
func answeredRemoved(f *form.Form, subs []*submission.Submission) []form.Field {
	var out []form.Field
	for _, r := range f.RemovedFields() {
		for _, s := range subs {
			if _, ok := s.Answer(r.ID); ok {
				fl := r.AsField()
				fl.Label += capture.RemovedSuffix
				out = append(out, fl)
				break
			}
		}
	}
	return out
}

// items is an answer as the dashboard shows it: its items, the submission's own uploads as
// links that never expire (fileLinks names them).
func (h *Handler) items(s *submission.Submission, fl form.Field) []string {
	v, ok := s.Data()[fl.ID]
	if !ok {
		return nil
	}
	items := v.Strings()
	if fl.Type == form.TypeFile && h.fileURL != nil {
		member := httpkit.MemberLinks("", h.fileURL)
		for i, it := range items {
			items[i] = member(s, it)
		}
	}
	return items
}

type answerView struct {
	Label string
	File  bool
	Items []string
	Files []fileLink
	// Pieces are the items of an email or link answer cut where they may break (see cell).
	Pieces [][]string
}

// answer is an answer as the response's page shows it.
func answer(fl form.Field, items []string, files []fileLink) answerView {
	a := answerView{Label: fl.Label, File: fl.Type == form.TypeFile, Items: items, Files: files}
	if !a.File {
		a.Pieces = tableCell(fl, items).Pieces
	}
	return a
}

type responseData struct {
	FormID, FormName, ID string
	Submitted, Updated   time.Time
	Answers              []answerView
	Source, Referrer     string
	Language             string // the page's language (a form with languages), else ""
	UTM                  [][2]string
	CanDelete            bool
	Tabs                 []navItem
	// Version is the form version the response answered; Earlier says it is not the current
	// one, whose labels the page then does not use.
	Version, CurrentVersion int
	Earlier                 bool
	// Newer and Older are the neighbouring responses in the table's order under the same
	// filters (Previous and Next); Back is the table with those filters.
	Newer, Older, Back string
	// Scored: the form has scores; Score is the response's ("" when it has none).
	Scored bool
	Score  string
}

// response is one response with its metadata and files.
func (h *Handler) response(c *gin.Context) {
	p := principal(c)
	ctx := c.Request.Context()
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	f := fv.Form
	s, err := h.app.Queries.GetSubmission.Handle(ctx, capture.GetSubmission{FormID: f.ID(), ID: c.Param("sid")})
	if err != nil {
		h.fail(c, err)
		return
	}
	d := responseData{FormID: f.ID(), FormName: f.Name(), ID: s.ID(), Submitted: s.SubmittedAt(), Updated: s.UpdatedAt(),
		CanDelete: p.Allows(access.Write), Tabs: formTabs(f.ID(), "responses")}
	files := h.describeFiles(ctx, f, []*submission.Submission{s})
	// The answers stand under the questions as the response saw them: the labels of the
	// version it answered.
	asked := f.Fields()
	d.Version, d.CurrentVersion = s.FormVersion(), f.Version()
	if s.FormVersion() > 0 && s.FormVersion() != f.Version() {
		if v, err := h.app.Queries.GetFormVersion.Handle(ctx, forms.GetFormVersion{ID: f.ID(), Version: s.FormVersion()}); err == nil {
			asked, d.Earlier = v.Fields, true
		} else {
			h.log.Warn("dashboard: a form version could not be read", zap.String("form_id", f.ID()), zap.Int("version", s.FormVersion()), zap.Error(err))
		}
	}
	listed := map[string]bool{}
	for _, fl := range asked {
		listed[fl.ID] = true
		if _, current := f.Field(fl.ID); d.Earlier && !current {
			fl.Label += capture.RemovedSuffix // removed since, as the table names it
		}
		d.Answers = append(d.Answers, answer(fl, h.items(s, fl), h.fileLinks(s, fl, files)))
	}
	for _, fl := range answeredRemoved(f, []*submission.Submission{s}) {
		if !listed[fl.ID] {
			d.Answers = append(d.Answers, answer(fl, h.items(s, fl), h.fileLinks(s, fl, files)))
		}
	}
	filter := readFilter(c.Request.URL.Query())
	if d.Newer, d.Older, err = h.neighbours(c, f, filter, s); err != nil {
		h.fail(c, err)
		return
	}
	d.Back = pathWith("/app/forms/"+f.ID()+"/responses", filter.values())
	m := s.Metadata()
	d.Scored, d.Score = scoreOf(f, s)
	d.Source = string(m.Source)
	if m.Referrer != nil {
		d.Referrer = *m.Referrer
	}
	if m.Language != nil {
		d.Language = *m.Language
	}
	for _, k := range submission.UTMKeys {
		if v := m.UTM[k]; v != "" {
			d.UTM = append(d.UTM, [2]string{k, v})
		}
	}
	h.render(c, http.StatusOK, "response", &view{Title: "Response · " + f.Name(), Data: d})
}

// neighbours are the links to the responses just newer and just older than s in the table's
// order (newest first) under the filters, each one keyset read of one row; "" when s is the
// first or the last.
func (h *Handler) neighbours(c *gin.Context, f *form.Form, filter responseFilter, s *submission.Submission) (newer, older string, err error) {
	q, err := filter.query(f, h.zone(c))
	if err != nil {
		return "", "", err
	}
	q.Page.Limit = 1
	pos := ports.Position{CreatedAt: s.SubmittedAt(), ID: s.ID()}
	link := func(id string) string {
		return pathWith("/app/forms/"+f.ID()+"/responses/"+id, filter.values())
	}
	ctx := c.Request.Context()
	q.Page.After = &pos
	page, err := h.app.Queries.ListSubmissions.Find(ctx, q)
	if err != nil {
		return "", "", err
	}
	if len(page.Submissions) > 0 {
		older = link(page.Submissions[0].ID())
	}
	q.Page.After, q.Before = nil, &pos
	page, err = h.app.Queries.ListSubmissions.Find(ctx, q)
	if err != nil {
		return "", "", err
	}
	if n := len(page.Submissions); n > 0 {
		newer = link(page.Submissions[n-1].ID())
	}
	return newer, older, nil
}

// deleteIDs are the responses a deletion names (checkboxes "id", at most maxDeleteAtOnce).
func deleteIDs(ids []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil, httperr.BadRequest("Choose at least one response to delete.")
	}
	if len(out) > maxDeleteAtOnce {
		return nil, httperr.BadRequest(fmt.Sprintf("Delete at most %d responses at once.", maxDeleteAtOnce))
	}
	return out, nil
}

// deleteResponsesConfirm asks before deleting the responses named by ?id=.
func (h *Handler) deleteResponsesConfirm(c *gin.Context) {
	ids, ok := h.deleteIDsOrBack(c, c.QueryArray("id"))
	if !ok {
		return
	}
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	back := "/app/forms/" + fv.Form.ID() + "/responses"
	hidden := make([]hiddenInput, 0, len(ids))
	for _, id := range ids {
		hidden = append(hidden, hiddenInput{Name: "id", Value: id})
	}
	heading := "Delete " + plural(len(ids), "response") + " of “" + fv.Form.Name() + "”?"
	if len(ids) == 1 {
		heading = "Delete this response of “" + fv.Form.Name() + "”?"
		back += "/" + ids[0]
	}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Delete responses", Data: confirmData{
		Heading:    heading,
		Paragraphs: []string{"The answers and their uploaded files are deleted for good. This cannot be undone."},
		Action:     "/app/forms/" + fv.Form.ID() + "/responses/delete", Button: "Delete " + plural(len(ids), "response"),
		Cancel: back, Danger: true, Hidden: hidden}})
}

// deleteResponses deletes the confirmed responses, one use case call each, and says how many
// went: a response of another form or workspace, or one already deleted, is not counted.
func (h *Handler) deleteResponses(c *gin.Context) {
	ids, ok := h.deleteIDsOrBack(c, c.PostFormArray("id"))
	if !ok {
		return
	}
	formID := c.Param("id")
	deleted := 0
	for _, id := range ids {
		err := h.app.Commands.DeleteSubmission.Handle(c.Request.Context(), capture.DeleteSubmission{FormID: formID, ID: id})
		switch {
		case err == nil:
			deleted++
		case !errors.Is(err, domain.ErrNotFound):
			h.fail(c, err)
			return
		}
	}
	h.redirect(c, "/app/forms/"+formID+"/responses", deletedNotice(deleted, len(ids)-deleted))
}

// deletedNotice says how many of the chosen responses were deleted and how many were not found.
func deletedNotice(deleted, missing int) string {
	switch {
	case missing == 0:
		return plural(deleted, "response") + " deleted."
	case deleted == 0:
		return "No response was deleted: the chosen responses are not in this form (already deleted, or never here)."
	}
	return plural(deleted, "response") + " deleted; " + plural(missing, "other") + " could not be found in this form (already deleted, or never here)."
}

// deleteIDsOrBack checks that the signed-in person may delete responses (Write) and reads the
// chosen ones; with none chosen it goes back to the table with a notice instead of an error
// page ("Delete selected" pressed with nothing ticked). When ok is false it has answered.
func (h *Handler) deleteIDsOrBack(c *gin.Context, raw []string) (ids []string, ok bool) {
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return nil, false
	}
	ids, err := deleteIDs(raw)
	if err == nil {
		return ids, true
	}
	if len(ids) == 0 && !hasID(raw) {
		h.redirect(c, "/app/forms/"+c.Param("id")+"/responses", "Select at least one response to delete.")
		return nil, false
	}
	h.fail(c, err)
	return nil, false
}

func hasID(raw []string) bool {
	for _, id := range raw {
		if strings.TrimSpace(id) != "" {
			return true
		}
	}
	return false
}

// export streams the form's responses as a download (CSV, XLSX or NDJSON), through the
// export use case and the shared writers of adapters/httpkit (the API streams through them too).
func (h *Handler) export(c *gin.Context) {
	format := c.DefaultQuery("format", "csv")
	if !httpkit.ExportFormat(format) {
		h.fail(c, httperr.BadRequest("The format must be CSV, XLSX or NDJSON."))
		return
	}
	includeRemoved, ok := httpkit.IncludeRemoved(c.GetQuery("include_removed"))
	if !ok {
		h.fail(c, httperr.BadRequest("Removed fields are included or not: include_removed must be true or false."))
		return
	}
	value, present := c.GetQuery("file_links")
	links, ok := httpkit.ExportFileLinks(format, value, present)
	if !ok {
		h.fail(c, httperr.BadRequest("Files are given as links for members or as signed links: file_links must be member or signed."))
		return
	}
	after, before, err := dayBounds(c.Query("created_after"), c.Query("created_before"), h.zone(c))
	if err != nil {
		h.fail(c, err)
		return
	}
	// "Export selected" sends the ticked rows' IDs (and selected=1, so that none ticked goes
	// back to the table instead of exporting everything).
	var ids []string
	for _, id := range c.QueryArray("id") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if c.Query("selected") != "" && len(ids) == 0 {
		h.redirect(c, "/app/forms/"+c.Param("id")+"/responses", "Select at least one response to export.")
		return
	}
	if len(ids) > capture.MaxExportIDs {
		h.fail(c, httperr.BadRequest(fmt.Sprintf("Export at most %d chosen responses at once.", capture.MaxExportIDs)))
		return
	}
	e, err := h.app.Queries.ExportSubmissions.Handle(c.Request.Context(), capture.ExportSubmissions{
		FormID: c.Param("id"), Format: format, CreatedAfter: after, CreatedBefore: before, IncludeRemoved: includeRemoved, IDs: ids,
		SignedFileLinks: links == httpkit.SignedFileLinks})
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := httpkit.StreamExport(c, e, format, links.Linker(h.opts.PublicURL, h.fileURL)); err != nil {
		// The headers are sent: breaking the connection makes the download fail visibly
		// instead of looking complete.
		h.log.Error("dashboard export", zap.String("form_id", c.Param("id")), zap.String("format", format), zap.Error(err))
		panic(http.ErrAbortHandler)
	}
}

type dayBar struct {
	Date               time.Time
	Submissions, Views int64
	Starts             int64
	X, Y, W, H         int
	LabelX             int
	Label              bool
	Anchor             string
}

type analyticsData struct {
	FormID, FormName               string
	Views, Starts, Submissions     int64
	CompletionRate, MedianDuration string
	Days                           int
	Bars                           []dayBar
	Max                            int64
	ChartW, ChartH, BaseY          int
	Tabs                           []navItem
	Periods                        []navItem
	analyticsDetail
}

// analytics shows how the form's public page performs over a period, with a bar chart of the
// submissions per day drawn on the server (and the same numbers in a table).
func (h *Handler) analytics(c *gin.Context) {
	days := 30
	if s := c.Query("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > capture.MaxStatsDays {
			h.fail(c, httperr.BadRequest(fmt.Sprintf("The period must be from 1 to %d days.", capture.MaxStatsDays)))
			return
		}
		days = n
	}
	ctx := c.Request.Context()
	fv, ok := h.loadForm(c)
	if !ok {
		return
	}
	r, err := h.app.Queries.GetFormStats.Handle(ctx, capture.GetFormStats{FormID: fv.Form.ID(), Days: days})
	if err != nil {
		h.fail(c, err)
		return
	}
	d := analyticsData{FormID: fv.Form.ID(), FormName: fv.Form.Name(), Views: r.Views, Starts: r.Starts, Submissions: r.Submissions,
		Days: days, Tabs: formTabs(fv.Form.ID(), "analytics"), CompletionRate: "—", MedianDuration: "—"}
	if r.CompletionRate != nil {
		d.CompletionRate = strconv.FormatFloat(*r.CompletionRate*100, 'f', 1, 64) + "%"
	}
	if r.MedianSecondsToComplete != nil {
		d.MedianDuration = humanSeconds(*r.MedianSecondsToComplete)
	}
	for _, n := range []int{7, 30, 90, 365} {
		d.Periods = append(d.Periods, navItem{Label: strconv.Itoa(n) + " days", Href: "/app/forms/" + d.FormID + "/analytics?days=" + strconv.Itoa(n), Current: n == days})
	}
	d.Bars, d.Max = chartBars(r.Daily)
	d.analyticsDetail = detailOf(r, fv.Form.Fields())
	d.Saving = fv.Form.SavesDrafts()
	d.ChartW, d.ChartH, d.BaseY = chartWidth, chartHeight, chartHeight-chartFoot
	h.render(c, http.StatusOK, "analytics", &view{Title: "Analytics · " + fv.Form.Name(), Data: d})
}

// The chart's drawing box (an SVG viewBox that scales with the page).
const (
	chartWidth  = 720
	chartHeight = 240
	chartFoot   = 24
	chartTop    = 16
)

// chartBars lays out one bar per day, scaled to the busiest day; about six days are labelled.
func chartBars(daily []formstats.Daily) ([]dayBar, int64) {
	var top int64
	for _, d := range daily {
		top = max(top, d.Submissions)
	}
	n := len(daily)
	if n == 0 {
		return nil, 0
	}
	slot := float64(chartWidth) / float64(n)
	every := max(1, (n+5)/6)
	bars := make([]dayBar, n)
	for i, d := range daily {
		h := 0
		if top > 0 {
			h = int(float64(d.Submissions) / float64(top) * float64(chartHeight-chartFoot-chartTop))
		}
		if d.Submissions > 0 && h < 2 {
			h = 2
		}
		w := max(1, int(slot*0.7))
		x := int(float64(i)*slot + (slot-float64(w))/2)
		bars[i] = dayBar{Date: d.Date, Submissions: d.Submissions, Views: d.Views, Starts: d.Starts, X: x, W: w, H: h, Y: chartHeight - chartFoot - h,
			LabelX: x + w/2, Label: i%every == 0 || i == n-1, Anchor: "middle"}
		switch {
		case i == n-1 && n > 1:
			bars[i].LabelX, bars[i].Anchor = chartWidth, "end" // the last label stays inside the box
		case i == 0 && n > 1:
			bars[i].LabelX, bars[i].Anchor = 0, "start"
		}
	}
	return bars, top
}

// humanSeconds is a duration a person reads: "45 s", "3 min 20 s", "1 h 5 min".
func humanSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// saveColumns keeps the signed-in person's columns of the form's responses table: "order"
// names every column in the panel's order, "show" the ticked ones; "move" (up:ID or down:ID)
// moves one column first, and "reset" forgets the choice. It goes back to the table with its
// filters ("back"), the panel open after a move.
func (h *Handler) saveColumns(c *gin.Context) {
	formID := c.Param("id")
	back := url.Values{}
	if raw := c.PostForm("back"); raw != "" {
		v, err := url.ParseQuery(raw)
		if err != nil {
			h.fail(c, httperr.BadRequest("The link back to the table is not valid."))
			return
		}
		for _, k := range filterKeys {
			if x := v.Get(k); x != "" {
				back.Set(k, x)
			}
		}
	}
	to := "/app/forms/" + formID + "/responses"
	cmd := capture.SaveResponseColumns{FormID: formID, Reset: c.PostForm("reset") != ""}
	notice := "Columns back to the form's fields, in its order."
	if !cmd.Reset {
		order := c.PostFormArray("order")
		if len(order) > maxColumns {
			h.fail(c, httperr.BadRequest(fmt.Sprintf("A table has at most %d columns.", maxColumns)))
			return
		}
		if move := c.PostForm("move"); move != "" {
			dir, id, _ := strings.Cut(move, ":")
			i := slices.Index(order, id)
			j := i - 1
			if dir == "down" {
				j = i + 1
			}
			if i < 0 || (dir != "up" && dir != "down") {
				h.fail(c, httperr.BadRequest("Choose a column to move up or down."))
				return
			}
			if j >= 0 && j < len(order) {
				order[i], order[j] = order[j], order[i]
			}
			back.Set("columns", "open")
		}
		show := map[string]bool{}
		for _, id := range c.PostFormArray("show") {
			show[id] = true
		}
		for _, id := range order {
			if show[id] {
				cmd.Shown = append(cmd.Shown, id)
				delete(show, id)
			}
		}
		if len(show) > 0 {
			h.fail(c, httperr.BadRequest("A ticked column is missing from the order of the columns."))
			return
		}
		cmd.Shown = append([]string{}, cmd.Shown...)
		notice = "Columns saved."
		if back.Get("columns") == "open" {
			notice = ""
		}
	}
	if _, err := h.app.Commands.SaveResponseColumns.Handle(c.Request.Context(), cmd); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, pathWith(to, back)+"#columns", notice)
}

// maxColumns bounds the columns one save names (fields and removed fields).
const maxColumns = 1000
