package httpapi_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
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
		h := newHarness(t, db, httpapi.Options{FileURL: signedLinks(), PublicURL: testPublicURL})
		// Batches of two, so that the exports below cross batch edges.
		h.app.Queries.ExportSubmissions = h.app.Queries.ExportSubmissions.WithBatch(2)
		r := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": "Café \"Menu\"/2026", "fields": []map[string]any{
			{"label": "Name", "type": "text"},
			{"label": "Name", "type": "text"},
			{"label": "=Total", "type": "textarea"},
			{"label": "Channels", "type": "checkbox", "options": []string{"Mail", "Phone", "-SMS"}},
			{"label": "CV", "type": "file"},
			{"label": "Name", "type": "number"},
			{"label": "When", "type": "date"},
		}})
		h.expect(r, 201, "")
		formID, ids := r.json["id"].(string), fieldIDs(r.json)

		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		upload := ports.SubmissionFilesPrefix(h.wsA, formID, subID(1)) + "obj_1/cv.pdf"
		ref := "https://example.org/from?x=1"
		// CSV and XLSX carry the upload as a link that never expires (for signed-in members).
		memberFiles := testPublicURL + "/app/files/" + subID(1) + "/obj_1/cv.pdf, https://cdn.example.org/b.pdf"
		storeAt(t, db, h.wsA, formID, subID(1), base, map[string]submission.Value{
			ids[0]: submission.Single("=HYPERLINK(\"http://evil\")"), ids[1]: submission.Single("+1 555"),
			ids[2]: submission.Single("-2+3"), ids[3]: submission.List([]string{"Mail", "-SMS"}),
			ids[4]: submission.List([]string{upload, "https://cdn.example.org/b.pdf"}), ids[5]: submission.Single("42"),
			ids[6]: submission.Single("2026-02-28"),
		}, submission.Metadata{Source: submission.SourceForm, Referrer: &ref, UTM: map[string]string{"utm_source": "@news", "utm_term": "spring"}})
		// Equal timestamps: the ID breaks the tie.
		storeAt(t, db, h.wsA, formID, subID(3), base.Add(time.Minute), map[string]submission.Value{
			ids[0]: submission.Single("@SUM(A1)"), ids[1]: submission.Single("\tTab"), ids[2]: submission.Single("\rCR"),
		}, submission.Metadata{Source: submission.SourceAPI})
		storeAt(t, db, h.wsA, formID, subID(2), base.Add(time.Minute), map[string]submission.Value{
			ids[0]: submission.Single("Ada, \"the\" first\nline two"), ids[5]: submission.Single("0.12345678901234568"),
		}, submission.Metadata{Source: submission.SourceAPI})
		// White space before a formula: some spreadsheets trim it and run what follows.
		storeAt(t, db, h.wsA, formID, subID(4), base.Add(2*time.Minute), map[string]submission.Value{
			ids[0]: submission.Single("\n=cmd|' /C calc'!A0"), ids[1]: submission.Single("\r=2+2"), ids[2]: submission.Single("\t=3+3"),
			ids[5]: submission.Single("-2.5e-7"),
		}, submission.Metadata{Source: submission.SourceAPI})
		// A date before 1 March 1900 has no serial that Excel and LibreOffice read alike.
		storeAt(t, db, h.wsA, formID, subID(5), base.Add(3*time.Minute), map[string]submission.Value{
			ids[5]: submission.Single("7"), ids[6]: submission.Single("1899-12-31"),
		}, submission.Metadata{Source: submission.SourceAPI})

		header := []string{"submission_id", "submitted_at", "Name", "Name (2)", "'=Total", "Channels", "CV", "Name (3)", "When",
			"source", "referrer", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}
		want := [][]string{
			{subID(1), "2026-03-01T12:00:00.000Z", "'=HYPERLINK(\"http://evil\")", "'+1 555", "'-2+3", "Mail, -SMS", memberFiles, "42",
				"2026-02-28", "form", ref, "'@news", "", "", "spring", ""},
			{subID(2), "2026-03-01T12:01:00.000Z", "Ada, \"the\" first\nline two", "", "", "", "", "0.12345678901234568", "", "api", "", "", "", "", "", ""},
			{subID(3), "2026-03-01T12:01:00.000Z", "'@SUM(A1)", "'\tTab", "'\rCR", "", "", "", "", "api", "", "", "", "", "", ""},
			{subID(4), "2026-03-01T12:02:00.000Z", "'\n=cmd|' /C calc'!A0", "'\r=2+2", "'\t=3+3", "", "", "'-2.5e-7", "", "api", "", "", "", "", "", ""},
			{subID(5), "2026-03-01T12:03:00.000Z", "", "", "", "", "", "7", "1899-12-31", "api", "", "", "", "", "", ""},
		}
		check := func(format string, got [][]string, want [][]string) {
			t.Helper()
			if len(got) != len(want)+1 {
				t.Fatalf("%s: %d rows, want %d: %q", format, len(got), len(want)+1, got)
			}
			header := header
			if format == "xlsx" {
				header = unguarded(header)
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
					if strings.HasSuffix(format, "csv") && strings.Contains(w[j], "\r") {
						// A lone carriage return is written as a line break (CRLF).
						w := strings.ReplaceAll(w[j], "\r", "\n")
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
		if !bytes.Contains(res.Body.Bytes(), []byte(`,"'`+"\r\n=cmd|' /C calc'!A0\",")) {
			t.Fatalf("a line feed before a formula must be guarded: %q", res.Body.String())
		}
		rd := csv.NewReader(bytes.NewReader(res.Body.Bytes()))
		rd.FieldsPerRecord = len(header)
		rows, err := rd.ReadAll()
		if err != nil {
			t.Fatalf("CSV does not parse: %v\n%s", err, res.Body.String())
		}
		check("csv", rows, want)

		// XLSX: the same cells without the guard's apostrophes, typed: numbers, dates and
		// submitted_at are numbers shown through date formats, everything else inline strings.
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
		wantXLSX := make([][]string, len(want))
		for i, w := range want {
			wantXLSX[i] = unguarded(w)
			wantXLSX[i][1] = strings.Replace(strings.TrimSuffix(w[1], ".000Z"), "T", " ", 1) // yyyy-mm-dd hh:mm:ss
		}
		wantXLSX[1][7] = "0.123456789012346" // Excel's 15 digits, rounded
		wantXLSX[3][7] = "-0.00000025"
		check("xlsx", rows, wantXLSX)
		cells := xlsxCells(t, res.Body.Bytes(), "xl/worksheets/sheet1.xml")
		for ref, c := range cells {
			col := strings.TrimRight(ref, "0123456789")
			switch {
			case ref == "A1" || strings.TrimLeft(ref, "ABCDEFGHIJKLMNOP") == "1":
				if c.T != "inlineStr" {
					t.Errorf("header %s is %q, want an inline string", ref, c.T)
				}
			case col == "B" || col == "H" || col == "I" && ref != "I6":
				if c.T != "" && c.T != "n" || c.IS != nil {
					t.Errorf("%s is %q %+v, want a number", ref, c.T, c)
				}
			default:
				if c.T != "inlineStr" || c.V != "" {
					t.Errorf("%s is %q %+v, want an inline string", ref, c.T, c)
				}
			}
			if c.IS != nil && strings.HasPrefix(c.IS.T, "'") {
				t.Errorf("%s = %q: XLSX cells carry no apostrophe", ref, c.IS.T)
			}
		}
		for ref, want := range map[string]string{"H2": "42", "H5": "-0.00000025", "I2": "46081", "B2": "46082.5",
			"B5": "46082.5013888889", "H3": "0.123456789012346", "E1": "=Total", "C5": "\n=cmd|' /C calc'!A0", "I6": "1899-12-31"} {
			got := cells[ref].V
			if cells[ref].IS != nil {
				got = cells[ref].IS.T
			}
			if got != want {
				t.Errorf("%s holds %q, want %q", ref, got, want)
			}
		}
		for ref, want := range map[string]string{"B2": "yyyy-mm-dd hh:mm:ss", "I2": "yyyy-mm-dd", "H2": ""} {
			id, err := book.GetCellStyle("Submissions", ref)
			if err != nil {
				t.Fatal(err)
			}
			st, err := book.GetStyle(id)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.CustomNumFmt; (got == nil) != (want == "") || got != nil && *got != want {
				t.Errorf("%s number format %v, want %q", ref, got, want)
			}
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
		// Exports a millisecond apart may share a timestamp: the newest is found by its bounds,
		// the others by format, whatever their order.
		last := events[0]
		for _, e := range events {
			if e.Details["created_after"] != nil {
				last = e
			}
		}
		if last.Actor.Type != audit.ActorAPIKey || last.Actor.ID != h.keyIDs["read-only"] || last.Target == nil || last.Target.ID != formID ||
			last.Details["format"] != "csv" || last.Details["created_after"] != "2026-03-01T12:00:00.000Z" || last.Details["created_before"] != "2026-03-01T12:03:00.000Z" {
			t.Fatalf("export event: %+v", last)
		}
		formats := map[any]int{}
		for _, e := range events {
			formats[e.Details["format"]]++
		}
		if formats["ndjson"] != 1 || formats["xlsx"] != 1 || formats["csv"] != 2 {
			t.Fatalf("export formats: %v", formats)
		}
	})
}

// unguarded is cells without the CSV formula guard's leading apostrophes.
func unguarded(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.TrimPrefix(c, "'")
	}
	return out
}

// xlsxCell is a worksheet cell as the file stores it.
type xlsxCell struct {
	R  string `xml:"r,attr"`
	S  string `xml:"s,attr"`
	T  string `xml:"t,attr"`
	V  string `xml:"v"`
	IS *struct {
		T string `xml:"t"`
	} `xml:"is"`
}

// xlsxCells reads the cells of one worksheet of a workbook, by reference ("B2").
func xlsxCells(t *testing.T, book []byte, sheet string) map[string]xlsxCell {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(book), int64(len(book)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := zr.Open(sheet)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ws struct {
		Rows []struct {
			Cells []xlsxCell `xml:"c"`
		} `xml:"sheetData>row"`
	}
	if err := xml.NewDecoder(f).Decode(&ws); err != nil {
		t.Fatal(err)
	}
	cells := map[string]xlsxCell{}
	for _, r := range ws.Rows {
		for _, c := range r.Cells {
			cells[c.R] = c
		}
	}
	return cells
}

// An ASCII form name is the file name as it is, without filename*.
func TestExportEmptyFormFileName(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
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
