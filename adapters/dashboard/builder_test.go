package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// layoutTokens reads the questions' order from the builder: field IDs, and "|" for a page break.
var layoutItem = regexp.MustCompile(`<li class="fb-(?:field" id="field-(fld_[A-Za-z0-9_\-]+)"|break" id="break-\d+")`)

func layoutTokens(t *testing.T, b *browser, id string) string {
	t.Helper()
	body := b.get("/app/forms/"+id).expect(t, http.StatusOK).body
	body, _, _ = strings.Cut(body, `id="hidden"`)
	var out []string
	for _, m := range layoutItem.FindAllStringSubmatch(body, -1) {
		if m[1] == "" {
			out = append(out, "|")
		} else {
			out = append(out, m[1])
		}
	}
	return strings.Join(out, ",")
}

// TestBuilderPagesLogicAndHiddenFields builds, through the builder alone, what the API can say:
// a question inserted between two others, a page break moved and removed (a question moved
// above it moves to the earlier page), a display rule from pickers read as a sentence, a
// hidden field with its prefill link, a duplicated question; and every refusal is shown where
// it belongs and changes nothing.
func TestBuilderPagesLogicAndHiddenFields(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		id := createForm(t, b, "Open day")
		base := "/app/forms/" + id
		b.post(base+"/fields", url.Values{"type": {"radio"}, "label": {"Role"}}).redirectsTo(t, base)
		b.post(base+"/fields", url.Values{"type": {"text"}, "label": {"School"}}).redirectsTo(t, base)
		b.post(base+"/fields", url.Values{"type": {"email"}, "label": {"Email"}}).redirectsTo(t, base)
		ids, _ := fieldsOf(t, b, id)
		role, school, email := ids[0], ids[1], ids[2]
		b.post(base+"/fields/"+role, url.Values{"label": {"Role"}, "options": {"Student\nStaff"}, "key": {"role"}}).redirectsTo(t, base)

		// "+" below Role: the new question lands between Role and School.
		b.post(base+"/fields", url.Values{"type": {"text"}, "label": {"Name"}, "after": {role}}).redirectsTo(t, base)
		ids, _ = fieldsOf(t, b, id)
		name := ids[1]
		if got := layoutTokens(t, b, id); got != strings.Join([]string{role, name, school, email}, ",") {
			t.Fatalf("after inserting below Role: %s", got)
		}

		// A page break after Name: School and Email are on page 2.
		b.post(base+"/breaks", url.Values{"after": {name}}).redirectsTo(t, base)
		if got := layoutTokens(t, b, id); got != strings.Join([]string{role, name, "|", school, email}, ",") {
			t.Fatalf("after the page break: %s", got)
		}
		body := b.get(base).expect(t, http.StatusOK).body
		if !strings.Contains(body, "Page 1 of 2") || !strings.Contains(body, "Page 2 of 2") {
			t.Fatalf("pages not shown: %s", text(body))
		}
		// Moving School up passes the break: School goes to the end of page 1.
		b.post(base+"/fields/"+school+"/move", url.Values{"direction": {"up"}}).redirectsTo(t, base)
		if got := layoutTokens(t, b, id); got != strings.Join([]string{role, name, school, "|", email}, ",") {
			t.Fatalf("after moving School above the break: %s", got)
		}
		// Moving the break down past Email would leave page 2 empty: refused in words, nothing changes.
		p := b.post(base+"/breaks/1", url.Values{"direction": {"down"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(text(p.body), "Page 2 would have no questions") {
			t.Fatalf("no message for an empty page: %s", text(p.body))
		}
		// Moving the break up puts School on page 2 again.
		b.post(base+"/breaks/1", url.Values{"direction": {"up"}}).redirectsTo(t, base)
		if got := layoutTokens(t, b, id); got != strings.Join([]string{role, name, "|", school, email}, ",") {
			t.Fatalf("after moving the break up: %s", got)
		}
		// Drag and drop posts the whole order with "|" for breaks.
		b.post(base+"/order", url.Values{"order": {strings.Join([]string{name, role, "|", email, school}, ",")}}).redirectsTo(t, base)
		if got := layoutTokens(t, b, id); got != strings.Join([]string{name, role, "|", email, school}, ",") {
			t.Fatalf("after the drag order: %s", got)
		}
		b.post(base+"/order", url.Values{"order": {strings.Join([]string{name, role, "|", email, school, "|"}, ",")}}).expect(t, http.StatusUnprocessableEntity)

		// Logic from pickers: School shows when Role is Student, read as a sentence.
		p = b.post(base+"/fields/"+school, url.Values{"label": {"School"}, "logic": {"when"}, "match": {"all"},
			"cf_0": {role}, "co_0": {"equals"}, "cv_0": {"Teacher"}}).expect(t, http.StatusUnprocessableEntity)
		if m := regexp.MustCompile(`id="cv-` + school + `-0-error">([^<]+)</span>`).FindStringSubmatch(p.body); m == nil || !strings.Contains(m[1], "not an option") {
			t.Fatalf("no error next to the condition's value: %s", text(p.body))
		}
		b.post(base+"/fields/"+school, url.Values{"label": {"School"}, "logic": {"when"}, "match": {"all"},
			"cf_0": {role}, "co_0": {"equals"}, "cv_0": {"Student"}}).redirectsTo(t, base)
		body = b.get(base).expect(t, http.StatusOK).body
		if !strings.Contains(body, "Shown when <em>Role</em> is <em>Student</em>") {
			t.Fatalf("no logic sentence: %s", text(body))
		}
		// The pickers offer the questions before School (Email is before it on page 2), not School
		// itself, and the values of the chosen one.
		edit := body[strings.Index(body, `id="field-`+school+`"`):]
		edit = edit[:strings.Index(edit, "</li>")]
		if !strings.Contains(edit, `<option value="Student" selected>Student</option>`) || !strings.Contains(edit, `<option value="`+email+`"`) || strings.Contains(edit, `<option value="`+school+`"`) {
			t.Fatalf("pickers: %q", edit)
		}

		// A hidden field, filled from the link by its key.
		b.post(base+"/fields", url.Values{"hidden": {"1"}, "label": {"Campaign"}, "key": {"utm_source"}}).redirectsTo(t, base)
		body = b.get(base).expect(t, http.StatusOK).body
		if !strings.Contains(body, "http://127.0.0.1:8080/f/"+id+"?utm_source=VALUE") {
			t.Fatalf("no prefill link: %s", text(body))
		}
		p = b.post(base+"/fields", url.Values{"hidden": {"1"}, "label": {"Again"}, "key": {"utm_source"}}).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="add-hidden-key-error">[^<]+</span>`).MatchString(p.body) || !strings.Contains(p.body, `value="Again"`) {
			t.Fatalf("a duplicate key is not shown next to its control: %s", text(p.body))
		}

		// Duplicate School: a copy below it, with its own key and the same rule.
		b.post(base+"/fields/"+school+"/duplicate", nil).redirectsTo(t, base)
		got := strings.Split(layoutTokens(t, b, id), ",")
		if len(got) != 6 || got[4] != school {
			t.Fatalf("after duplicating: %v", got)
		}
		body = b.get(base).expect(t, http.StatusOK).body
		if !strings.Contains(body, "<strong>School (copy)</strong>") || strings.Count(body, "Shown when <em>Role</em> is <em>Student</em>") != 2 ||
			!strings.Contains(body, "<code>school_copy</code>") {
			t.Fatalf("copy: %s", text(body))
		}

		// Removing the page break makes one page.
		b.post(base+"/breaks/1", url.Values{"remove": {"1"}}).redirectsTo(t, base)
		if got := layoutTokens(t, b, id); strings.Contains(got, "|") {
			t.Fatalf("break not removed: %s", got)
		}
	})
}

// TestBuilderDuplicateAtTheLimit: a copy the form has no room for is refused in words, and the
// builder draws the stored questions (no row for a copy that was never made).
func TestBuilderDuplicateAtTheLimit(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	b := h.owner()
	id := createForm(t, b, "Long survey")
	base := "/app/forms/" + id
	for i := 0; i < 200; i++ {
		b.post(base+"/fields", url.Values{"type": {"text"}, "label": {"Question"}}).redirectsTo(t, base)
	}
	ids, _ := fieldsOf(t, b, id)
	p := b.post(base+"/fields/"+ids[0]+"/duplicate", nil).expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(text(p.body), "at most 200 fields") || strings.Contains(p.body, `action="`+base+`/fields//`) {
		t.Fatalf("a copy past the limit: %s", text(p.body))
	}
	if got, _ := fieldsOf(t, b, id); len(got) != 200 {
		t.Fatalf("%d questions after a refused copy", len(got))
	}
}
