package dashboard_test

import (
	"encoding/csv"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// TestRemoveFieldKeepsAnswers: Remove asks first, saying how many answers the field has; once
// removed, the answers stay visible as a "(removed)" column in the responses table, the
// response detail and the exports that ask for them, on both databases.
func TestRemoveFieldKeepsAnswers(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		// Two submissions a page, so that counting the answers crosses a page edge.
		h.app.Queries.CountFieldAnswers = h.app.Queries.CountFieldAnswers.WithBatch(2)
		owner := h.owner()
		f, subs := responsesForm(t, h, db, 3)
		base := "/app/forms/" + f.ID()
		emailID := f.Fields()[1].ID
		owner.post(base+"/fields", url.Values{"type": {"text"}, "label": {"Phone"}}).redirectsTo(t, base)
		ids, builder := fieldsOf(t, owner, f.ID())
		if len(ids) != 4 {
			t.Fatalf("fields %v", ids)
		}
		phoneID := ids[3]

		// The builder's Remove is a link to the confirmation; the confirmation changes nothing.
		if !strings.Contains(builder, `href="`+base+`/fields/`+emailID+`/remove"`) {
			t.Fatalf("the builder has no Remove link to the confirmation: %s", text(builder))
		}
		c := html.UnescapeString(owner.get(base+"/fields/"+emailID+"/remove").expect(t, http.StatusOK).body)
		for _, want := range []string{"Remove “Email”?", "“Email” has 3 answers.", "“Email (removed)” column", "respondents no longer see it",
			`action="` + base + `/fields/` + emailID + `/remove"`, "Remove field", `href="` + base + `#field-` + emailID + `"`} {
			if !strings.Contains(c, want) {
				t.Fatalf("confirmation lacks %q: %s", want, text(c))
			}
		}
		if got, _ := fieldsOf(t, owner, f.ID()); len(got) != 4 {
			t.Fatal("the confirmation page removed the field")
		}
		c = owner.get(base+"/fields/"+phoneID+"/remove").expect(t, http.StatusOK).body
		if !strings.Contains(c, "It has no answers yet.") {
			t.Fatalf("confirmation of a field without answers: %s", text(c))
		}
		owner.get(base+"/fields/fld_missing/remove").expect(t, http.StatusNotFound)
		viewer := h.member(owner, "grace@example.org", "viewer")
		viewer.get(base+"/fields/"+emailID+"/remove").expect(t, http.StatusForbidden)

		owner.post(base+"/fields/"+emailID+"/remove", nil).redirectsTo(t, base)
		owner.post(base+"/fields/"+phoneID+"/remove", nil).redirectsTo(t, base)
		if got, _ := fieldsOf(t, owner, f.ID()); len(got) != 2 {
			t.Fatalf("%d fields after removing two", len(got))
		}

		// The table: Email's answers in a removed column after the fields; Phone, never
		// answered, has none.
		page := owner.get(base+"/responses").expect(t, http.StatusOK).body
		if !strings.Contains(page, `<th scope="col">Colour</th><th scope="col">Email (removed)</th></tr>`) || strings.Contains(page, "Phone (removed)") {
			t.Fatalf("table header: %s", text(page))
		}
		if !strings.Contains(page, `<td data-label="Email (removed)" class="token-cell"><div class="v"><span class="token">person-2@<wbr>example.<wbr>org</span></div></td>`) {
			t.Fatalf("table lacks the removed field's answer: %s", text(page))
		}
		// The search's field choice offers only current fields.
		if strings.Contains(page, `<option value="`+emailID+`"`) {
			t.Fatal("the value filter offers a removed field")
		}
		withRemoved := base + "/export?format=csv&amp;include_removed=true"
		if !strings.Contains(page, `href="`+withRemoved+`"`) || !strings.Contains(page, "Download CSV with removed fields") {
			t.Fatalf("no export link with removed fields: %s", text(page))
		}
		// The detail.
		d := owner.get(base+"/responses/"+subs[1]).expect(t, http.StatusOK).body
		if !strings.Contains(d, "<dt>Email (removed)</dt><dd>person-1@<wbr>example.<wbr>org</dd>") || strings.Contains(d, "Phone (removed)") {
			t.Fatalf("detail: %s", text(d))
		}

		// Exports: unchanged without include_removed, extra columns with it.
		header := func(query string) ([]string, [][]string) {
			t.Helper()
			records, err := csv.NewReader(strings.NewReader(owner.get(base+"/export?format=csv"+query).expect(t, http.StatusOK).body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			return records[0], records[1:]
		}
		if h, _ := header(""); strings.Join(h[:5], "|") != "submission_id|submitted_at|Name|Colour|source" {
			t.Fatalf("export without removed fields: %v", h)
		}
		h2, rows := header("&include_removed=true")
		if strings.Join(h2[:7], "|") != "submission_id|submitted_at|Name|Colour|Email (removed)|Phone (removed)|source" {
			t.Fatalf("export with removed fields: %v", h2)
		}
		if len(rows) != 3 || rows[0][0] != subs[0] || rows[0][4] != "person-0@example.org" || rows[0][5] != "" || rows[0][6] != "api" {
			t.Fatalf("export rows with removed fields: %v", rows)
		}
		p := owner.get(base+"/export?format=csv&include_removed=yes").expect(t, http.StatusBadRequest)
		if !strings.Contains(p.body, "include_removed must be true or false") {
			t.Fatalf("bad include_removed: %s", text(p.body))
		}
	})
}
