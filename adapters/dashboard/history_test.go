package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/test/testkit"
)

// TestFormHistory: an owner changes a form in the builder, reads its history (who, when, what
// changed), compares two versions, restores the first; responses stand under the labels of
// the version they answered. On both databases.
func TestFormHistory(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		f, subs := responsesForm(t, h, db, 2) // version 1: Name, Email, Colour (Red, Blue)
		base := "/app/forms/" + f.ID()
		name, colour := f.Fields()[0], f.Fields()[2]

		// Version 2: "Name" relabelled; version 3: Colour gets Green instead of Red and a rule.
		testkit.PastMillisecond(t, time.Now())
		owner.post(base+"/fields/"+name.ID, url.Values{"label": {"Full name"}, "required": {"on"}}).redirectsTo(t, base)
		testkit.PastMillisecond(t, time.Now())
		owner.post(base+"/fields/"+colour.ID, url.Values{"label": {"Colour"}, "options": {"Blue\nGreen"}}).redirectsTo(t, base)
		ws, err := persistence.NewWorkspaceRepository(db).Oldest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sys := auth.WithPrincipal(context.Background(), auth.SystemPrincipal(ws.ID()))
		late, err := h.app.Commands.CaptureSubmission.Handle(sys, capture.CaptureSubmission{FormID: f.ID(), Source: submission.SourceAPI,
			Data: map[string]submission.Input{name.ID: "Ada", colour.ID: "Green"}})
		if err != nil {
			t.Fatal(err)
		}

		// The builder names the version and links the history.
		b := owner.get(base).expect(t, http.StatusOK).body
		if !strings.Contains(b, `href="`+base+`/history"`) || !strings.Contains(b, "(version 3)") {
			t.Fatalf("the builder does not link the history: %s", text(b))
		}
		hist := html.UnescapeString(owner.get(base+"/history").expect(t, http.StatusOK).body)
		for _, want := range []string{"Version 3", "Current", "Version 2", "Version 1", "The form as it was created.",
			"1 relabelled", "Relabelled “Name” to “Full name”", "1 changed", "Changed “Colour”: options (1 added, 1 removed)",
			"Ada Lovelace", // the owner's name: who made versions 2 and 3
			base + "/history/compare?from=2&to=3", base + "/history/1/restore"} {
			if !strings.Contains(hist, want) {
				t.Fatalf("history lacks %q: %s", want, text(hist))
			}
		}
		if strings.Contains(hist, base+"/history/3/restore") {
			t.Fatal("the current version offers a restore")
		}

		// Compare 1 with 3: the label and the options, before and after.
		cmp := html.UnescapeString(owner.get(base+"/history/compare?from=1&to=3").expect(t, http.StatusOK).body)
		for _, want := range []string{"Version 1 and version 3", "Changed", "Full name", "Options", "Red, Blue", "Blue, Green",
			"Added option</span> Green", "Removed option</span> Red", "1 unchanged"} {
			if !strings.Contains(cmp, want) {
				t.Fatalf("compare lacks %q: %s", want, text(cmp))
			}
		}
		owner.get(base+"/history/compare?from=1&to=9").expect(t, http.StatusNotFound)

		// Responses: the table marks the ones of version 1 and shows the question as asked;
		// the detail of an early one uses version 1's labels, the late one the current.
		table := html.UnescapeString(owner.get(base+"/responses").expect(t, http.StatusOK).body)
		if !strings.Contains(table, "v1") || !strings.Contains(table, "asked as “Name”") {
			t.Fatalf("the table does not mark earlier versions: %s", text(table))
		}
		early := html.UnescapeString(owner.get(base+"/responses/"+subs[0]).expect(t, http.StatusOK).body)
		if !strings.Contains(early, "answered version 1 of the form") || !strings.Contains(early, "<dt>Name</dt>") || strings.Contains(early, "<dt>Full name</dt>") {
			t.Fatalf("the early response is not under version 1's labels: %s", text(early))
		}
		now := html.UnescapeString(owner.get(base+"/responses/"+late.ID()).expect(t, http.StatusOK).body)
		if strings.Contains(now, "answered version") || !strings.Contains(now, "<dt>Full name</dt>") {
			t.Fatalf("the late response: %s", text(now))
		}

		// Restore: a viewer may not; the confirmation changes nothing; the restore makes version 4.
		viewer := h.member(owner, "grace@example.org", "viewer")
		viewer.get(base+"/history/1/restore").expect(t, http.StatusForbidden)
		viewer.post(base+"/history/1/restore", nil).expect(t, http.StatusForbidden)
		conf := html.UnescapeString(owner.get(base+"/history/1/restore").expect(t, http.StatusOK).body)
		if !strings.Contains(conf, "Restore version 1 of Paint survey?") || !strings.Contains(conf, "new version 4") {
			t.Fatalf("confirmation: %s", text(conf))
		}
		owner.get(base+"/history/7/restore").expect(t, http.StatusNotFound)
		owner.post(base+"/history/1/restore", nil).redirectsTo(t, base+"/history")
		after := html.UnescapeString(owner.get(base+"/history").expect(t, http.StatusOK).body)
		if !strings.Contains(after, "Version 1 restored as version 4.") || !strings.Contains(after, "Version 4") {
			t.Fatalf("after the restore: %s", text(after))
		}
		fv, err := h.app.Queries.GetForm.Handle(sys, forms.GetForm{ID: f.ID()})
		if err != nil {
			t.Fatal(err)
		}
		got := fv.Form.Fields()
		if fv.Form.Version() != 4 || got[0].Label != "Name" || got[0].ID != name.ID || fmt.Sprint(got[2].Options) != "[Red Blue]" {
			t.Fatalf("restored form: version %d, fields %+v", fv.Form.Version(), got)
		}

		// Twenty versions a page, newest first; "Older versions" leads to the rest, each still
		// compared with the version before it.
		for i := 5; i <= 22; i++ {
			owner.post(base+"/fields/"+name.ID, url.Values{"label": {fmt.Sprintf("Name %d", i)}, "required": {"on"}}).redirectsTo(t, base)
		}
		first := html.UnescapeString(owner.get(base+"/history").expect(t, http.StatusOK).body)
		if strings.Count(first, `<li class="version"`) != 20 || !strings.Contains(first, "Relabelled “Name 21” to “Name 22”") || !strings.Contains(first, "22 in all") {
			t.Fatalf("first page of the history: %s", text(first))
		}
		older := html.UnescapeString(owner.get(base+"/history?before=3").expect(t, http.StatusOK).body)
		if !strings.Contains(first, `href="`+base+`/history?before=3"`) || strings.Count(older, `<li class="version"`) != 2 ||
			!strings.Contains(older, "Relabelled “Name” to “Full name”") || !strings.Contains(older, "The form as it was created.") {
			t.Fatalf("older versions: %s", text(older))
		}

		// An archived form keeps its history but restores nothing.
		owner.post(base+"/status", url.Values{"status": {"archived"}}).expect(t, http.StatusSeeOther)
		arch := owner.get(base+"/history").expect(t, http.StatusOK).body
		if strings.Contains(arch, "/restore") || !strings.Contains(arch, "archived") {
			t.Fatalf("archived history: %s", text(arch))
		}
		owner.post(base+"/history/2/restore", nil).expect(t, http.StatusConflict)
	})
}
