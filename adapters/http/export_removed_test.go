package httpapi_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// A field removed through PATCH keeps its answers: include_removed=true exports them as
// "<label> (removed)" columns after the fields; without it the export is as before.
func TestExportIncludeRemoved(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{})
		r := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": "Survey", "fields": []map[string]any{
			{"label": "Name", "type": "text"},
			{"label": "Age", "type": "number"},
			{"label": "Name (removed)", "type": "text"},
			{"label": "Name", "type": "text"},
		}})
		h.expect(r, 201, "")
		formID, ids := r.json["id"].(string), fieldIDs(r.json)
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		storeAt(t, db, h.wsA, formID, subID(1), at, map[string]submission.Value{
			ids[0]: submission.Single("Ada"), ids[1]: submission.Single("36"), ids[3]: submission.Single("Lovelace"),
		}, submission.Metadata{Source: submission.SourceAPI})
		storeAt(t, db, h.wsA, formID, subID(2), at.Add(time.Minute), map[string]submission.Value{
			ids[0]: submission.Single("Grace"),
		}, submission.Metadata{Source: submission.SourceAPI})

		// Age and the second Name leave the form (Age first, in form order).
		r = h.do("PATCH", "/v1/forms/"+formID, h.keys["read-write"], map[string]any{"fields": []map[string]any{
			{"id": ids[0], "label": "Name", "type": "text"},
			{"id": ids[2], "label": "Name (removed)", "type": "text"},
		}})
		h.expect(r, 200, "")
		if _, ok := r.json["removed_fields"]; ok {
			t.Fatalf("the form's JSON shows the removed fields: %v", r.json)
		}

		path := "/v1/forms/" + formID + "/submissions/export"
		rows := func(query string) [][]string {
			t.Helper()
			res := h.do("GET", path+query, h.keys["read-only"], nil)
			h.expect(res, 200, "")
			got, err := csv.NewReader(strings.NewReader(res.Body.String())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		meta := "source|referrer|utm_source|utm_medium|utm_campaign|utm_term|utm_content"
		for _, q := range []string{"", "?include_removed=false"} {
			got := rows(q)
			if h := strings.Join(got[0], "|"); h != "submission_id|submitted_at|Name|Name (removed)|"+meta {
				t.Fatalf("%q: header %q", q, h)
			}
			if len(got) != 3 || got[1][2] != "Ada" || len(got[1]) != 11 {
				t.Fatalf("%q: rows %q", q, got)
			}
		}
		got := rows("?include_removed=true")
		if h := strings.Join(got[0], "|"); h != "submission_id|submitted_at|Name|Name (removed)|Age (removed)|Name (removed) (2)|"+meta {
			t.Fatalf("header with removed fields %q", h)
		}
		if len(got) != 3 || strings.Join(got[1][:6], "|") != subID(1)+"|2026-03-01T12:00:00.000Z|Ada||36|Lovelace" ||
			strings.Join(got[2][:6], "|") != subID(2)+"|2026-03-01T12:01:00.000Z|Grace|||" || got[1][6] != "api" {
			t.Fatalf("rows with removed fields %q", got)
		}

		// XLSX: the removed number field's answer stays a number.
		res := h.do("GET", path+"?format=xlsx&include_removed=true", h.keys["read-only"], nil)
		h.expect(res, 200, "")
		cells := xlsxCells(t, res.Body.Bytes(), "xl/worksheets/sheet1.xml")
		if c := cells["E1"]; c.IS == nil || c.IS.T != "Age (removed)" {
			t.Fatalf("xlsx E1 = %+v", c)
		}
		if c := cells["E2"]; c.T != "" || c.V != "36" {
			t.Fatalf("xlsx E2 = %+v, want the number 36", c)
		}

		// The audit log records include_removed when it was asked for, and only then.
		events, err := persistence.NewAuditLog(db).List(context.Background(), h.wsA, ports.AuditQuery{Page: ports.Page{Limit: 100},
			Action: string(audit.SubmissionsExported)})
		if err != nil {
			t.Fatal(err)
		}
		// xlsx with, csv with, csv false, csv plain (IDs made in one millisecond come in any
		// order, so the events are counted, not read in order).
		with := map[any]int{}
		for _, e := range events {
			if e.Details["include_removed"] == true {
				with[e.Details["format"]]++
			} else if e.Details["include_removed"] != nil {
				with["other"]++
			}
		}
		if len(events) != 4 || with["xlsx"] != 1 || with["csv"] != 1 || with["other"] != 0 {
			t.Fatalf("export events: %+v", events)
		}

		for _, bad := range []string{"?include_removed=yes", "?include_removed=", "?include_removed=TRUE", "?include_removed=1"} {
			res := h.do("GET", path+bad, h.keys["read-only"], nil)
			h.expect(res, 400, "invalid_request")
			if !strings.Contains(res.Body.String(), "include_removed must be true or false") {
				t.Fatalf("%s: %s", bad, res.Body.String())
			}
		}
	})
}
