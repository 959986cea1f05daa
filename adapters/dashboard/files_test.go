package dashboard_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

// filesSetup is a dashboard whose files live in a local store and are downloaded, through
// signed links that expire after an hour, from a file server; both read one fake clock.
type filesSetup struct {
	h      *harness
	clock  *testkit.Clock
	store  ports.ObjectStore
	files  *httptest.Server
	public string
}

func newFilesSetup(t *testing.T, db *persistence.DB) *filesSetup {
	t.Helper()
	clock := testkit.NewClock(time.Now().UTC().Truncate(time.Millisecond))
	store, err := objectstore.NewLocal(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	files := httptest.NewUnstartedServer(nil)
	signer := objectstore.Signer{Key: []byte("file links key for tests"), BaseURL: "http://" + files.Listener.Addr().String()}
	files.Config.Handler = objectstore.Serve(store, signer, clock.Now)
	files.Start()
	t.Cleanup(files.Close)
	linker := func(s *submission.Submission, v string) string {
		if link, ok := signer.SubmissionLink(s.WorkspaceID(), s.FormID(), s.ID(), v, clock.Now().Add(time.Hour)); ok {
			return link
		}
		return v
	}
	srv := httptest.NewUnstartedServer(nil)
	public := "http://" + srv.Listener.Addr().String()
	h := newHarnessDash(t, db, public, srv, func(d *application.Deps, _ *dashboard.Options) {
		d.Clock, d.Files = clock, store
	}, func(d *dashboard.Deps) {
		d.Clock, d.FileURL = clock, linker
	})
	return &filesSetup{h: h, clock: clock, store: store, files: files, public: public}
}

// upload stores a submission of f holding files (name → content) in its file field, as the
// public page stores them: each under the submission's own prefix. It returns the keys.
func (fs *filesSetup) upload(t *testing.T, db *persistence.DB, f *form.Form, subID string, names []string, contents [][]byte, extra ...string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for i, name := range names {
		key := ports.SubmissionFilesPrefix(f.WorkspaceID(), f.ID(), subID) + "obj_" + string(rune('a'+i)) + "/" + name
		if err := fs.store.Put(ctx, key, bytes.NewReader(contents[i]), int64(len(contents[i])), "application/pdf"); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	at := fs.clock.Now()
	s := submission.UnmarshalFromDatabase(subID, f.WorkspaceID(), f.ID(), map[string]submission.Value{
		f.Fields()[0].ID: submission.Single("Ada"), f.Fields()[1].ID: submission.List(append(append([]string{}, keys...), extra...)),
	}, submission.Metadata{Source: submission.SourceForm}, at, at)
	if err := persistence.NewSubmissionRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex()).
		Add(ctx, s, event.ForSubmission("evt_"+subID[4:], event.SubmissionCreated, s, at)); err != nil {
		t.Fatal(err)
	}
	return keys
}

// download follows a file link: /app/files/… answers 303 to a signed link, which gives the
// file. It returns the signed link and the bytes.
func (b *browser) download(t *testing.T, link string) (signed string, body []byte) {
	t.Helper()
	p := b.get(link)
	if p.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET %s: %d, want 303 to the file\n%s", link, p.StatusCode, text(p.body))
	}
	signed = p.Header.Get("Location")
	if p.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the redirect to a signed link may be cached: %q", p.Header.Get("Cache-Control"))
	}
	res, err := b.client.Get(signed)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ = io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", signed, res.StatusCode, body)
	}
	return signed, body
}

func status(t *testing.T, c *http.Client, link string) int {
	t.Helper()
	res, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// TestFileLinksNeverExpire: a file answer shows as a named link with its size; a member of the
// workspace (any role) opens it hours later, long after the signed links of that time
// expired, and gets the file; another workspace's member and an unknown file get 404; a
// signed-out visitor signs in and lands on the file.
func TestFileLinksNeverExpire(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		fs := newFilesSetup(t, db)
		h := fs.h
		owner := h.owner()
		ctx := context.Background()
		ws, err := persistence.NewWorkspaceRepository(db).Oldest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fv, err := h.app.Commands.CreateForm.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID())), forms.CreateForm{Draft: form.Draft{
			Name: "Applications", Fields: []form.FieldSpec{{Label: "Name", Type: "text"}, {Label: "CV", Type: "file"}}}})
		if err != nil {
			t.Fatal(err)
		}
		f := fv.Form
		sub := "sub_" + strings.Repeat("f", 22) + "0001"
		cv := bytes.Repeat([]byte("%PDF-1.7 curriculum vitae "), 4731) // 123,006 bytes: "120 KB"
		letter := []byte("Dear team,")
		keys := fs.upload(t, db, f, sub, []string{"cv.pdf", "letter.pdf"}, [][]byte{cv, letter}, "https://cdn.example.org/portfolio.pdf")
		link := "/app/files/" + sub + "/obj_a/cv.pdf"

		// The table and the detail name the files with their sizes, linked for members.
		for _, path := range []string{"/app/forms/" + f.ID() + "/responses", "/app/forms/" + f.ID() + "/responses/" + sub} {
			body := owner.get(path).expect(t, http.StatusOK).body
			for _, want := range []string{
				`<a class="file-link" href="` + link + `" rel="noreferrer">cv.pdf<span class="file-size">, 120 KB</span></a>`,
				`<a class="file-link" href="/app/files/` + sub + `/obj_b/letter.pdf" rel="noreferrer">letter.pdf<span class="file-size">, 10 bytes</span></a>`,
				`https://cdn.example.org/portfolio.pdf`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("%s lacks %s", path, want)
				}
			}
			if strings.Contains(body, "sig=") || strings.Contains(body, keys[0]) {
				t.Errorf("%s shows a signed link or a storage key: %s", path, text(body))
			}
		}

		first, got := owner.download(t, link)
		if !bytes.Equal(got, cv) {
			t.Fatalf("downloaded %d bytes, want the %d of cv.pdf", len(got), len(cv))
		}

		// Hours later every signed link of that time has expired; the member link still works,
		// for any role.
		fs.clock.Advance(3 * time.Hour)
		if code := status(t, owner.client, first); code != http.StatusForbidden {
			t.Fatalf("a signed link three hours old: %d, want 403", code)
		}
		signed, got := owner.download(t, link)
		if signed == first || !bytes.Equal(got, cv) {
			t.Fatalf("the link three hours later: same signed link %v, %d bytes", signed == first, len(got))
		}
		viewer := h.member(owner, "viewer@example.org", "viewer")
		if _, got := viewer.download(t, "/app/files/"+sub+"/obj_b/letter.pdf"); !bytes.Equal(got, letter) {
			t.Fatalf("a viewer downloaded %q", got)
		}

		// Unknown files, another submission's or workspace's: not found, and no link.
		for _, bad := range []string{"/app/files/" + sub + "/obj_a/other.pdf", "/app/files/" + sub + "/obj_c/cv.pdf",
			"/app/files/sub_unknown/obj_a/cv.pdf", "/app/files/" + sub + "/obj_a", "/app/files/" + sub + "/",
			"/app/files/" + sub + "/https:/cdn.example.org/portfolio.pdf"} {
			if p := owner.get(bad); p.StatusCode != http.StatusNotFound || p.Header.Get("Location") != "" || !strings.Contains(text(p.body), "File not found") {
				t.Errorf("GET %s: %d to %q, want 404 File not found\n%s", bad, p.StatusCode, p.Header.Get("Location"), text(p.body))
			}
		}
		other, err := h.app.Commands.CreateWorkspace.Handle(ctx, workspace.CreateWorkspace{Name: "Elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		inv, err := h.app.Commands.InviteMember.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(other.ID())),
			accounts.InviteMember{Email: "stranger@example.org", Role: "owner"})
		if err != nil {
			t.Fatal(err)
		}
		stranger := h.browser()
		accept := acceptLink.FindString(inv.AcceptURL)
		stranger.post(accept, url.Values{"name": {"Mallory"}, "password": {"not-a-member-of-acme"}}).redirectsTo(t, "/app/forms")
		if p := stranger.get(link); p.StatusCode != http.StatusNotFound || strings.Contains(p.Header.Get("Location"), "sig=") {
			t.Fatalf("another workspace's member: %d to %q, want 404", p.StatusCode, p.Header.Get("Location"))
		}

		// A person in two workspaces opens a link in the workspace it belongs to; from the
		// other one the page says to switch.
		inv, err = h.app.Commands.InviteMember.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(other.ID())),
			accounts.InviteMember{Email: ownerEmail, Role: "viewer"})
		if err != nil {
			t.Fatal(err)
		}
		owner.post(acceptLink.FindString(inv.AcceptURL), url.Values{}).redirectsTo(t, "/app/forms")
		owner.post("/app/workspaces/switch", url.Values{"workspace_id": {other.ID()}}).redirectsTo(t, "/app/forms")
		if p := owner.get(link); p.StatusCode != http.StatusNotFound || !strings.Contains(text(p.body), "switch to that workspace") {
			t.Fatalf("from another of the person's workspaces: %d %s", p.StatusCode, text(p.body))
		}
		owner.post("/app/workspaces/switch", url.Values{"workspace_id": {ws.ID()}}).redirectsTo(t, "/app/forms")
		if _, got := owner.download(t, link); !bytes.Equal(got, cv) {
			t.Fatal("back in the file's workspace, the link does not give the file")
		}

		// Signed out: the sign-in page, which leads back to the file.
		visitor := h.browser()
		login := visitor.get(link).redirectsTo(t, "/app/login").Header.Get("Location")
		if login != "/app/login?next="+url.QueryEscape(link) {
			t.Fatalf("signed out: sent to %q", login)
		}
		back := visitor.post("/app/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}, "next": {link}}).redirectsTo(t, link)
		if _, got := visitor.download(t, back.Header.Get("Location")); !bytes.Equal(got, cv) {
			t.Fatal("after signing in, the link does not give the file")
		}
	})
}

// TestDashboardExportFileLinks: the dashboard's CSV and XLSX exports carry links that never
// expire (which open for a member), file_links=signed gives the hour-long signed links, and a
// bad value is refused with a message.
func TestDashboardExportFileLinks(t *testing.T) {
	db := persistencetest.SQLite(t, nil)
	fs := newFilesSetup(t, db)
	h := fs.h
	owner := h.owner()
	ctx := context.Background()
	ws, err := persistence.NewWorkspaceRepository(db).Oldest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fv, err := h.app.Commands.CreateForm.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID())), forms.CreateForm{Draft: form.Draft{
		Name: "Applications", Fields: []form.FieldSpec{{Label: "Name", Type: "text"}, {Label: "CV", Type: "file"}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := fv.Form
	sub := "sub_" + strings.Repeat("e", 22) + "0001"
	cv := []byte("%PDF-1.7 the CV")
	keys := fs.upload(t, db, f, sub, []string{"cv.pdf"}, [][]byte{cv})
	member := fs.public + "/app/files/" + sub + "/obj_a/cv.pdf"
	export := "/app/forms/" + f.ID() + "/export"

	csvCell := func(query string) string {
		t.Helper()
		p := owner.get(export+query).expect(t, http.StatusOK)
		rows, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
		if err != nil || len(rows) != 2 || rows[0][3] != "CV" {
			t.Fatalf("%s: %v %q", query, err, rows)
		}
		return rows[1][3]
	}
	if got := csvCell("?format=csv"); got != member {
		t.Fatalf("CSV file cell %q, want %q", got, member)
	}
	if got := csvCell("?format=csv&file_links=member"); got != member {
		t.Fatalf("CSV file_links=member cell %q", got)
	}
	p := owner.get(export+"?format=xlsx").expect(t, http.StatusOK)
	book, err := excelize.OpenReader(strings.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := book.GetCellValue("Submissions", "D2"); got != member {
		t.Fatalf("XLSX file cell %q, want %q", got, member)
	}
	// Typed cells: the link is an inline string as it is, the received time a number (a
	// date-time through its format).
	if typ, err := book.GetCellType("Submissions", "D2"); err != nil || typ != excelize.CellTypeInlineString {
		t.Fatalf("the XLSX file cell is of type %v (%v), want an inline string", typ, err)
	}
	if raw, _ := book.GetCellValue("Submissions", "B2", excelize.Options{RawCellValue: true}); !regexp.MustCompile(`^\d{5}(\.\d+)?$`).MatchString(raw) {
		t.Fatalf("the XLSX received time holds %q, want a date-time serial number", raw)
	}
	_ = book.Close()

	// The exported link opens for a member, hours later.
	fs.clock.Advance(5 * time.Hour)
	if _, got := owner.download(t, strings.TrimPrefix(member, fs.public)); !bytes.Equal(got, cv) {
		t.Fatalf("the exported link gave %q", got)
	}

	signed := csvCell("?format=csv&file_links=signed")
	if !strings.HasPrefix(signed, fs.files.URL+"/files/"+keys[0]+"?expires=") {
		t.Fatalf("file_links=signed cell %q", signed)
	}
	if code := status(t, owner.client, signed); code != http.StatusOK {
		t.Fatalf("the signed link: %d", code)
	}
	for _, bad := range []string{"?format=csv&file_links=forever", "?format=xlsx&file_links="} {
		p := owner.get(export+bad).expect(t, http.StatusBadRequest)
		if !strings.Contains(text(p.body), "file_links must be member or signed") {
			t.Fatalf("%s: %s", bad, text(p.body))
		}
	}

	// The audit log names the one export that handed out signed links; refusals record nothing.
	events, err := persistence.NewAuditLog(db).List(ctx, ws.ID(), ports.AuditQuery{Page: ports.Page{Limit: 100},
		Action: string(audit.SubmissionsExported)})
	if err != nil {
		t.Fatal(err)
	}
	signed = ""
	for _, e := range events {
		if v, ok := e.Details["file_links"]; ok {
			signed += fmt.Sprintf("%v %v;", e.Details["format"], v)
		}
	}
	if len(events) != 4 || signed != "csv signed;" {
		t.Fatalf("%d export events, with file_links: %q", len(events), signed)
	}
}
