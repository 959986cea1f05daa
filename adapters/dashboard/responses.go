package dashboard

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
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
}

type cell struct {
	Label string
	Items []string
	// Files are a file answer's items as named links (nil for other fields).
	Files []fileLink
}

type responseRow struct {
	ID        string
	Submitted time.Time
	Cells     []cell
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
	Scanned          int
	Stopped          bool
	CanDelete        bool
	Exports          []link
	Tabs             []navItem
	Query            []hiddenInput
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
	d := responsesData{FormID: f.ID(), FormName: f.Name(), Total: fv.SubmissionCount, CanDelete: p.Allows(access.Write),
		CreatedAfter: c.Query("created_after"), CreatedBefore: c.Query("created_before"),
		Field: c.Query("field"), Contains: strings.TrimSpace(c.Query("contains")), Tabs: formTabs(f.ID(), "responses")}
	q := capture.ListSubmissions{FormID: f.ID(), Page: ports.Page{Limit: responsesPageSize}}
	var err error
	if q.CreatedAfter, q.CreatedBefore, err = dayBounds(d.CreatedAfter, d.CreatedBefore, h.zone(c)); err != nil {
		h.fail(c, err)
		return
	}
	if d.Contains != "" {
		if _, ok := f.Field(d.Field); !ok {
			h.fail(c, httperr.BadRequest("Choose the field to search in."))
			return
		}
		q.Match = &capture.ValueMatch{FieldID: d.Field, Contains: d.Contains}
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

	chosen := map[string]bool{}
	for _, id := range c.QueryArray("col") {
		chosen[id] = true
	}
	for _, fl := range f.Fields() {
		col := column{ID: fl.ID, Label: fl.Label, Shown: len(chosen) == 0 || chosen[fl.ID]}
		d.Columns = append(d.Columns, col)
		if col.Shown {
			d.Shown = append(d.Shown, col)
		}
	}
	removed := answeredRemoved(f, page.Submissions)
	files := h.describeFiles(ctx, f, page.Submissions)
	for _, r := range removed {
		d.Removed = append(d.Removed, column{ID: r.ID, Label: r.Label, Shown: true})
	}
	for _, s := range page.Submissions {
		row := responseRow{ID: s.ID(), Submitted: s.SubmittedAt()}
		for _, col := range d.Shown {
			fl, _ := f.Field(col.ID)
			row.Cells = append(row.Cells, cell{Label: col.Label, Items: h.items(s, fl), Files: h.fileLinks(s, fl, files)})
		}
		for _, fl := range removed {
			row.Cells = append(row.Cells, cell{Label: fl.Label, Items: h.items(s, fl), Files: h.fileLinks(s, fl, files)})
		}
		d.Rows = append(d.Rows, row)
	}

	// Links keep the filters and the columns; only the cursor changes.
	base := c.Request.URL.Query()
	base.Del("after")
	base.Del("before")
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
	if q.Match != nil {
		d.Scanned = page.Scanned
		d.Stopped = page.More && len(rows) < responsesPageSize
	}
	for k, vs := range base {
		if k == "col" {
			continue
		}
		for _, v := range vs {
			d.Query = append(d.Query, hiddenInput{Name: k, Value: v})
		}
	}
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
}

type responseData struct {
	FormID, FormName, ID string
	Submitted, Updated   time.Time
	Answers              []answerView
	Source, Referrer     string
	UTM                  [][2]string
	CanDelete            bool
	Tabs                 []navItem
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
	for _, fl := range f.Fields() {
		d.Answers = append(d.Answers, answerView{Label: fl.Label, File: fl.Type == form.TypeFile, Items: h.items(s, fl), Files: h.fileLinks(s, fl, files)})
	}
	for _, fl := range answeredRemoved(f, []*submission.Submission{s}) {
		d.Answers = append(d.Answers, answerView{Label: fl.Label, File: fl.Type == form.TypeFile, Items: h.items(s, fl), Files: h.fileLinks(s, fl, files)})
	}
	m := s.Metadata()
	d.Source = string(m.Source)
	if m.Referrer != nil {
		d.Referrer = *m.Referrer
	}
	for _, k := range submission.UTMKeys {
		if v := m.UTM[k]; v != "" {
			d.UTM = append(d.UTM, [2]string{k, v})
		}
	}
	h.render(c, http.StatusOK, "response", &view{Title: "Response · " + f.Name(), Data: d})
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
	e, err := h.app.Queries.ExportSubmissions.Handle(c.Request.Context(), capture.ExportSubmissions{
		FormID: c.Param("id"), Format: format, CreatedAfter: after, CreatedBefore: before, IncludeRemoved: includeRemoved,
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
		bars[i] = dayBar{Date: d.Date, Submissions: d.Submissions, Views: d.Views, X: x, W: w, H: h, Y: chartHeight - chartFoot - h,
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
