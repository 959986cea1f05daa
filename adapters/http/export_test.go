package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// storeAt stores a submission received at the given time, as the capture would have stored it.
func storeAt(t *testing.T, db *persistence.DB, ws, formID, subID string, at time.Time, data map[string]submission.Value, meta submission.Metadata) {
	t.Helper()
	s := submission.UnmarshalFromDatabase(subID, ws, formID, data, meta, at, at)
	e := event.ForSubmission("evt_"+subID[4:], event.SubmissionCreated, s, at)
	if err := persistence.NewSubmissionRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex()).Add(context.Background(), s, e); err != nil {
		t.Fatal(err)
	}
}

func subID(n int) string { return fmt.Sprintf("sub_%026d", n) }

func TestExportSubmissions(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{FileURL: signedLinks()})
		// Batches of two, so that the exports below cross batch edges.
		h.app.Queries.ExportSubmissions = h.app.Queries.ExportSubmissions.WithBatch(2)
		r := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": "Café \"Menu\"/2026", "fields": []map[string]any{
			{"label": "Name", "type": "text"},
			{"label": "Name", "type": "text"},
			{"label": "=Total", "type": "textarea"},
			{"label": "Channels", "type": "checkbox", "options": []string{"Mail", "Phone", "-SMS"}},
			{"label": "CV", "type": "file"},
			{"label": "Name", "type": "number"},
		}})
		h.expect(r, 201, "")
		formID, ids := r.json["id"].(string), fieldIDs(r.json)

		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		upload := ports.SubmissionFilesPrefix(h.wsA, formID, subID(1)) + "obj_1/cv.pdf"
		ref := "https://example.org/from?x=1"
		storeAt(t, db, h.wsA, formID, subID(1), base, map[string]submission.Value{
			ids[0]: submission.Single("=HYPERLINK(\"http://evil\")"), ids[1]: submission.Single("+1 555"),
			ids[2]: submission.Single("-2+3"), ids[3]: submission.List([]string{"Mail", "-SMS"}),
			ids[4]: submission.List([]string{upload, "https://cdn.example.org/b.pdf"}), ids[5]: submission.Single("42"),
		}, submission.Metadata{Source: submission.SourceForm, Referrer: &ref, UTM: map[string]string{"utm_source": "@news", "utm_term": "spring"}})
		// Equal timestamps: the ID breaks the tie.
		storeAt(t, db, h.wsA, formID, subID(3), base.Add(time.Minute), map[string]submission.Value{
			ids[0]: submission.Single("@SUM(A1)"), ids[1]: submission.Single("\tTab"), ids[2]: submission.Single("\rCR"),
		}, submission.Metadata{Source: submission.SourceAPI})
		storeAt(t, db, h.wsA, formID, subID(2), base.Add(time.Minute), map[string]submission.Value{
			ids[0]: submission.Single("Ada, \"the\" first\nline two"),
		}, submission.Metadata{Source: submission.SourceAPI})
		storeAt(t, db, h.wsA, formID, subID(4), base.Add(2*time.Minute), map[string]submission.Value{}, submission.Metadata{Source: submission.SourceAPI})
		storeAt(t, db, h.wsA, formID, subID(5), base.Add(3*time.Minute), map[string]submission.Value{ids[5]: submission.Single("7")},
			submission.Metadata{Source: submission.SourceAPI})

		header := []string{"submission_id", "submitted_at", "Name", "Name (2)", "'=Total", "Channels", "CV", "Name (3)",
			"source", "referrer", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}
		want := [][]string{
			{subID(1), "2026-03-01T12:00:00.000Z", "'=HYPERLINK(\"http://evil\")", "'+1 555", "'-2+3", "Mail, -SMS", "SIGNED, https://cdn.example.org/b.pdf", "42",
				"form", ref, "'@news", "", "", "spring", ""},
			{subID(2), "2026-03-01T12:01:00.000Z", "Ada, \"the\" first\nline two", "", "", "", "", "", "api", "", "", "", "", "", ""},
			{subID(3), "2026-03-01T12:01:00.000Z", "'@SUM(A1)", "'\tTab", "'\rCR", "", "", "", "api", "", "", "", "", "", ""},
			{subID(4), "2026-03-01T12:02:00.000Z", "", "", "", "", "", "", "api", "", "", "", "", "", ""},
			{subID(5), "2026-03-01T12:03:00.000Z", "", "", "", "", "", "7", "api", "", "", "", "", "", ""},
		}
		check := func(format string, got [][]string, want [][]string) {
			t.Helper()
			if len(got) != len(want)+1 {
				t.Fatalf("%s: %d rows, want %d: %q", format, len(got), len(want)+1, got)
			}
			if strings.Join(got[0], "|") != strings.Join(header, "|") {
				t.Fatalf("%s header = %q", format, got[0])
			}
			for i, w := range want {
				g := got[i+1]
				for len(g) < len(w) {
					g = append(g, "") // excelize leaves trailing empty cells out
				}
				for j := range w {
					if w[j] == "SIGNED, https://cdn.example.org/b.pdf" {
						link, rest, _ := strings.Cut(g[j], ", ")
						if !strings.HasPrefix(link, testPublicURL+"/files/"+upload+"?expires=") || !strings.Contains(link, "sig=") || rest != "https://cdn.example.org/b.pdf" {
							t.Errorf("%s row %d: files shown as %q", format, i, g[j])
						}
						continue
					}
					if w[j] == "'\rCR" && strings.HasSuffix(format, "csv") {
						// A lone carriage return is written as a line break (CRLF).
						w := "'\nCR"
						if g[j] != w {
							t.Errorf("%s row %d column %q = %q, want %q", format, i, header[j], g[j], w)
						}
						continue
					}
					if g[j] != w[j] {
						t.Errorf("%s row %d column %q = %q, want %q", format, i, header[j], g[j], w[j])
					}
				}
			}
		}
		path := "/v1/forms/" + formID + "/submissions/export"
		date := time.Now().UTC().Format("2006-01-02")

		// CSV is the default; a read-only key may export.
		res := h.do("GET", path, h.keys["read-only"], nil)
		h.expect(res, 200, "")
		if ct := res.Header().Get("Content-Type"); ct != "text/csv; charset=utf-8" {
			t.Fatalf("Content-Type %q", ct)
		}
		wantCD := `attachment; filename="Caf_ _Menu__2026-` + date + `.csv"; filename*=UTF-8''Caf%C3%A9%20%22Menu%22_2026-` + date + `.csv`
		if cd := res.Header().Get("Content-Disposition"); cd != wantCD {
			t.Fatalf("Content-Disposition %q, want %q", cd, wantCD)
		}
		if !bytes.Contains(res.Body.Bytes(), []byte("\r\n")) || !bytes.Contains(res.Body.Bytes(), []byte(`,"'`+"\r\nCR\",")) {
			t.Fatalf("CSV lines must end with CRLF, a carriage return must be kept (quoted): %q", res.Body.String())
		}
		rd := csv.NewReader(bytes.NewReader(res.Body.Bytes()))
		rd.FieldsPerRecord = len(header)
		rows, err := rd.ReadAll()
		if err != nil {
			t.Fatalf("CSV does not parse: %v\n%s", err, res.Body.String())
		}
		check("csv", rows, want)

		// XLSX: the same cells, every one a string.
		res = h.do("GET", path+"?format=xlsx", h.keys["read-write"], nil)
		h.expect(res, 200, "")
		if ct := res.Header().Get("Content-Type"); ct != "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" {
			t.Fatalf("Content-Type %q", ct)
		}
		if cd := res.Header().Get("Content-Disposition"); !strings.Contains(cd, date+`.xlsx"`) {
			t.Fatalf("Content-Disposition %q", cd)
		}
		book, err := excelize.OpenReader(bytes.NewReader(res.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		rows, err = book.GetRows("Submissions")
		if err != nil {
			t.Fatal(err)
		}
		check("xlsx", rows, want)
		if typ, err := book.GetCellType("Submissions", "H2"); err != nil || typ == excelize.CellTypeNumber {
			t.Fatalf("a number answer must stay a string cell: %v %v", typ, err)
		}
		_ = book.Close()

		// NDJSON: one Submission per line, in the API's shape, oldest first.
		res = h.do("GET", path+"?format=ndjson", h.keys["read-only"], nil)
		h.expect(res, 200, "")
		if ct := res.Header().Get("Content-Type"); ct != "application/x-ndjson" {
			t.Fatalf("Content-Type %q", ct)
		}
		lines := strings.Split(strings.TrimSuffix(res.Body.String(), "\n"), "\n")
		if len(lines) != 5 {
			t.Fatalf("%d lines: %s", len(lines), res.Body.String())
		}
		for i, line := range lines {
			if err := h.validator.ValidateResponse("GET", "/forms/"+formID+"/submissions/"+subID(i+1), 200, []byte(line)); err != nil {
				t.Errorf("line %d is not a Submission: %v", i, err)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(line), &got); err != nil || got["id"] != want[i][0] {
				t.Fatalf("line %d: %v %s", i, err, line)
			}
			one := h.do("GET", "/v1/forms/"+formID+"/submissions/"+subID(i+1), h.keys["read-only"], nil)
			var api map[string]any
			_ = json.Unmarshal(one.Body.Bytes(), &api)
			if i > 0 && fmt.Sprint(api) != fmt.Sprint(got) { // the first one's signed link depends on the second it was signed
				t.Errorf("line %d = %v, the API shows %v", i, got, api)
			}
		}
		first := map[string]any{}
		_ = json.Unmarshal([]byte(lines[0]), &first)
		files := first["data"].(map[string]any)[ids[4]].([]any)
		if !strings.HasPrefix(files[0].(string), testPublicURL+"/files/") || fmt.Sprint(first["data"].(map[string]any)[ids[3]]) != "[Mail -SMS]" {
			t.Fatalf("ndjson data: %v", first["data"])
		}

		// Bounds are exclusive.
		q := url.Values{"created_after": {"2026-03-01T12:00:00Z"}, "created_before": {"2026-03-01T12:03:00Z"}}
		res = h.do("GET", path+"?"+q.Encode(), h.keys["read-only"], nil)
		h.expect(res, 200, "")
		rows, err = csv.NewReader(bytes.NewReader(res.Body.Bytes())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		check("bounded csv", rows, want[1:4])

		for _, bad := range []string{"?format=pdf", "?format=", "?created_after=yesterday", "?created_before=2026-13-01T00:00:00Z",
			"?created_after=2026-03-02T00:00:00Z&created_before=2026-03-01T00:00:00Z"} {
			h.expect(h.do("GET", path+bad, h.keys["read-only"], nil), 400, "invalid_request")
		}
		// Another workspace's form is not found; no key, no export.
		h.expect(h.do("GET", path, h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("GET", "/v1/forms/frm_nope/submissions/export", h.keys["admin"], nil), 404, "not_found")
		h.expect(h.do("GET", path, "", nil), 401, "unauthorized")

		// Every export is in the audit log, with its format and bounds.
		events, err := persistence.NewAuditLog(db).List(context.Background(), h.wsA, ports.AuditQuery{Page: ports.Page{Limit: 100},
			Action: string(audit.SubmissionsExported)})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 4 {
			t.Fatalf("%d export events, want 4: %+v", len(events), events)
		}
		last := events[0]
		if last.Actor.Type != audit.ActorAPIKey || last.Actor.ID != h.keyIDs["read-only"] || last.Target == nil || last.Target.ID != formID ||
			last.Details["format"] != "csv" || last.Details["created_after"] != "2026-03-01T12:00:00.000Z" || last.Details["created_before"] != "2026-03-01T12:03:00.000Z" {
			t.Fatalf("export event: %+v", last)
		}
		if events[1].Details["format"] != "ndjson" || events[2].Details["format"] != "xlsx" {
			t.Fatalf("export formats: %v %v", events[1].Details, events[2].Details)
		}
	})
}

// An ASCII form name is the file name as it is, without filename*.
func TestExportEmptyFormFileName(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{})
		f := h.createForm(map[string]any{"label": "Name", "type": "text"})
		res := h.do("GET", "/v1/forms/"+f["id"].(string)+"/submissions/export?format=ndjson", h.keys["read-only"], nil)
		h.expect(res, 200, "")
		if cd := res.Header().Get("Content-Disposition"); cd != `attachment; filename="Contact-`+time.Now().UTC().Format("2006-01-02")+`.ndjson"` {
			t.Fatalf("Content-Disposition %q", cd)
		}
		if res.Body.Len() != 0 {
			t.Fatalf("an empty form exports no lines: %q", res.Body.String())
		}
		res = h.do("GET", "/v1/forms/"+f["id"].(string)+"/submissions/export", h.keys["read-only"], nil)
		if res.Body.String() != "submission_id,submitted_at,Name,source,referrer,utm_source,utm_medium,utm_campaign,utm_term,utm_content\r\n" {
			t.Fatalf("empty CSV: %q", res.Body.String())
		}
	})
}
