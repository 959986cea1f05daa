package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

// CSV and XLSX exports carry links that never expire (/app/files/…, for signed-in members);
// file_links=signed gives hour-long signed links instead, NDJSON has signed links unless asked
// otherwise, and any other value is refused. A value that is not the submission's own upload
// is never turned into a link.
func TestExportFileLinks(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{FileURL: signedLinks(), PublicURL: testPublicURL + "/"})
		fa := h.createForm(map[string]any{"label": "CV", "type": "file"})
		formID, field := fa["id"].(string), fieldIDs(fa)[0]
		sub, other := subID(7), subID(8)
		own := ports.SubmissionFilesPrefix(h.wsA, formID, sub) + "obj_1/cv.pdf"
		// Another submission's key, named in this one: shown as stored, never linked.
		foreign := ports.SubmissionFilesPrefix(h.wsA, formID, other) + "obj_2/secret.pdf"
		storeUpload(t, db, h.wsA, formID, sub, field, own, foreign, "https://cdn.example.org/b.pdf")
		member := testPublicURL + "/app/files/" + sub + "/obj_1/cv.pdf"
		signed := testPublicURL + "/files/" + own + "?expires="

		path := "/v1/forms/" + formID + "/submissions/export"
		cell := func(query string) string {
			t.Helper()
			res := h.do("GET", path+query, h.keys["read-only"], nil)
			h.expect(res, 200, "")
			var rows [][]string
			if strings.Contains(query, "xlsx") {
				book, err := excelize.OpenReader(bytes.NewReader(res.Body.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				defer book.Close()
				if rows, err = book.GetRows("Submissions"); err != nil {
					t.Fatal(err)
				}
			} else {
				var err error
				if rows, err = csv.NewReader(bytes.NewReader(res.Body.Bytes())).ReadAll(); err != nil {
					t.Fatal(err)
				}
			}
			if len(rows) != 2 || rows[0][2] != "CV" {
				t.Fatalf("%s: rows %q", query, rows)
			}
			return rows[1][2]
		}
		rest := ", " + foreign + ", https://cdn.example.org/b.pdf"
		for _, q := range []string{"", "?format=csv&file_links=member", "?format=xlsx", "?format=xlsx&file_links=member"} {
			if got := cell(q); got != member+rest {
				t.Errorf("%q: files %q, want %q", q, got, member+rest)
			}
		}
		for _, q := range []string{"?file_links=signed", "?format=xlsx&file_links=signed"} {
			got := cell(q)
			link, after, _ := strings.Cut(got, ", ")
			if !strings.HasPrefix(link, signed) || !strings.Contains(link, "&sig=") || ", "+after != rest {
				t.Errorf("%q: files %q, want a signed link to %s", q, got, own)
			}
		}

		ndjson := func(query string) []any {
			t.Helper()
			res := h.do("GET", path+"?format=ndjson"+query, h.keys["read-only"], nil)
			h.expect(res, 200, "")
			var line map[string]any
			if err := json.Unmarshal(res.Body.Bytes(), &line); err != nil {
				t.Fatalf("%s: %v", res.Body.String(), err)
			}
			return line["data"].(map[string]any)[field].([]any)
		}
		if got := ndjson(""); !strings.HasPrefix(got[0].(string), signed) || got[1] != foreign {
			t.Errorf("NDJSON files %v, want a signed link first", got)
		}
		if got := ndjson("&file_links=signed"); !strings.HasPrefix(got[0].(string), signed) {
			t.Errorf("NDJSON signed files %v", got)
		}
		if got := ndjson("&file_links=member"); got[0] != member || got[1] != foreign {
			t.Errorf("NDJSON member files %v, want %s first", got, member)
		}

		for _, bad := range []string{"?file_links=", "?file_links=forever", "?format=xlsx&file_links=Member", "?format=ndjson&file_links=signed,member"} {
			res := h.do("GET", path+bad, h.keys["read-only"], nil)
			h.expect(res, 400, "invalid_request")
			if !strings.Contains(res.Body.String(), "file_links must be member") {
				t.Errorf("%s: the refusal does not say what file_links takes: %s", bad, res.Body.String())
			}
		}

		// The audit log says which exports handed out signed links (anyone holding one opens
		// the file for an hour): 2 CSV/XLSX asked for them, 2 NDJSON had them by default; the 5
		// exports with member links say nothing. Refused requests record nothing.
		events, err := persistence.NewAuditLog(db).List(context.Background(), h.wsA, ports.AuditQuery{Page: ports.Page{Limit: 100},
			Action: string(audit.SubmissionsExported)})
		if err != nil {
			t.Fatal(err)
		}
		signedBy := map[any]int{}
		for _, e := range events {
			switch e.Details["file_links"] {
			case "signed":
				signedBy[e.Details["format"]]++
			case nil:
				signedBy["member"]++
			default:
				signedBy["other"]++
			}
		}
		if len(events) != 9 || signedBy["csv"] != 1 || signedBy["xlsx"] != 1 || signedBy["ndjson"] != 2 || signedBy["member"] != 5 || signedBy["other"] != 0 {
			t.Fatalf("%d export events, signed links by format %v", len(events), signedBy)
		}
	})
}
