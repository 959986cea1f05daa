package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/submission"
)

var (
	formPath  = regexp.MustCompile(`^/app/forms/(frm_[A-Za-z0-9_\-]+)`)
	fieldIDs  = regexp.MustCompile(`<li class="fb-field" id="field-(fld_[A-Za-z0-9_\-]+)"`)
	allTypes  = []string{"text", "textarea", "email", "number", "date", "dropdown", "radio", "checkbox", "file"}
	typeNames = map[string]string{"text": "Short text", "textarea": "Long text", "email": "Email", "number": "Number", "date": "Date",
		"dropdown": "Dropdown", "radio": "Single choice (radio)", "checkbox": "Checkboxes", "file": "File upload"}
)

// createForm creates a form through the list page and returns its ID.
func createForm(t *testing.T, b *browser, name string) string {
	t.Helper()
	p := b.post("/app/forms", url.Values{"name": {name}}).redirectsTo(t, "/app/forms/frm_")
	m := formPath.FindStringSubmatch(p.Header.Get("Location"))
	if m == nil {
		t.Fatalf("no form ID in %q", p.Header.Get("Location"))
	}
	return m[1]
}

func fieldsOf(t *testing.T, b *browser, id string) (ids []string, body string) {
	t.Helper()
	body = b.get("/app/forms/"+id).expect(t, http.StatusOK).body
	for _, m := range fieldIDs.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids, body
}

// TestFormsBuilderBuildsAndPublishes creates a form, adds one field of each of the nine types,
// edits options and file limits, reorders with the buttons and with a full order, shows a
// domain validation error next to its control, publishes, previews, duplicates and deletes.
func TestFormsBuilderBuildsAndPublishes(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()

		// An empty name is refused next to the name input.
		p := b.post("/app/forms", url.Values{"name": {"   "}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `id="f-name" name="name"`) || !regexp.MustCompile(`id="f-name-error">[^<]+</span>`).MatchString(p.body) {
			t.Fatalf("no error next to the name input: %s", text(p.body))
		}

		id := createForm(t, b, "Event registration")
		for _, typ := range allTypes {
			b.post("/app/forms/"+id+"/fields", url.Values{"type": {typ}, "label": {"My " + typ}}).redirectsTo(t, "/app/forms/"+id)
		}
		ids, body := fieldsOf(t, b, id)
		if len(ids) != 9 {
			t.Fatalf("%d fields after adding nine: %s", len(ids), text(body))
		}
		for _, typ := range allTypes {
			if !strings.Contains(body, "<strong>My "+typ+"</strong> <span class=\"badge\">"+typeNames[typ]+"</span>") {
				t.Fatalf("the builder does not show the %s field: %s", typ, text(body))
			}
		}

		// An unknown type is refused next to the type select, and nothing is added.
		p = b.post("/app/forms/"+id+"/fields", url.Values{"type": {"signature"}, "label": {"Sign"}}).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="add-type-error">[^<]+</span>`).MatchString(p.body) || !strings.Contains(p.body, `value="Sign"`) {
			t.Fatalf("no error next to the type select: %s", text(p.body))
		}

		// Edit the checkbox field's options and the file field's limits.
		checkbox, file, dropdown := ids[7], ids[8], ids[5]
		b.post("/app/forms/"+id+"/fields/"+checkbox, url.Values{"label": {"Topics"}, "options": {"Go\r\nRust\r\n\r\nZig"}, "required": {"1"}}).
			redirectsTo(t, "/app/forms/"+id)
		b.post("/app/forms/"+id+"/fields/"+file, url.Values{"label": {"CV"}, "accept": {"application/pdf, image/*"}, "max_file_mb": {"2"}}).
			redirectsTo(t, "/app/forms/"+id)
		_, body = fieldsOf(t, b, id)
		if !strings.Contains(body, ">Go\nRust\nZig</textarea>") || !strings.Contains(body, `value="application/pdf, image/*"`) || !strings.Contains(body, `value="2"`) {
			t.Fatalf("edits not kept: %s", body)
		}

		// A dropdown without options: the domain's error (fields[5].options) sits next to the
		// options of that field, with what was typed kept.
		p = b.post("/app/forms/"+id+"/fields/"+dropdown, url.Values{"label": {"Size kept"}, "options": {"  \n "}}).expect(t, http.StatusUnprocessableEntity)
		errRe := regexp.MustCompile(`id="o-` + dropdown + `-error">([^<]+)</span>`)
		if m := errRe.FindStringSubmatch(p.body); m == nil || !strings.Contains(m[1], "Options are required") {
			t.Fatalf("no options error next to the dropdown's options: %s", text(p.body))
		}
		if !strings.Contains(p.body, `value="Size kept"`) || !strings.Contains(p.body, `id="o-`+dropdown+`" name="options" rows="4" aria-invalid="true"`) {
			t.Fatalf("the failed edit was not drawn again: %s", p.body)
		}

		// Move the second field up, then the first one down again.
		b.post("/app/forms/"+id+"/fields/"+ids[1]+"/move", url.Values{"direction": {"up"}}).redirectsTo(t, "/app/forms/"+id)
		got, _ := fieldsOf(t, b, id)
		if got[0] != ids[1] || got[1] != ids[0] {
			t.Fatalf("after Move up: %v, want %s first", got, ids[1])
		}
		b.post("/app/forms/"+id+"/fields/"+ids[1]+"/move", url.Values{"direction": {"down"}}).redirectsTo(t, "/app/forms/"+id)
		// A full order, as drag and drop posts it: the last field first.
		order := append([]string{ids[8]}, ids[:8]...)
		b.post("/app/forms/"+id+"/order", url.Values{"order": {strings.Join(order, ",")}}).redirectsTo(t, "/app/forms/"+id)
		if got, _ = fieldsOf(t, b, id); strings.Join(got, ",") != strings.Join(order, ",") {
			t.Fatalf("order %v, want %v", got, order)
		}
		// An order that leaves a field out is refused and changes nothing.
		b.post("/app/forms/"+id+"/order", url.Values{"order": {strings.Join(ids[:8], ",")}}).expect(t, http.StatusConflict)

		// Settings: a bad origin is shown next to its textarea; good ones are kept.
		p = b.post("/app/forms/"+id+"/settings", url.Values{"name": {"Event registration"}, "frame_ancestors": {"not an origin"}, "min_fill_seconds": {"3"}, "honeypot": {"1"}}).
			expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="s-frame-error">[^<]+</span>`).MatchString(p.body) {
			t.Fatalf("no error next to the framing origins: %s", text(p.body))
		}
		// Origins are read by the one origin parser: a wildcard is refused next to its
		// textarea, with the other settings' problems in the same answer.
		p = b.post("/app/forms/"+id+"/settings", url.Values{"name": {"Event registration"}, "allowed_origins": {"https://*.example.com"},
			"min_fill_seconds": {"-1"}}).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="s-allowed-error">[^<]+</span>`).MatchString(p.body) || !regexp.MustCompile(`id="s-minfill-error">[^<]+</span>`).MatchString(p.body) {
			t.Fatalf("no errors next to the allowed origins and the fill time: %s", text(p.body))
		}
		b.post("/app/forms/"+id+"/settings", url.Values{"name": {"Event registration 2026"}, "thank_you_message": {"See you there!"},
			"frame_ancestors": {"https://www.example.com"}, "allowed_origins": {"HTTP://[0:0::1]:8080\r\nhttps://www.example.com:443"},
			"min_fill_seconds": {"3"}, "honeypot": {"1"}}).redirectsTo(t, "/app/forms/"+id+"?tab=settings")
		if body := b.get("/app/forms/"+id+"?tab=settings").expect(t, http.StatusOK).body; !strings.Contains(body, ">http://[::1]:8080\nhttps://www.example.com</textarea>") {
			t.Fatalf("allowed origins not kept in canonical form: %s", body)
		}

		// Save and resume: a lifetime out of range is refused next to its input, typed value kept.
		p = b.post("/app/forms/"+id+"/settings", url.Values{"name": {"Event registration 2026"}, "thank_you_message": {"See you there!"},
			"frame_ancestors": {"https://www.example.com"}, "min_fill_seconds": {"3"}, "honeypot": {"1"},
			"partial_enabled": {"1"}, "partial_ttl_days": {"400"}}).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="s-partial-days-error">[^<]+</span>`).MatchString(p.body) || !strings.Contains(p.body, `name="partial_ttl_days" type="text" inputmode="numeric" value="400"`) {
			t.Fatalf("no error next to the draft lifetime: %s", text(p.body))
		}
		b.post("/app/forms/"+id+"/settings", url.Values{"name": {"Event registration 2026"}, "thank_you_message": {"See you there!"},
			"frame_ancestors": {"https://www.example.com"}, "allowed_origins": {"HTTP://[0:0::1]:8080\r\nhttps://www.example.com:443"},
			"min_fill_seconds": {"3"}, "honeypot": {"1"}, "partial_enabled": {"1"}, "partial_ttl_days": {"14"}}).redirectsTo(t, "/app/forms/"+id+"?tab=settings")
		if body := b.get("/app/forms/"+id+"?tab=settings").expect(t, http.StatusOK).body; !strings.Contains(body, `name="partial_enabled" type="checkbox" value="1" checked`) ||
			!strings.Contains(body, `value="14"`) {
			t.Fatalf("save and resume not kept: %s", text(body))
		}

		// Remove a field.
		b.post("/app/forms/"+id+"/fields/"+ids[0]+"/remove", nil).redirectsTo(t, "/app/forms/"+id)
		if got, _ = fieldsOf(t, b, id); len(got) != 8 {
			t.Fatalf("%d fields after removing one", len(got))
		}

		// Publish; the share panel holds the public link, the snippets and the QR code.
		b.post("/app/forms/"+id+"/status", url.Values{"status": {"published"}}).redirectsTo(t, "/app/forms/"+id)
		cur, _ := fieldsOf(t, b, id)
		body = b.get("/app/forms/"+id+"?tab=share").expect(t, http.StatusOK).body + b.get("/app/forms/"+id+"?tab=settings").expect(t, http.StatusOK).body
		pub := "http://127.0.0.1:8080/f/" + id
		for _, want := range []string{`<span class="badge badge-green">published</span>`, pub, "&lt;iframe", `src="data:image/png;base64,`, "See you there!",
			// The three recipes: the frame, the script posting JSON (with this form's fields), the plain HTML form.
			`id="snip-iframe"`, "src=&#34;" + pub + "&#34;", `id="snip-json"`, "const FORM = &#34;" + pub + "&#34;;", "name=&#34;" + cur[1] + "&#34;",
			`data-copy="snip-json"`, `id="snip-form"`} {
			if !strings.Contains(body, want) {
				t.Fatalf("builder after publishing lacks %q", want)
			}
		}
		if strings.Contains(body, "forms.example.com") {
			t.Fatal("the share panel shows the documentation's example address")
		}

		// The preview is the public template, framable by the dashboard only.
		pv := b.get("/app/forms/"+id+"/preview").expect(t, http.StatusOK)
		if !strings.Contains(pv.body, `id="fw-form"`) || !strings.Contains(pv.body, "Topics") ||
			!strings.Contains(pv.Header.Get("Content-Security-Policy"), "frame-ancestors 'self'") {
			t.Fatalf("preview: %s %s", pv.Header.Get("Content-Security-Policy"), text(pv.body))
		}

		// The list: search, duplicate, delete with a confirmation.
		other := createForm(t, b, "Feedback")
		list := b.get("/app/forms?q=REGISTRATION").expect(t, http.StatusOK).body
		if !strings.Contains(list, "Event registration 2026") || strings.Contains(list, "/app/forms/"+other+`"`) {
			t.Fatalf("search: %s", text(list))
		}
		dup := b.post("/app/forms/"+id+"/duplicate", nil).redirectsTo(t, "/app/forms/frm_")
		copyID := formPath.FindStringSubmatch(dup.Header.Get("Location"))[1]
		if got, body := fieldsOf(t, b, copyID); len(got) != 8 || !strings.Contains(body, "Copy of Event registration 2026") || !strings.Contains(body, ">draft</span>") {
			t.Fatalf("copy: %d fields: %s", len(got), text(body))
		}
		c := b.get("/app/forms/"+other+"/delete").expect(t, http.StatusOK)
		if !strings.Contains(c.body, "Delete Feedback?") {
			t.Fatalf("confirmation: %s", text(c.body))
		}
		b.post("/app/forms/"+other+"/delete", nil).redirectsTo(t, "/app/forms")
		b.get("/app/forms/"+other).expect(t, http.StatusNotFound)
	})
}

// TestFormsViewerCannotChange: a viewer reads the list and the builder without change controls,
// and every change is refused by the server.
func TestFormsViewerCannotChange(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	id := createForm(t, owner, "Survey")
	owner.post("/app/forms/"+id+"/fields", url.Values{"type": {"text"}, "label": {"Name"}}).redirectsTo(t, "/app/forms/"+id)
	ids, _ := fieldsOf(t, owner, id)
	viewer := h.member(owner, "grace@example.org", "viewer")

	list := viewer.get("/app/forms").expect(t, http.StatusOK).body
	if !strings.Contains(list, "Survey") || strings.Contains(list, "Create form") || strings.Contains(list, "Duplicate") || strings.Contains(list, "/delete") {
		t.Fatalf("a viewer's list offers changes: %s", text(list))
	}
	body := viewer.get("/app/forms/"+id).expect(t, http.StatusOK).body
	body += viewer.get("/app/forms/"+id+"?tab=settings").expect(t, http.StatusOK).body
	for _, bad := range []string{"Add question", "Add hidden field", "Move up", "Duplicate", "Publish", "Save settings", "Save:", "/remove", "/breaks"} {
		if strings.Contains(body, bad) {
			t.Fatalf("a viewer's builder offers %q", bad)
		}
	}
	viewer.post("/app/forms", url.Values{"name": {"Mine"}}).expect(t, http.StatusForbidden)
	viewer.post("/app/forms/"+id+"/fields", url.Values{"type": {"text"}, "label": {"X"}}).expect(t, http.StatusForbidden)
	viewer.post("/app/forms/"+id+"/fields/"+ids[0], url.Values{"label": {"X"}}).expect(t, http.StatusForbidden)
	viewer.post("/app/forms/"+id+"/status", url.Values{"status": {"published"}}).expect(t, http.StatusForbidden)
	viewer.post("/app/forms/"+id+"/duplicate", nil).expect(t, http.StatusForbidden)
	viewer.get("/app/forms/"+id+"/delete").expect(t, http.StatusForbidden)
	viewer.post("/app/forms/"+id+"/delete", nil).expect(t, http.StatusForbidden)
	if _, body := fieldsOf(t, owner, id); !strings.Contains(body, ">draft</span>") || !strings.Contains(body, "<strong>Name</strong>") {
		t.Fatalf("a viewer's refused requests changed the form: %s", text(body))
	}
}

// TestFormsListShowsLastResponse: the forms list shows when each form last received a response,
// as a relative time with the exact time in <time datetime> and its title; "None yet" without.
func TestFormsListShowsLastResponse(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		busy := createForm(t, b, "Busy form")
		createForm(t, b, "Quiet form")
		b.post("/app/forms/"+busy+"/fields", url.Values{"type": {"text"}, "label": {"Name"}}).redirectsTo(t, "/app/forms/"+busy)
		sctx, _ := systemCtx(t, db)
		fv, err := h.app.Queries.GetForm.Handle(sctx, forms.GetForm{ID: busy})
		if err != nil {
			t.Fatal(err)
		}
		s, err := h.app.Commands.CaptureSubmission.Handle(sctx, capture.CaptureSubmission{FormID: busy,
			Source: submission.SourceAPI, Data: map[string]submission.Input{fv.Form.Fields()[0].ID: "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		list := b.get("/app/forms").expect(t, http.StatusOK).body
		rows := regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(list, -1)
		var busyRow, quietRow string
		for _, r := range rows {
			switch {
			case strings.Contains(r, "Busy form"):
				busyRow = r
			case strings.Contains(r, "Quiet form"):
				quietRow = r
			}
		}
		at := s.SubmittedAt().UTC()
		want := `<time datetime="` + at.Format("2006-01-02T15:04:05Z07:00") + `" title="` + at.Format("2 Jan 2006, 15:04 UTC") + `">just now</time>`
		if !strings.Contains(list, `<th scope="col">Last response</th>`) || !strings.Contains(busyRow, want) {
			t.Fatalf("the busy form's row has no last response %s: %s", want, busyRow)
		}
		if !strings.Contains(quietRow, `data-label="Last response"><span class="muted">None yet</span>`) {
			t.Fatalf("the quiet form's row: %s", quietRow)
		}
	})
}

// TestFormsListFiltersByStatus: the list's status links show only the forms of that status,
// keep the search words, mark the current link, and an unknown status gets a clear message
// with every form still shown.
func TestFormsListFiltersByStatus(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	b := h.owner()
	live := createForm(t, b, "Live survey")
	b.post("/app/forms/"+live+"/fields", url.Values{"type": {"text"}, "label": {"Name"}}).redirectsTo(t, "/app/forms/"+live)
	b.post("/app/forms/"+live+"/status", url.Values{"status": {"published"}}).redirectsTo(t, "/app/forms/"+live)
	draft := createForm(t, b, "Draft survey")
	row := func(id string) string { return `href="/app/forms/` + id + `"` }

	all := b.get("/app/forms").expect(t, http.StatusOK).body
	if !strings.Contains(all, row(live)) || !strings.Contains(all, row(draft)) || !strings.Contains(all, `href="/app/forms" aria-current="page">All`) {
		t.Fatalf("all forms: %s", text(all))
	}
	published := b.get("/app/forms?status=published").expect(t, http.StatusOK).body
	if !strings.Contains(published, row(live)) || strings.Contains(published, row(draft)) ||
		!strings.Contains(published, `aria-current="page">Published`) || !strings.Contains(published, `name="status" value="published"`) {
		t.Fatalf("published forms: %s", text(published))
	}
	drafts := b.get("/app/forms?status=draft&q=survey").expect(t, http.StatusOK).body
	if strings.Contains(drafts, row(live)) || !strings.Contains(drafts, row(draft)) || !strings.Contains(drafts, `href="/app/forms?q=survey&amp;status=published"`) {
		t.Fatalf("drafts matching the search: %s", text(drafts))
	}
	archived := b.get("/app/forms?status=archived").expect(t, http.StatusOK).body
	if strings.Contains(archived, row(live)) || strings.Contains(archived, row(draft)) || !strings.Contains(archived, "No form has this status.") {
		t.Fatalf("archived forms: %s", text(archived))
	}
	unknown := b.get("/app/forms?status=live").expect(t, http.StatusBadRequest).body
	if !strings.Contains(unknown, "There is no status “live”") || !strings.Contains(unknown, row(live)) || !strings.Contains(unknown, row(draft)) {
		t.Fatalf("unknown status: %s", text(unknown))
	}
}

// TestLiveFormAsksBeforeLeavingPublication: on a live form, Archive and Back to draft lead to a
// confirmation that says the public link stops taking responses and how many responses stay;
// confirming changes the status, and a viewer cannot reach the confirmation.
func TestLiveFormAsksBeforeLeavingPublication(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	b := h.owner()
	id := createForm(t, b, "Open day")
	b.post("/app/forms/"+id+"/fields", url.Values{"type": {"text"}, "label": {"Name"}}).redirectsTo(t, "/app/forms/"+id)

	draft := b.get("/app/forms/"+id).expect(t, http.StatusOK).body
	if strings.Contains(draft, "/status?to=") {
		t.Fatalf("a draft asks before archiving: %s", text(draft))
	}
	b.post("/app/forms/"+id+"/status", url.Values{"status": {"published"}}).redirectsTo(t, "/app/forms/"+id)
	live := b.get("/app/forms/"+id).expect(t, http.StatusOK).body
	if !strings.Contains(live, `href="/app/forms/`+id+`/status?to=archived"`) || !strings.Contains(live, `href="/app/forms/`+id+`/status?to=draft"`) ||
		strings.Contains(live, `name="status" value="archived"`) {
		t.Fatalf("a live form archives without asking: %s", text(live))
	}
	for to, heading := range map[string]string{"archived": "Archive Open day?", "draft": "Move Open day back to draft?"} {
		c := b.get("/app/forms/"+id+"/status?to="+to).expect(t, http.StatusOK).body
		for _, want := range []string{heading, "http://127.0.0.1:8080/f/" + id + ", stops taking responses at once", "Its 0 responses and their files stay.",
			`action="/app/forms/` + id + `/status"`, `name="status" value="` + to + `"`} {
			if !strings.Contains(c, want) {
				t.Fatalf("confirmation for %s lacks %q: %s", to, want, text(c))
			}
		}
	}
	b.get("/app/forms/"+id+"/status?to=published").redirectsTo(t, "/app/forms/"+id)
	viewer := h.member(b, "grace@example.org", "viewer")
	viewer.get("/app/forms/"+id+"/status?to=archived").expect(t, http.StatusForbidden)

	b.post("/app/forms/"+id+"/status", url.Values{"status": {"archived"}}).redirectsTo(t, "/app/forms/"+id)
	if body := b.get("/app/forms/"+id).expect(t, http.StatusOK).body; !strings.Contains(body, ">archived</span>") {
		t.Fatalf("after confirming: %s", text(body))
	}
}

// TestFormsBuilderEditsHelp: the Edit details of a field carry a Help text textarea; its line
// breaks are kept (CRLF posted, LF stored), an over-long one is refused next to it with what was
// typed kept, and a blank one removes the help.
func TestFormsBuilderEditsHelp(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		id := createForm(t, b, "Help texts")
		b.post("/app/forms/"+id+"/fields", url.Values{"type": {"text"}, "label": {"Name"}}).redirectsTo(t, "/app/forms/"+id)
		ids, body := fieldsOf(t, b, id)
		if len(ids) != 1 {
			t.Fatalf("fields %v", ids)
		}
		fld := ids[0]
		if !strings.Contains(body, `<label for="h-`+fld+`">Help text</label>`) || !strings.Contains(body, `<textarea id="h-`+fld+`" name="help"`) {
			t.Fatalf("no help textarea in the field's edit form: %s", body)
		}

		b.post("/app/forms/"+id+"/fields/"+fld, url.Values{"label": {"Name"}, "help": {"As on your ID <b>card</b>.\r\nWe print it."}}).
			redirectsTo(t, "/app/forms/"+id)
		_, body = fieldsOf(t, b, id)
		if !regexp.MustCompile(`<textarea id="h-` + fld + `" name="help"[^>]*>As on your ID &lt;b&gt;card&lt;/b&gt;.\nWe print it.</textarea>`).MatchString(body) {
			t.Fatalf("help not kept: %s", body)
		}

		long := strings.Repeat("é", 1001)
		p := b.post("/app/forms/"+id+"/fields/"+fld, url.Values{"label": {"Full name"}, "help": {long}}).expect(t, http.StatusUnprocessableEntity)
		if m := regexp.MustCompile(`id="h-` + fld + `-error">([^<]+)</span>`).FindStringSubmatch(p.body); m == nil || !strings.Contains(m[1], "1000") {
			t.Fatalf("no length error next to the help textarea: %s", text(p.body))
		}
		if !strings.Contains(p.body, `name="help" rows="2" maxlength="1000" aria-invalid="true"`) || !strings.Contains(p.body, ">"+long+"</textarea>") ||
			!strings.Contains(p.body, `value="Full name"`) {
			t.Fatalf("the failed edit was not drawn again with what was typed: %s", text(p.body))
		}

		b.post("/app/forms/"+id+"/fields/"+fld, url.Values{"label": {"Name"}, "help": {"  \r\n "}}).redirectsTo(t, "/app/forms/"+id)
		_, body = fieldsOf(t, b, id)
		if !strings.Contains(body, `aria-describedby="h-`+fld+`-hint h-`+fld+`-error"></textarea>`) {
			t.Fatalf("a blank help was kept: %s", body)
		}
	})
}
