package dashboard_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/test/testkit"
)

// responsesForm makes a three-field form in the owner's workspace with n API submissions:
// "Person i", "person-i@example.org", and Red for every third, Blue otherwise. It returns the
// form and the submission IDs, oldest first.
func responsesForm(t *testing.T, h *harness, db *persistence.DB, n int) (*form.Form, []string) {
	t.Helper()
	ctx := context.Background()
	ws, err := persistence.NewWorkspaceRepository(db).Oldest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sys := auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID()))
	fv, err := h.app.Commands.CreateForm.Handle(sys, forms.CreateForm{Draft: form.Draft{Name: "Paint survey", Fields: []form.FieldSpec{
		{Label: "Name", Type: "text", Required: true},
		{Label: "Email", Type: "email"},
		{Label: "Colour", Type: "radio", Options: []string{"Red", "Blue"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	f := fv.Form
	fs := f.Fields()
	var ids []string
	for i := 0; i < n; i++ {
		colour := "Blue"
		if i%3 == 0 {
			colour = "Red"
		}
		ref := "https://blog.example.com/post"
		s, err := h.app.Commands.CaptureSubmission.Handle(sys, capture.CaptureSubmission{FormID: f.ID(),
			Source: submission.SourceAPI, Referrer: &ref, UTM: map[string]string{"utm_source": "newsletter"},
			Data: map[string]submission.Input{fs[0].ID: fmt.Sprintf("Person %d", i), fs[1].ID: fmt.Sprintf("person-%d@example.org", i), fs[2].ID: colour}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID())
		testkit.PastMillisecond(t, time.Now()) // distinct submission times: "newest first" is then one order
	}
	return f, ids
}

var (
	responseRows = regexp.MustCompile(`(?s)<tr>\s*<td data-label="Received"[^>]*>.*?</tr>`)
	nextLink     = regexp.MustCompile(`href="([^"]+)" rel="next"`)
	prevLink     = regexp.MustCompile(`href="([^"]+)" rel="prev"`)
)

func rowsOf(body string) []string { return responseRows.FindAllString(body, -1) }

// TestResponsesTable: columns titled by label, newest first, keyset pages both ways, the date
// and value filters, column choice, and the detail with its metadata, on both databases.
func TestResponsesTable(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		f, ids := responsesForm(t, h, db, 30)
		fs := f.Fields()
		base := "/app/forms/" + f.ID() + "/responses"

		first := owner.get(base).expect(t, http.StatusOK).body
		for _, th := range []string{`<th scope="col">Name</th>`, `<th scope="col">Email</th>`, `<th scope="col">Colour</th>`} {
			if !strings.Contains(first, th) {
				t.Fatalf("no column %s: %s", th, text(first))
			}
		}
		rows := rowsOf(first)
		if len(rows) != 25 || !strings.Contains(rows[0], "Person 29") || !strings.Contains(rows[24], "Person 5<") {
			t.Fatalf("first page: %d rows, want 25 from Person 29 to Person 5", len(rows))
		}
		next := nextLink.FindStringSubmatch(first)
		if next == nil || prevLink.MatchString(first) {
			t.Fatal("the first page has no Next link, or a Previous one")
		}
		second := owner.get(html.UnescapeString(next[1])).expect(t, http.StatusOK).body
		rows = rowsOf(second)
		if len(rows) != 5 || !strings.Contains(rows[0], "Person 4<") || !strings.Contains(rows[4], "Person 0<") || nextLink.MatchString(second) {
			t.Fatalf("second page: %d rows: %s", len(rows), text(second))
		}
		prev := prevLink.FindStringSubmatch(second)
		if prev == nil {
			t.Fatal("the second page has no Previous link")
		}
		back := owner.get(html.UnescapeString(prev[1])).expect(t, http.StatusOK).body
		rows = rowsOf(back)
		if len(rows) != 25 || !strings.Contains(rows[0], "Person 29") || !strings.Contains(rows[24], "Person 5<") || prevLink.MatchString(back) {
			t.Fatalf("Previous from the second page: %d rows: %s", len(rows), text(back))
		}
		owner.get(base+"?after=not-a-cursor").expect(t, http.StatusBadRequest)

		// Value filter: every third response is Red; case does not matter.
		red := owner.get(base+"?"+url.Values{"field": {fs[2].ID}, "contains": {"rED"}}.Encode()).expect(t, http.StatusOK).body
		rows = rowsOf(red)
		if len(rows) != 10 {
			t.Fatalf("Red filter: %d rows, want 10", len(rows))
		}
		for _, r := range rows {
			if !strings.Contains(r, ">Red<") {
				t.Fatalf("a row that is not Red: %s", text(r))
			}
		}
		one := rowsOf(owner.get(base+"?"+url.Values{"field": {fs[1].ID}, "contains": {"person-17@"}}.Encode()).expect(t, http.StatusOK).body)
		if len(one) != 1 || !strings.Contains(one[0], "Person 17") {
			t.Fatalf("email filter: %d rows", len(one))
		}

		// Date filter: both days included.
		today := time.Now().UTC().Format("2006-01-02")
		tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02")
		yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
		if n := len(rowsOf(owner.get(base+"?created_after="+tomorrow).expect(t, http.StatusOK).body)); n != 0 {
			t.Fatalf("from tomorrow: %d rows, want none", n)
		}
		if n := len(rowsOf(owner.get(base+"?created_before="+yesterday).expect(t, http.StatusOK).body)); n != 0 {
			t.Fatalf("until yesterday: %d rows, want none", n)
		}
		if n := len(rowsOf(owner.get(base+"?created_after="+today+"&created_before="+today).expect(t, http.StatusOK).body)); n != 25 {
			t.Fatalf("today: %d rows, want a full page", n)
		}
		owner.get(base+"?created_after=31/12/2026").expect(t, http.StatusBadRequest)

		// Columns: Email hidden, Colour first; kept for this person across pages and visits,
		// not for another member; Reset brings every field back in the form's order.
		header := regexp.MustCompile(`<thead>.*?</thead>`)
		owner.post(base+"/columns", url.Values{"order": {fs[2].ID, fs[0].ID, fs[1].ID}, "show": {fs[2].ID, fs[0].ID},
			"back": {"source=api&contains=&after=x"}}).redirectsTo(t, base+"?source=api#columns")
		cols := owner.get(base).expect(t, http.StatusOK).body
		if h := header.FindString(cols); !strings.Contains(h, `<th scope="col">Colour</th><th scope="col">Name</th></tr>`) || strings.Contains(h, "Email") {
			t.Fatalf("chosen columns: %s", text(h))
		}
		if next := nextLink.FindStringSubmatch(cols); next == nil ||
			strings.Contains(header.FindString(owner.get(html.UnescapeString(next[1])).expect(t, http.StatusOK).body), "Email") {
			t.Fatal("the next page forgets the columns")
		}
		viewer := h.member(owner, "grace@example.org", "viewer")
		if !strings.Contains(header.FindString(viewer.get(base).expect(t, http.StatusOK).body), `<th scope="col">Email</th>`) {
			t.Fatal("another member sees the owner's columns")
		}
		// Without JavaScript, a move button saves and moves one column, and the panel stays open.
		owner.post(base+"/columns", url.Values{"order": {fs[2].ID, fs[0].ID, fs[1].ID}, "show": {fs[2].ID, fs[0].ID, fs[1].ID},
			"move": {"down:" + fs[2].ID}}).redirectsTo(t, base+"?columns=open#columns")
		moved := owner.get(base+"?columns=open").expect(t, http.StatusOK).body
		if !strings.Contains(header.FindString(moved), `<th scope="col">Name</th><th scope="col">Colour</th><th scope="col">Email</th></tr>`) ||
			!strings.Contains(moved, `id="columns" open`) {
			t.Fatalf("after moving Colour down: %s", text(header.FindString(moved)))
		}
		owner.post(base+"/columns", url.Values{"order": {"fld_nope"}, "show": {"fld_nope"}}).expect(t, http.StatusUnprocessableEntity)
		owner.post(base+"/columns", url.Values{"order": {fs[0].ID}, "show": {fs[1].ID}}).expect(t, http.StatusBadRequest)
		owner.post(base+"/columns", url.Values{"reset": {"1"}}).redirectsTo(t, base+"#columns")
		if h := header.FindString(owner.get(base).expect(t, http.StatusOK).body); !strings.Contains(h,
			`<th scope="col">Name</th><th scope="col">Email</th><th scope="col">Colour</th></tr>`) {
			t.Fatalf("after Reset: %s", text(h))
		}

		// Detail with metadata.
		raw := owner.get(base+"/"+ids[29]).expect(t, http.StatusOK).body
		if !strings.Contains(raw, "<dd>person-29@<wbr>example.<wbr>org</dd>") {
			t.Fatalf("the detail's email may break only after @ and dots: %s", raw)
		}
		detail := text(raw)
		for _, want := range []string{"Person 29", "Blue", "API", "https://blog.example.com/post", "utm_source", "newsletter", ids[29]} {
			if !strings.Contains(detail, want) {
				t.Fatalf("detail lacks %q: %s", want, detail)
			}
		}
		owner.get(base+"/sub_unknown").expect(t, http.StatusNotFound)
	})
}

// TestDeleteResponses: many at once after a confirmation; a viewer reads but cannot delete.
func TestDeleteResponses(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		f, ids := responsesForm(t, h, db, 4)
		base := "/app/forms/" + f.ID() + "/responses"

		viewer := h.member(owner, "viewer@example.org", "viewer")
		vp := viewer.get(base).expect(t, http.StatusOK).body
		if len(rowsOf(vp)) != 4 || strings.Contains(vp, "Delete selected") || !strings.Contains(vp, `name="id"`) || !strings.Contains(vp, "Export selected") {
			t.Fatal("a viewer sees the rows, chooses some to export, and has no delete button")
		}
		viewer.get(base+"/delete?id="+ids[0]).expect(t, http.StatusForbidden)
		viewer.post(base+"/delete", url.Values{"id": {ids[0]}}).expect(t, http.StatusForbidden)

		if !strings.Contains(owner.get(base).body, "Delete selected") {
			t.Fatal("the owner has no delete button")
		}
		confirm := owner.get(base+"/delete?id="+ids[0]+"&id="+ids[1]).expect(t, http.StatusOK).body
		if !strings.Contains(text(confirm), "Delete 2 responses") || strings.Count(confirm, `type="hidden" name="id"`) != 2 {
			t.Fatalf("confirmation page: %s", text(confirm))
		}
		owner.post(base+"/delete", url.Values{"id": {ids[0], ids[1]}}).redirectsTo(t, base)
		owner.get(base+"/"+ids[0]).expect(t, http.StatusNotFound)
		owner.get(base+"/"+ids[1]).expect(t, http.StatusNotFound)
		left := rowsOf(owner.get(base).expect(t, http.StatusOK).body)
		if len(left) != 2 {
			t.Fatalf("%d rows left, want 2", len(left))
		}

		// Nothing ticked: back to the table with a notice, not an error page.
		owner.get(base+"/delete").redirectsTo(t, base)
		if got := text(owner.get(base).expect(t, http.StatusOK).body); !strings.Contains(got, "Select at least one response to delete.") {
			t.Fatalf("no notice after an empty selection: %s", got)
		}
		owner.post(base+"/delete", url.Values{}).redirectsTo(t, base)
		owner.get(base) // takes the notice

		// Another workspace's response, named from this form's page, is not deleted and
		// not counted; nor is one already gone.
		ctx := context.Background()
		other, err := h.app.Commands.CreateWorkspace.Handle(ctx, workspace.CreateWorkspace{Name: "Elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		osys := auth.WithPrincipal(ctx, auth.SystemPrincipal(other.ID()))
		ofv, err := h.app.Commands.CreateForm.Handle(osys, forms.CreateForm{Draft: form.Draft{Name: "Theirs",
			Fields: []form.FieldSpec{{Label: "Name", Type: "text"}}}})
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := h.app.Commands.CaptureSubmission.Handle(osys, capture.CaptureSubmission{FormID: ofv.Form.ID(),
			Source: submission.SourceAPI, Data: map[string]submission.Input{ofv.Form.Fields()[0].ID: "Not yours"}})
		if err != nil {
			t.Fatal(err)
		}
		owner.post(base+"/delete", url.Values{"id": {theirs.ID()}}).redirectsTo(t, base)
		if got := text(owner.get(base).body); !strings.Contains(got, "No response was deleted") || strings.Contains(got, "1 response deleted") {
			t.Fatalf("deleting another workspace's response: %s", got)
		}
		owner.post(base+"/delete", url.Values{"id": {ids[2], ids[0], theirs.ID()}}).redirectsTo(t, base)
		if got := text(owner.get(base).body); !strings.Contains(got, "1 response deleted; 2 others could not be found") {
			t.Fatalf("a mixed deletion: %s", got)
		}
		if _, err := h.app.Queries.GetSubmission.Handle(osys, capture.GetSubmission{FormID: ofv.Form.ID(), ID: theirs.ID()}); err != nil {
			t.Fatalf("the other workspace's response is gone: %v", err)
		}
	})
}

// TestExportDownloadAndAnalytics: the export button's download has every response with the
// columns titled by label; the analytics page draws the chart and its table.
func TestExportDownloadAndAnalytics(t *testing.T) {
	db := persistencetest.SQLite(t, nil)
	h := newHarness(t, db, "http://127.0.0.1:8080")
	owner := h.owner()
	f, ids := responsesForm(t, h, db, 3)
	base := "/app/forms/" + f.ID()

	page := owner.get(base+"/responses").expect(t, http.StatusOK).body
	if !strings.Contains(page, `href="`+base+`/export?format=csv"`) || !strings.Contains(page, `data-expected-rows="3"`) {
		t.Fatalf("no CSV export link with the expected row count: %s", text(page))
	}
	p := owner.get(base+"/export?format=csv").expect(t, http.StatusOK)
	if ct := p.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") || !strings.HasPrefix(p.Header.Get("Content-Disposition"), `attachment; filename="Paint survey-`) {
		t.Fatalf("export headers: %q, %q", ct, p.Header.Get("Content-Disposition"))
	}
	records, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 4 || strings.Join(records[0][:5], "|") != "submission_id|submitted_at|Name|Email|Colour" {
		t.Fatalf("CSV: %d records, header %v", len(records), records[0])
	}
	for i, r := range records[1:] {
		colour := "Blue"
		if i%3 == 0 {
			colour = "Red"
		}
		if r[0] != ids[i] || r[2] != fmt.Sprintf("Person %d", i) || r[3] != fmt.Sprintf("person-%d@example.org", i) || r[4] != colour || r[5] != "api" {
			t.Fatalf("CSV row %d: %v", i, r)
		}
	}
	nd := owner.get(base+"/export?format=ndjson").expect(t, http.StatusOK)
	if n := strings.Count(strings.TrimSpace(nd.body), "\n") + 1; n != 3 || !strings.Contains(nd.body, `"Person 2"`) {
		t.Fatalf("NDJSON: %d lines", n)
	}
	x := owner.get(base+"/export?format=xlsx").expect(t, http.StatusOK)
	if !strings.HasPrefix(x.body, "PK") {
		t.Fatal("the XLSX download is not a workbook")
	}
	owner.get(base+"/export?format=pdf").expect(t, http.StatusBadRequest)

	a := owner.get(base+"/analytics?days=7").expect(t, http.StatusOK).body
	if !strings.Contains(a, "<svg") || strings.Count(a, `class="bar"`) != 7 || !strings.Contains(a, "Show the numbers as a table") ||
		strings.Count(a, `<th scope="row">`) != 7 {
		t.Fatalf("analytics: %s", text(a))
	}
	owner.get(base+"/analytics?days=0").expect(t, http.StatusBadRequest)
}

// TestValueFilterBoundsItsWork: a filtered page opens at most application.MaxScannedPerPage
// responses; when it stops short it says so, and its Next link goes on from there.
func TestValueFilterBoundsItsWork(t *testing.T) {
	db := persistencetest.SQLite(t, nil)
	h := newHarness(t, db, "http://127.0.0.1:8080")
	owner := h.owner()
	f, _ := responsesForm(t, h, db, 1) // Person 0, Red: the only match, and the oldest
	ctx := context.Background()
	sys := auth.WithPrincipal(ctx, auth.SystemPrincipal(f.WorkspaceID()))
	fs := f.Fields()
	n := capture.MaxScannedPerPage + 30
	for i := 1; i <= n; i++ {
		if _, err := h.app.Commands.CaptureSubmission.Handle(sys, capture.CaptureSubmission{FormID: f.ID(),
			Source: submission.SourceAPI, Data: map[string]submission.Input{fs[0].ID: fmt.Sprintf("Filler %d", i), fs[2].ID: "Blue"}}); err != nil {
			t.Fatal(err)
		}
	}
	base := "/app/forms/" + f.ID() + "/responses?" + url.Values{"field": {fs[2].ID}, "contains": {"red"}}.Encode()
	first := owner.get(base).expect(t, http.StatusOK).body
	if len(rowsOf(first)) != 0 || !strings.Contains(text(first), fmt.Sprintf("%d responses were searched for this page", capture.MaxScannedPerPage)) {
		t.Fatalf("the first filtered page did not stop at %d opened responses: %s", capture.MaxScannedPerPage, text(first))
	}
	next := nextLink.FindStringSubmatch(first)
	if next == nil {
		t.Fatal("no link to search on")
	}
	second := owner.get(html.UnescapeString(next[1])).expect(t, http.StatusOK).body
	if rows := rowsOf(second); len(rows) != 1 || !strings.Contains(rows[0], "Person 0") || nextLink.MatchString(second) {
		t.Fatalf("searching on: %d rows: %s", len(rows), text(second))
	}
}

// TestResponsesSourceSelectedAndNeighbours: the source filter (sealed metadata, compared once
// opened), "Export selected" of ticked IDs only, and a response's Previous/Next in the
// table's order under its filters, with Back keeping them, on both databases.
func TestResponsesSourceSelectedAndNeighbours(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		f, ids := responsesForm(t, h, db, 30)
		fs := f.Fields()
		base := "/app/forms/" + f.ID() + "/responses"
		ctx := context.Background()
		ws, err := persistence.NewWorkspaceRepository(db).Oldest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sys := auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID()))
		published := "published"
		if _, err := h.app.Commands.UpdateForm.Handle(sys, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Status: &published}}); err != nil {
			t.Fatal(err)
		}
		// Three responses from the form page, after the API ones.
		var fromPage []string
		for i := range 3 {
			s, err := h.app.Commands.CaptureSubmission.Handle(sys, capture.CaptureSubmission{FormID: f.ID(), Source: submission.SourceForm,
				Data: map[string]submission.Input{fs[0].ID: fmt.Sprintf("Walk-in %d", i)}})
			if err != nil {
				t.Fatal(err)
			}
			fromPage = append(fromPage, s.ID())
			testkit.PastMillisecond(t, time.Now())
		}

		// Source: the form page's three, newest first; the API's thirty over two pages.
		rows := rowsOf(owner.get(base+"?source=form").expect(t, http.StatusOK).body)
		if len(rows) != 3 || !strings.Contains(rows[0], "Walk-in 2") || !strings.Contains(rows[2], "Walk-in 0") {
			t.Fatalf("source=form: %d rows", len(rows))
		}
		api := owner.get(base+"?source=api").expect(t, http.StatusOK).body
		if rows = rowsOf(api); len(rows) != 25 || !strings.Contains(rows[0], "Person 29") {
			t.Fatalf("source=api: %d rows", len(rows))
		}
		if next := nextLink.FindStringSubmatch(api); next == nil || !strings.Contains(html.UnescapeString(next[1]), "source=api") {
			t.Fatal("the Next page forgets the source")
		}
		// Source and value together.
		if rows = rowsOf(owner.get(base + "?" + url.Values{"source": {"form"}, "field": {fs[0].ID}, "contains": {"walk-in 1"}}.Encode()).body); len(rows) != 1 {
			t.Fatalf("source=form and Walk-in 1: %d rows", len(rows))
		}
		owner.get(base+"?source=email").expect(t, http.StatusBadRequest)

		// Export selected: exactly the ticked responses, oldest first.
		p := owner.get("/app/forms/"+f.ID()+"/export?"+url.Values{"format": {"csv"}, "selected": {"1"},
			"id": {ids[7], fromPage[1], ids[3], ids[7]}}.Encode()).expect(t, http.StatusOK)
		records, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(records) != 4 || records[1][0] != ids[3] || records[2][0] != ids[7] || records[3][0] != fromPage[1] || records[3][2] != "Walk-in 1" {
			t.Fatalf("exported selection: %v", records)
		}
		owner.get("/app/forms/"+f.ID()+"/export?format=csv&selected=1").redirectsTo(t, base)
		tooMany := url.Values{"format": {"csv"}}
		for i := range capture.MaxExportIDs + 1 {
			tooMany.Add("id", fmt.Sprintf("sub_%d", i))
		}
		owner.get("/app/forms/"+f.ID()+"/export?"+tooMany.Encode()).expect(t, http.StatusBadRequest)

		// Previous and Next: the newest has no Previous; Next is the one just older.
		newer := regexp.MustCompile(`href="([^"]+)" rel="prev"`)
		older := regexp.MustCompile(`href="([^"]+)" rel="next"`)
		top := owner.get(base+"/"+fromPage[2]).expect(t, http.StatusOK).body
		if newer.MatchString(top) || !strings.Contains(older.FindStringSubmatch(top)[1], fromPage[1]) {
			t.Fatalf("the newest response's neighbours: %s", text(top))
		}
		// Under source=api, ids[29]'s Previous is none (the form page's are filtered out) and
		// Next is ids[28]; following Next keeps the filter; Back goes to the filtered table.
		d := owner.get(base+"/"+ids[29]+"?source=api").expect(t, http.StatusOK).body
		next := older.FindStringSubmatch(d)
		if newer.MatchString(d) || next == nil || html.UnescapeString(next[1]) != base+"/"+ids[28]+"?source=api" {
			t.Fatalf("neighbours of the newest API response: %s", text(d))
		}
		d = owner.get(html.UnescapeString(next[1])).expect(t, http.StatusOK).body
		if !strings.Contains(text(d), "Person 28") || !strings.Contains(d, `href="`+base+`?source=api"`) {
			t.Fatalf("after Next: %s", text(d))
		}
		if prev := newer.FindStringSubmatch(d); prev == nil || html.UnescapeString(prev[1]) != base+"/"+ids[29]+"?source=api" {
			t.Fatal("Previous from ids[28] is not ids[29]")
		}
		if last := owner.get(base+"/"+ids[0]+"?source=api").expect(t, http.StatusOK).body; older.MatchString(last) {
			t.Fatal("the oldest response has a Next")
		}
		owner.get(base+"/"+ids[0]+"?source=nope").expect(t, http.StatusBadRequest)
	})
}
