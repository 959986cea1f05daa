package dashboard_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// TestAuditLogSentencesAndFilters: changes to forms appear as sentences naming the person and
// the form; the action and person filters work as a plain GET form, keep their choice, and the
// "Older" link keeps both.
func TestAuditLogSentencesAndFilters(t *testing.T) {
	h := newHarness(t, persistencetest.SQLite(t, nil), "http://127.0.0.1:8080")
	owner := h.owner()
	id := createForm(t, owner, "Volunteer sign-up")
	owner.post("/app/forms/"+id+"/fields", url.Values{"type": {"text"}, "label": {"Name"}}).redirectsTo(t, "/app/forms/"+id)
	owner.post("/app/forms/"+id+"/status", url.Values{"status": {"published"}}).redirectsTo(t, "/app/forms/"+id)
	h.member(owner, "grace@example.org", "admin")

	rows := regexp.MustCompile(`(?s)<tr>\s*<td data-label="Time">.*?</tr>`)
	log := owner.get("/app/settings/audit-log").expect(t, http.StatusOK).body
	for _, want := range []string{
		"Ada Lovelace created the form Volunteer sign-up",
		"Ada Lovelace edited the form Volunteer sign-up: questions (1 added)",
		"Ada Lovelace published the form Volunteer sign-up",
		"Grace Hopper joined the workspace",
		`<option value="form.published">Form published</option>`,
	} {
		if !strings.Contains(html.UnescapeString(log), want) {
			t.Errorf("the audit log lacks %q", want)
		}
	}

	published := owner.get("/app/settings/audit-log?action=form.published").expect(t, http.StatusOK).body
	if got := rows.FindAllString(published, -1); len(got) != 1 || !strings.Contains(got[0], "published the form") {
		t.Fatalf("filtered by action: %d rows", len(got))
	}
	if !strings.Contains(published, `<option value="form.published" selected>`) {
		t.Fatal("the action filter does not keep its choice")
	}

	// The person filter lists the members; Grace's events are hers only.
	m := regexp.MustCompile(`<option value="(usr_[^"]+)">Grace Hopper \(grace@example.org\)</option>`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("the person filter lacks Grace: %s", log)
	}
	hers := owner.get("/app/settings/audit-log?actor="+m[1]).expect(t, http.StatusOK).body
	got := rows.FindAllString(hers, -1)
	if len(got) == 0 || !strings.Contains(hers, `<option value="`+m[1]+`" selected>`) {
		t.Fatalf("filtered by person: %d rows", len(got))
	}
	for _, r := range got {
		if strings.Contains(r, "Ada Lovelace") {
			t.Fatalf("Ada's event among Grace's: %s", text(r))
		}
	}
	// An actor that is no member any more stays choosable by its ID.
	gone := owner.get("/app/settings/audit-log?actor=usr_gone").expect(t, http.StatusOK).body
	if !strings.Contains(gone, `<option value="usr_gone" selected>usr_gone</option>`) || !strings.Contains(gone, "No events match these filters") {
		t.Fatalf("an unknown person: %s", text(gone))
	}

	// Both filters survive paging.
	for i := 0; i < 26; i++ {
		owner.postFollow("/app/settings/api-keys", url.Values{"name": {"key " + strconv.Itoa(i)}, "scope": {"read-only"}})
	}
	ada := regexp.MustCompile(`<option value="(usr_[^"]+)">Ada Lovelace \(ada@example.org\)</option>`).FindStringSubmatch(log)
	if ada == nil {
		t.Fatal("the person filter lacks Ada")
	}
	first := owner.get("/app/settings/audit-log?action=api_key.created&actor="+ada[1]).expect(t, http.StatusOK).body
	older := regexp.MustCompile(`href="(/app/settings/audit-log\?[^"]+)" rel="next"`).FindStringSubmatch(first)
	if older == nil {
		t.Fatal("no link to older events")
	}
	next, err := url.Parse(html.UnescapeString(older[1]))
	if err != nil || next.Query().Get("actor") != ada[1] || next.Query().Get("action") != "api_key.created" {
		t.Fatalf("the older link drops a filter: %s", older[1])
	}
	if n := len(rows.FindAllString(owner.get(next.String()).expect(t, http.StatusOK).body, -1)); n != 1 {
		t.Fatalf("second page: %d rows, want 1", n)
	}
}
