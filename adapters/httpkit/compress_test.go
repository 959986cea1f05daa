package httpkit_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
)

func TestCompressTextButNotFilesOrCompressedTypes(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	text := strings.Repeat("Formward compresses text responses. ", 200) // 7 KB
	r := gin.New()
	for path, ctype := range map[string]string{
		"/f/frm_1":               "text/html; charset=utf-8",
		"/f/assets/form.css":     "text/css; charset=utf-8",
		"/f/assets/form.js":      "text/javascript; charset=utf-8",
		"/v1/forms":              "application/json; charset=utf-8",
		"/files/ws/frm/sub/a.js": "text/javascript; charset=utf-8",
		"/logo.png":              "image/png",
		"/archive.zip":           "application/zip",
		"/download":              "application/octet-stream",
	} {
		r.GET(path, func(c *gin.Context) { c.Data(200, ctype, []byte(text)) })
	}
	r.GET("/v1/small", func(c *gin.Context) { c.Data(200, "application/json", []byte(`{"ok":true}`)) })
	h := httpkit.Compress(r)

	get := func(path, acceptEncoding string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	for _, path := range []string{"/f/frm_1", "/f/assets/form.css", "/f/assets/form.js", "/v1/forms"} {
		rec := get(path, "gzip, deflate, br")
		if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: status %d, Content-Encoding %q, want gzip", path, rec.Code, rec.Header().Get("Content-Encoding"))
			continue
		}
		if !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Vary %q lacks Accept-Encoding", path, rec.Header().Get("Vary"))
		}
		if rec.Body.Len() >= len(text)/4 {
			t.Errorf("%s: %d bytes compressed from %d", path, rec.Body.Len(), len(text))
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || string(plain) != text {
			t.Errorf("%s: the gzip body does not decompress to the response (%v)", path, err)
		}
	}
	// A client that does not ask for it, an uploaded file, already-compressed or binary types and
	// tiny responses are sent as they are.
	for _, c := range []struct{ path, accept string }{
		{"/f/frm_1", ""},
		{"/f/frm_1", "identity"},
		{"/files/ws/frm/sub/a.js", "gzip"},
		{"/logo.png", "gzip"},
		{"/archive.zip", "gzip"},
		{"/download", "gzip"},
		{"/v1/small", "gzip"},
	} {
		rec := get(c.path, c.accept)
		if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s (Accept-Encoding %q): status %d, Content-Encoding %q, want none", c.path, c.accept, rec.Code, rec.Header().Get("Content-Encoding"))
		}
		if c.path != "/v1/small" && rec.Body.String() != text {
			t.Errorf("%s (Accept-Encoding %q): body changed", c.path, c.accept)
		}
	}
}

// HEAD and 304 answers carry no body to compress and must stay intact.
func TestCompressLeavesBodilessAnswersAlone(t *testing.T) {
	r := gin.New()
	r.GET("/etag", func(c *gin.Context) {
		if c.GetHeader("If-None-Match") == `W/"v1"` {
			c.Status(http.StatusNotModified)
			return
		}
		c.Header("ETag", `W/"v1"`)
		c.Data(200, "text/css", []byte(strings.Repeat("a{}", 1000)))
	})
	req := httptest.NewRequest("GET", "/etag", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("If-None-Match", `W/"v1"`)
	rec := httptest.NewRecorder()
	httpkit.Compress(r).ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("Content-Encoding") != "" {
		t.Fatalf("304: status %d, %d bytes, Content-Encoding %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Encoding"))
	}
}
