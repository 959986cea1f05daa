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
	responseRows = regexp.MustCompile(`(?s)<tr>\s*(?:<td data-label="Select">.*?</td>\s*)?<td data-label="Received">.*?</tr>`)
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

		// Column choice stays in the links.
		cols := owner.get(base+"?col="+fs[0].ID).expect(t, http.StatusOK).body
		if !strings.Contains(cols, `<th scope="col">Name</th>`) || strings.Contains(cols, `<th scope="col">Colour</th>`) {
			t.Fatal("column choice: Colour shown or Name missing")
		}
		if next := nextLink.FindStringSubmatch(cols); next == nil || !strings.Contains(html.UnescapeString(next[1]), "col="+fs[0].ID) {
			t.Fatal("the Next link forgets the columns")
		}

		// Detail with metadata.
		detail := text(owner.get(base+"/"+ids[29]).expect(t, http.StatusOK).body)
		for _, want := range []string{"Person 29", "person-29@example.org", "Blue", "API", "https://blog.example.com/post", "utm_source", "newsletter", ids[29]} {
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
		if len(rowsOf(vp)) != 4 || strings.Contains(vp, "Delete selected") || strings.Contains(vp, `name="id"`) {
			t.Fatal("a viewer sees the rows without the delete controls")
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
		strings.Count(a, `<th scope="row"><time`) != 7 {
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
