package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/domain/form"
)

// The public page is sent gzip-compressed to a client that accepts gzip, as it is behind the
// server's compression middleware too (compressed once, not twice), and plain to one that
// does not; both are the same page.
func TestCachedPageGzipOverHTTP(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, guarded(), form.FieldSpec{Label: `Name "<&>+'`, Type: "text", Required: true})
	path := "/f/" + f.ID() + "?utm_source=news%22%3C%3E%2B%26%00&utm_medium=m%C3%A9"
	for _, wrapped := range []bool{false, true} {
		handler := h.handler
		if wrapped {
			handler = httpkit.Compress(h.handler)
		}
		serve := func(ae string) *httptest.ResponseRecorder {
			req := httptest.NewRequest("GET", path, nil)
			req.RemoteAddr = h.ip + ":40000"
			if ae != "" {
				req.Header.Set("Accept-Encoding", ae)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET with Accept-Encoding %q: %d", ae, rec.Code)
			}
			if got := rec.Header().Values("Vary"); len(got) != 1 || got[0] != "Accept-Encoding" {
				t.Fatalf("Vary %q, want Accept-Encoding once", got)
			}
			if rec.Header().Get("Content-Security-Policy") == "" || rec.Header().Get("Cache-Control") != "no-store" {
				t.Fatal("page without its security headers")
			}
			return rec
		}
		plain := serve("")
		if ce := plain.Header().Get("Content-Encoding"); ce != "" {
			t.Fatalf("plain page with Content-Encoding %q", ce)
		}
		for _, ae := range []string{"gzip", "gzip, deflate, br, zstd"} {
			gz := serve(ae)
			if ce := gz.Header().Get("Content-Encoding"); ce != "gzip" {
				t.Fatalf("wrapped %v, Accept-Encoding %q: Content-Encoding %q", wrapped, ae, ce)
			}
			if cl := gz.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(gz.Body.Len()) {
				t.Fatalf("Content-Length %s of a %d-byte body", cl, gz.Body.Len())
			}
			zr, err := gzip.NewReader(bytes.NewReader(gz.Body.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			zr.Multistream(false) // compressed once: one member, nothing after it
			body, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if rest, _ := io.ReadAll(zr); len(rest) != 0 {
				t.Fatal("data after the gzip member")
			}
			strip := func(s string) string { return tokenRe.ReplaceAllString(challengeRe.ReplaceAllString(s, "C"), "T") }
			if strip(string(body)) != strip(plain.Body.String()) {
				t.Fatalf("gzip page differs from the plain one:\n%s\n%s", body, plain.Body.String())
			}
			if !bytes.Contains(body, []byte(`<input type="hidden" name="_utm_source" value="news&#34;&lt;&gt;&#43;&amp;`)) {
				t.Fatalf("UTM input missing or mis-escaped: %s", body)
			}
		}
	}
}
