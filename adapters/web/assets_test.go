package web_test

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/domain/form"
)

var (
	cssRe  = regexp.MustCompile(`<link rel="stylesheet" href="(/f/assets/form\.([0-9a-f]{10})\.css)">`)
	jsRe   = regexp.MustCompile(`<script src="(/f/assets/form\.([0-9a-f]{10})\.js)" defer></script>`)
	metaRe = regexp.MustCompile(`<meta name="description" content="([^"]*)">`)
)

// The page links its CSS and JavaScript under URLs that carry a hash of the content; those are
// cached for a year as immutable, the plain names only briefly, and an outdated hash is a 404
// (never another version's content under a URL that a cache keeps for a year).
func TestHashedAssetsAreImmutableAndPlainNamesShortLived(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), everyType()...)
	page := body(h.get("/f/" + f.ID()))
	for _, c := range []struct {
		re    *regexp.Regexp
		plain string
		ctype string
	}{{cssRe, "/f/assets/form.css", "text/css"}, {jsRe, "/f/assets/form.js", "javascript"}} {
		m := c.re.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("the page links no hashed %s: %s", c.plain, page)
		}
		hashed, hash := m[1], m[2]

		rec := h.get(hashed)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d", hashed, rec.Code)
		}
		content := body(rec)
		sum := sha256.Sum256([]byte(content))
		if hex.EncodeToString(sum[:])[:10] != hash {
			t.Errorf("%s: the hash in the URL is not the content's", hashed)
		}
		if got := rec.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", hashed, got)
		}
		if !strings.Contains(rec.Header().Get("Content-Type"), c.ctype) || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: Content-Type %q, X-Content-Type-Options %q", hashed, rec.Header().Get("Content-Type"), rec.Header().Get("X-Content-Type-Options"))
		}
		etag := rec.Header().Get("ETag")
		if etag != `W/"`+hash+`"` {
			t.Errorf("%s: ETag %q", hashed, etag)
		}
		req := httptest.NewRequest("GET", hashed, nil)
		req.Header.Set("If-None-Match", etag)
		if rec := h.do(req); rec.Code != 304 {
			t.Errorf("%s with If-None-Match: %d, want 304", hashed, rec.Code)
		}

		rec = h.get(c.plain)
		if rec.Code != 200 || body(rec) != content {
			t.Fatalf("GET %s: %d, or other content than %s", c.plain, rec.Code, hashed)
		}
		if got := rec.Header().Get("Cache-Control"); strings.Contains(got, "immutable") || got != "public, max-age=300" {
			t.Errorf("%s: Cache-Control %q, want a short cache", c.plain, got)
		}

		outdated := strings.Replace(hashed, hash, "0123456789", 1)
		if rec := h.get(outdated); rec.Code != 404 {
			t.Errorf("GET %s (an outdated hash): %d, want 404", outdated, rec.Code)
		}
	}
	if rec := h.get("/f/assets/nothing.css"); rec.Code != 404 {
		t.Errorf("unknown asset: %d", rec.Code)
	}
}

// Every page has a meta description (Lighthouse "Document has a meta description").
func TestPagesHaveAMetaDescription(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), everyType()...)
	m := metaRe.FindStringSubmatch(body(h.get("/f/" + f.ID())))
	if m == nil || m[1] != "Contact: fill in the form and send it." {
		t.Fatalf("form page meta description: %v", m)
	}
	// A message page (here: no such form) describes itself with its message.
	rec := h.get("/f/frm_doesnotexist")
	if m := metaRe.FindStringSubmatch(body(rec)); m == nil || strings.TrimSpace(m[1]) == "" {
		t.Fatalf("message page (%d) has no meta description: %s", rec.Code, body(rec))
	}
}

// aria-required belongs on an element whose role supports it: a required radio group is a
// fieldset with role="radiogroup" (axe-core's aria-allowed-attr rule, critical, flagged a plain
// fieldset), and the radios themselves are required.
func TestRequiredRadioGroupIsARadiogroup(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), everyType()...)
	page := body(h.get("/f/" + f.ID()))
	fieldsets := regexp.MustCompile(`<fieldset[^>]*>`).FindAllString(page, -1)
	if len(fieldsets) != 2 {
		t.Fatalf("want 2 fieldsets (checkbox group, radio group), got %v", fieldsets)
	}
	var radiogroup bool
	for _, fs := range fieldsets {
		if strings.Contains(fs, "aria-required") && !strings.Contains(fs, `role="radiogroup"`) {
			t.Errorf("aria-required on a fieldset without a role that supports it: %s", fs)
		}
		if strings.Contains(fs, `role="radiogroup" aria-required="true"`) {
			radiogroup = true
		}
	}
	if !radiogroup {
		t.Errorf("the required radio group is not a required radiogroup: %v", fieldsets)
	}
}

// Through the server's compression (adapters/httpkit.Compress, as `formward serve` runs it), the
// page and its assets go out gzipped to a browser that accepts it, with the same cache headers.
func TestPageAndAssetsAreCompressed(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), everyType()...)
	srv := httpkit.Compress(h.handler)
	get := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = h.ip + ":40000"
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	rec := get("/f/" + f.ID())
	page := gunzip(t, rec)
	if rec.Code != 200 || !strings.Contains(page, `name="_token"`) || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("page: %d, Cache-Control %q", rec.Code, rec.Header().Get("Cache-Control"))
	}
	for _, re := range []*regexp.Regexp{cssRe, jsRe} {
		hashed := re.FindStringSubmatch(page)[1]
		rec := get(hashed)
		if content := gunzip(t, rec); rec.Code != 200 || content == "" {
			t.Fatalf("%s: %d", hashed, rec.Code)
		}
		if rec.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Cache-Control %q, Vary %q", hashed, rec.Header().Get("Cache-Control"), rec.Header().Get("Vary"))
		}
	}
}

func gunzip(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", rec.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
