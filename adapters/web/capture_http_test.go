package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/application"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

type filePart struct {
	field, name string
	body        []byte
}

// postMultipart sends values and files as a browser does.
func (h *harness) postMultipart(f *form.Form, values url.Values, files ...filePart) *httptest.ResponseRecorder {
	h.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, vs := range values {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	for _, fp := range files {
		fw, _ := w.CreateFormFile(fp.field, fp.name)
		_, _ = fw.Write(fp.body)
	}
	_ = w.Close()
	req := httptest.NewRequest("POST", "/f/"+f.ID(), &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return h.do(req)
}

func (h *harness) postJSON(f *form.Form, payload any) *httptest.ResponseRecorder {
	h.t.Helper()
	b, _ := json.Marshal(payload)
	req := httptest.NewRequest("POST", "/f/"+f.ID(), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return h.do(req)
}

func localStore(t *testing.T) *objectstore.Local {
	t.Helper()
	store, err := objectstore.NewLocal(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func usage(t *testing.T, store ports.ObjectStore, f *form.Form) int64 {
	t.Helper()
	n, err := store.Usage(context.Background(), ports.FormFilesPrefix(f.WorkspaceID(), f.ID()))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var pdf = []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")

func TestUploadsGoThroughTheCapture(t *testing.T) {
	store := localStore(t)
	h := newHarnessWith(t, store, submission.FileLimits{}, zap.NewNop())
	one := int64(1024)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "CV", Type: "file", Required: true, MaxFileBytes: &one},
		form.FieldSpec{Label: "Photo", Type: "file"})
	cv, photo := f.Fields()[0].ID, f.Fields()[1].ID
	token, _ := h.page(f, "")
	if rec := h.postMultipart(f, url.Values{"_token": {token}}, filePart{cv, "big.pdf", bytes.Repeat([]byte("x"), 2000)}); rec.Code != 422 || !strings.Contains(body(rec), "larger than 1 KB") {
		t.Fatalf("too large: %d %s", rec.Code, body(rec))
	}
	// One good file and one too large: the post is refused before anything is stored.
	if rec := h.postMultipart(f, url.Values{"_token": {token}}, filePart{cv, "cv.pdf", pdf}, filePart{photo, "x.png", bytes.Repeat([]byte("x"), 30<<20)}); rec.Code != 422 && rec.Code != 413 {
		t.Fatalf("mixed: %d", rec.Code)
	}
	if n := usage(t, store, f); n != 0 {
		t.Fatalf("a refused post left %d bytes", n)
	}
	rec := h.postMultipart(f, url.Values{"_token": {token}}, filePart{cv, "../cv.pdf", pdf})
	if rec.Code != 200 {
		t.Fatalf("upload: %d %s", rec.Code, body(rec))
	}
	subs := h.submissions(f)
	if len(subs) != 1 {
		t.Fatalf("%d stored", len(subs))
	}
	key := subs[0].Data()[cv].Strings()[0]
	if !strings.HasPrefix(key, ports.SubmissionFilesPrefix(h.ws, f.ID(), subs[0].ID())) || !strings.HasSuffix(key, "/cv.pdf") {
		t.Fatalf("key %q is not under the submission's prefix", key)
	}
	rc, info, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	_ = rc.Close()
	if !bytes.Equal(got, pdf) || info.ContentType != "application/pdf" {
		t.Fatalf("stored %q as %s", got, info.ContentType)
	}
}

// One anonymous post may not fill the disk: at most 10 files per field and 20 per post.
func TestTooManyFilesStoreNothing(t *testing.T) {
	store := localStore(t)
	h := newHarnessWith(t, store, submission.FileLimits{}, zap.NewNop())
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Docs", Type: "file"}, form.FieldSpec{Label: "More", Type: "file"},
		form.FieldSpec{Label: "Extra", Type: "file"})
	many := func(field string, n int) []filePart {
		var out []filePart
		for i := 0; i < n; i++ {
			out = append(out, filePart{field, fmt.Sprintf("f%d.pdf", i), pdf})
		}
		return out
	}
	token, _ := h.page(f, "")
	rec := h.postMultipart(f, url.Values{"_token": {token}}, many(f.Fields()[0].ID, 11)...)
	if rec.Code != 422 || !strings.Contains(body(rec), "at most 10 files") {
		t.Fatalf("11 in one field: %d %s", rec.Code, body(rec))
	}
	all := append(append(many(f.Fields()[0].ID, 8), many(f.Fields()[1].ID, 8)...), many(f.Fields()[2].ID, 8)...)
	rec = h.postMultipart(f, url.Values{"_token": {token}}, all...)
	if rec.Code != 422 || !strings.Contains(body(rec), "at most 20 files") {
		t.Fatalf("24 in one post: %d %s", rec.Code, body(rec))
	}
	rec = h.postMultipart(f, url.Values{"_token": {token}}, many(f.Fields()[0].ID, 990)...)
	if rec.Code != 422 {
		t.Fatalf("990 files: %d", rec.Code)
	}
	if n := usage(t, store, f); n != 0 || len(h.submissions(f)) != 0 {
		t.Fatalf("stored %d bytes", n)
	}
	if rec := h.postMultipart(f, url.Values{"_token": {token}}, many(f.Fields()[0].ID, 10)...); rec.Code != 200 {
		t.Fatalf("10 files: %d %s", rec.Code, body(rec))
	}
}

// A public file field takes uploads only: a link typed into it is refused.
func TestLinksInPublicFileFieldsAreRefused(t *testing.T) {
	h := newHarnessWith(t, localStore(t), submission.FileLimits{}, zap.NewNop())
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "CV", Type: "file"}, form.FieldSpec{Label: "Name", Type: "text"})
	cv := f.Fields()[0].ID
	token, _ := h.page(f, "")
	rec := h.postJSON(f, map[string]any{"token": token, "data": map[string]any{cv: "https://evil.example/x.pdf.exe"}})
	var out struct {
		Error struct {
			Code    string `json:"code"`
			Details []struct{ Field, Code string }
		} `json:"error"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	if rec.Code != 422 || len(out.Error.Details) != 1 || out.Error.Details[0].Field != cv || out.Error.Details[0].Code != "invalid_value" {
		t.Fatalf("JSON: %d %s", rec.Code, rec.Body.String())
	}
	rec = h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, cv: {"https://evil.example/x.pdf"}})
	if rec.Code != 422 || !strings.Contains(body(rec), "links are not accepted") {
		t.Fatalf("urlencoded: %d", rec.Code)
	}
	if n := len(h.submissions(f)); n != 0 {
		t.Fatalf("%d stored", n)
	}
}

// unavailableStore fails every write as a full disk does.
type unavailableStore struct{ ports.ObjectStore }

func (unavailableStore) Put(context.Context, string, io.Reader, int64, string) error {
	return fmt.Errorf("put: no space left on device: %w", domain.ErrUnavailable)
}

func TestStorageUnavailableAsksToTryAgain(t *testing.T) {
	h := newHarnessWith(t, unavailableStore{localStore(t)}, submission.FileLimits{}, zap.NewNop())
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "CV", Type: "file"})
	token, _ := h.page(f, "")
	rec := h.postMultipart(f, url.Values{"_token": {token}}, filePart{f.Fields()[0].ID, "cv.pdf", pdf})
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "5" || !strings.Contains(body(rec), "try again shortly") {
		t.Fatalf("page: %d %v %s", rec.Code, rec.Header(), body(rec))
	}
	rec = h.postJSON(f, map[string]any{"token": token, "data": map[string]any{}})
	if rec.Code != 201 {
		t.Fatalf("a post without files still works: %d %s", rec.Code, rec.Body.String())
	}
	// Through JSON the same error is the API's 503 unavailable.
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("_token", token)
	fw, _ := w.CreateFormFile(f.Fields()[0].ID, "cv.pdf")
	_, _ = fw.Write(pdf)
	_ = w.Close()
	req := httptest.NewRequest("POST", "/f/"+f.ID(), &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if rec := h.do(req); rec.Code != 503 {
		t.Fatalf("again: %d", rec.Code)
	}
}

func TestChallengeIsRateLimitedPerIPv6Slash64(t *testing.T) {
	h := newHarness(t, func(o *web.Options) { o.RateLimit = 3 })
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	get := func(ip string) int {
		req := httptest.NewRequest("GET", "/f/"+f.ID()+"/challenge", nil)
		req.RemoteAddr = "[" + ip + "]:4000"
		return h.do(req).Code
	}
	for i, ip := range []string{"2001:db8:7:7::1", "2001:db8:7:7::2", "2001:db8:7:7:abcd::3"} {
		if code := get(ip); code != 200 {
			t.Fatalf("challenge %d: %d", i, code)
		}
	}
	req := httptest.NewRequest("GET", "/f/"+f.ID()+"/challenge", nil)
	req.RemoteAddr = "[2001:db8:7:7::4]:4000"
	rec := h.do(req)
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("4th address of the /64: %d", rec.Code)
	}
	if code := get("2001:db8:7:8::1"); code != 200 {
		t.Fatalf("another /64: %d", code)
	}
	// Posts count the /64 too.
	for i := 0; i < 3; i++ {
		token, _ := h.page(f, "")
		req := httptest.NewRequest("POST", "/f/"+f.ID(), strings.NewReader(url.Values{"_token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = fmt.Sprintf("[2001:db8:5:5::%d]:4000", i+1)
		if rec := h.do(req); rec.Code != 200 {
			t.Fatalf("post %d: %d", i, rec.Code)
		}
	}
	req = httptest.NewRequest("POST", "/f/"+f.ID(), strings.NewReader(url.Values{}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "[2001:db8:5:5::99]:4000"
	if rec := h.do(req); rec.Code != 429 {
		t.Fatalf("post from a rotated address: %d", rec.Code)
	}
}

// Uploads over 1 MiB are spooled under Options.TempDir, whatever TMPDIR says; when even that
// is not writable, the log says why.
func TestLargeUploadsSpoolUnderTheConfiguredTempDir(t *testing.T) {
	blocked := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocked, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", blocked) // a read-only root: the default temp dir cannot be written
	big := append(append([]byte(nil), pdf...), bytes.Repeat([]byte("a"), 2<<20)...)

	spool := t.TempDir()
	h := newHarnessWith(t, localStore(t), submission.FileLimits{}, zap.NewNop(), func(o *web.Options) { o.TempDir = spool })
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "CV", Type: "file"})
	token, _ := h.page(f, "")
	if rec := h.postMultipart(f, url.Values{"_token": {token}}, filePart{f.Fields()[0].ID, "cv.pdf", big}); rec.Code != 200 {
		t.Fatalf("2 MiB upload: %d %s", rec.Code, body(rec))
	}
	if left, _ := os.ReadDir(spool); len(left) != 0 {
		t.Fatalf("temp files left behind: %v", left)
	}

	core, logs := observer.New(zap.ErrorLevel)
	h = newHarnessWith(t, localStore(t), submission.FileLimits{}, zap.New(core), func(o *web.Options) { o.TempDir = filepath.Join(blocked, "tmp") })
	f = h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "CV", Type: "file"})
	token, _ = h.page(f, "")
	rec := h.postMultipart(f, url.Values{"_token": {token}}, filePart{f.Fields()[0].ID, "cv.pdf", big})
	if rec.Code != 400 || !strings.Contains(body(rec), "could not be read") {
		t.Fatalf("unwritable temp dir: %d", rec.Code)
	}
	entries := logs.FilterMessageSnippet("spool upload").All()
	if len(entries) == 0 || !strings.Contains(fmt.Sprint(entries[0].ContextMap()), "not a directory") {
		t.Fatalf("the cause is not in the log: %v", logs.All())
	}
}

// Owner text stored before settings were parsed strictly never reaches a header: a redirect
// URL is parsed again before use, and origins are origin.Origin values (a stored origin that
// does not parse makes the settings unreadable, see adapters/persistence). A request's Origin
// reaches Access-Control-Allow-Origin only parsed and written out again.
func TestHeadersCarryOnlyParsedOrigins(t *testing.T) {
	h := newHarness(t)
	redirect := "https://a.example;sandbox;report-uri/"
	s := *lenient()
	s.RedirectURL = &redirect
	s.Embed.FrameAncestors = origins(t, "https://ok.example", "http://[::1]:8080")
	s.Embed.CORSOrigins = origins(t, "https://cors.example")
	now := time.Now()
	f := form.UnmarshalWithSettingsFromDatabase("frm_"+strings.Repeat("a", 26), h.ws, "Old", nil, form.StatusPublished,
		[]form.Field{{ID: "fld_name", Label: "Name", Type: form.TypeText}}, s, now, now)
	repo := persistence.NewFormRepository(h.db, persistencetest.Cipher())
	if err := repo.Create(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	rec := h.get("/f/" + f.ID())
	csp := rec.Header().Get("Content-Security-Policy")
	if rec.Code != 200 || strings.Contains(csp, "sandbox") || strings.Contains(csp, "report-uri") ||
		!strings.Contains(csp, "frame-ancestors https://ok.example http://[::1]:8080;") || !strings.Contains(csp, "form-action 'self';") {
		t.Fatalf("CSP %q", csp)
	}
	token, _ := h.page(f, "")
	rec = h.postForm("/f/"+f.ID(), url.Values{"_token": {token}})
	if loc := rec.Header().Get("Location"); strings.Contains(loc, "sandbox") || strings.Contains(rec.Header().Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("redirect %d to %q, CSP %q", rec.Code, loc, rec.Header().Get("Content-Security-Policy"))
	}
	for _, o := range []string{"https://cors.example\r\nX-Injected: 1", "https://cors.example/", "https://*.example", "https://c.example", "null"} {
		req := httptest.NewRequest("OPTIONS", "/f/"+f.ID(), nil)
		req.Header.Set("Origin", o)
		if rec := h.do(req); rec.Header().Get("Access-Control-Allow-Origin") != "" || rec.Header().Get("X-Injected") != "" {
			t.Fatalf("origin %q allowed: %v", o, rec.Header())
		}
	}
	req := httptest.NewRequest("OPTIONS", "/f/"+f.ID(), nil)
	req.Header.Set("Origin", "https://CORS.example:443")
	if rec := h.do(req); rec.Header().Get("Access-Control-Allow-Origin") != "https://cors.example" {
		t.Fatalf("the good origin: %v", rec.Header())
	}
}

// TestCORSWithIPv6Origin: an origin with an IPv6 literal, accepted in the settings, is the
// one the browser sends, so CORS matches it (preflight, challenge and post) and a form-backend
// post from it is accepted without a render token.
func TestCORSWithIPv6Origin(t *testing.T) {
	h := newHarness(t, noRateLimit)
	const site = "http://[::1]:8080"
	s := form.DefaultSettings()
	s.AllowedOrigins = origins(t, site)
	s.Embed.CORSOrigins = origins(t, "http://[::1]:8081")
	f := h.form(form.StatusPublished, &s, form.FieldSpec{Label: "Name", Type: "text"})
	for _, from := range []string{site, "http://[::1]:8081"} {
		pre := httptest.NewRequest("OPTIONS", "/f/"+f.ID(), nil)
		pre.Header.Set("Origin", from)
		pre.Header.Set("Access-Control-Request-Method", "POST")
		if rec := h.do(pre); rec.Code != 204 || rec.Header().Get("Access-Control-Allow-Origin") != from {
			t.Fatalf("preflight from %s: %d %v", from, rec.Code, rec.Header())
		}
		ch := httptest.NewRequest("GET", "/f/"+f.ID()+"/challenge", nil)
		ch.Header.Set("Origin", from)
		if rec := h.do(ch); rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != from {
			t.Fatalf("challenge from %s: %d %v", from, rec.Code, rec.Header())
		}
	}
	req := httptest.NewRequest("POST", "/f/"+f.ID(), strings.NewReader(`{"data": {"name": "Ada"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", site)
	rec := h.do(req)
	if rec.Code != 201 || rec.Header().Get("Access-Control-Allow-Origin") != site {
		t.Fatalf("form-backend JSON post from %s: %d %v %s", site, rec.Code, rec.Header(), body(rec))
	}
	if n := len(h.submissions(f)); n != 1 {
		t.Fatalf("%d stored", n)
	}
	// Another port of the same host is another origin.
	pre := httptest.NewRequest("OPTIONS", "/f/"+f.ID(), nil)
	pre.Header.Set("Origin", "http://[::1]:9090")
	if rec := h.do(pre); rec.Code != 403 || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from another port: %d %v", rec.Code, rec.Header())
	}
}

// unreachableForms answers every read as a database that cannot be reached.
type unreachableForms struct{ ports.FormRepository }

func (unreachableForms) Find(context.Context, string) (*form.Form, error) {
	return nil, fmt.Errorf("find form: connection refused: %w", domain.ErrUnavailable)
}

func TestDatabaseUnavailableAsksToTryAgain(t *testing.T) {
	app := application.New(application.Deps{Forms: unreachableForms{}, Clock: &clock{now: time.Now()}}, application.Settings{})
	h, err := web.New(web.Deps{App: app, Clock: &clock{now: time.Now()}, Logger: zap.NewNop()}, web.Options{TokenKey: []byte("k"), PoWKey: []byte("p")})
	if err != nil {
		t.Fatal(err)
	}
	r := gin.New()
	h.Mount(r)
	for _, tc := range []struct{ method, ct, want string }{
		{"GET", "", "try again shortly"},
		{"POST", "application/x-www-form-urlencoded", "try again shortly"},
		{"POST", "application/json", `"code":"unavailable"`},
		{"GET", "", "try again shortly"},
	} {
		req := httptest.NewRequest(tc.method, "/f/frm_"+strings.Repeat("x", 26), strings.NewReader(`{"data":{}}`))
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != 503 || rec.Header().Get("Retry-After") != "5" || !strings.Contains(rec.Body.String(), tc.want) {
			t.Fatalf("%s %s: %d %v %s", tc.method, tc.ct, rec.Code, rec.Header(), rec.Body.String())
		}
	}
	req := httptest.NewRequest("GET", "/f/frm_"+strings.Repeat("x", 26)+"/challenge", nil)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "5" {
		t.Fatalf("challenge: %d", rec.Code)
	}
}
