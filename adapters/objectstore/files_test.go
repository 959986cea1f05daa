package objectstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/domain/workspace"
)

func TestNewKeyShape(t *testing.T) {
	key, err := objectstore.NewKey("wsp_1", "frm_2", `C:\Users\me\Résumé final.pdf`)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(key, "/")
	if len(parts) != 6 || parts[0] != "workspaces" || parts[1] != "wsp_1" || parts[2] != "forms" || parts[3] != "frm_2" || len(parts[4]) != 32 {
		t.Fatalf("key %s", key)
	}
	if parts[5] != "R_sum__final.pdf" {
		t.Fatalf("file name %q", parts[5])
	}
}

func TestSanitizeFilename(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":                       "report.pdf",
		"../../etc/passwd":                 "passwd",
		".htaccess":                        "htaccess",
		"":                                 "file",
		"..":                               "file",
		"a b/c d.png":                      "c_d.png",
		"x.meta":                           "x.meta_",
		strings.Repeat("a", 300) + ".jpeg": strings.Repeat("a", 95) + ".jpeg",
	} {
		if got := objectstore.SanitizeFilename(in); got != want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeyFromReference(t *testing.T) {
	s := objectstore.Signer{Key: []byte("k"), BaseURL: "https://forms.example.com/"}
	key := "workspaces/w/forms/f/abc/a.pdf"
	for _, ref := range []string{key, s.Reference(key), s.URL(key, time.Now().Add(time.Hour))} {
		if got, ok := objectstore.KeyFromReference(ref); !ok || got != key {
			t.Errorf("KeyFromReference(%q) = %q, %v", ref, got, ok)
		}
	}
	if _, ok := objectstore.KeyFromReference("https://evil.example/files/../x"); ok {
		t.Error("accepted a traversal")
	}
}

func TestSignerAndServe(t *testing.T) {
	ctx := context.Background()
	store, err := objectstore.NewLocal(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	key := "workspaces/w/forms/f/0011/photo.png"
	if err := store.Put(ctx, key, strings.NewReader("<html>not really</html>"), 23, "image/png"); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	signer := objectstore.Signer{Key: []byte("secret"), BaseURL: "https://forms.example.com"}
	h := objectstore.Serve(store, signer, func() time.Time { return now })
	get := func(raw string) *http.Response {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
		return rec.Result()
	}

	good := signer.URL(key, now.Add(10*time.Minute))
	if !strings.HasPrefix(good, "https://forms.example.com/files/"+key+"?expires=") {
		t.Fatalf("url %s", good)
	}
	resp := get(good)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "<html>not really</html>" {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	for k, want := range map[string]string{
		"Content-Type":           "image/png",
		"Content-Disposition":    "attachment; filename=photo.png",
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "private, max-age=600",
		"Content-Length":         "23",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}

	u, _ := url.Parse(good)
	q := u.Query()
	tampered := func(mut func(url.Values, *url.URL)) string {
		c := *u
		v := url.Values{}
		for k, vs := range q {
			v[k] = append([]string(nil), vs...)
		}
		mut(v, &c)
		c.RawQuery = v.Encode()
		return c.String()
	}
	for name, raw := range map[string]string{
		"expired":       signer.URL(key, now.Add(-time.Second)),
		"expiry moved":  tampered(func(v url.Values, _ *url.URL) { v.Set("expires", "1900000000") }),
		"bad signature": tampered(func(v url.Values, _ *url.URL) { v.Set("sig", strings.Repeat("0", 64)) }),
		"no signature":  tampered(func(v url.Values, _ *url.URL) { v.Del("sig") }),
		"other key":     tampered(func(_ url.Values, c *url.URL) { c.Path = "/files/workspaces/w/forms/f/0012/photo.png" }),
		"other signer":  objectstore.Signer{Key: []byte("other"), BaseURL: signer.BaseURL}.URL(key, now.Add(time.Hour)),
	} {
		if resp := get(raw); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d", name, resp.StatusCode)
		}
	}
	missing := signer.URL("workspaces/w/forms/f/0099/gone.png", now.Add(time.Minute))
	if resp := get(missing); resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing: status %d", resp.StatusCode)
	}
}

func TestCheckQuota(t *testing.T) {
	ctx := context.Background()
	store, err := objectstore.NewLocal(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := objectstore.FormPrefix("w", "f")
	used := strings.Repeat("x", 1000)
	if err := store.Put(ctx, prefix+"k/a.txt", strings.NewReader(used), 1000, "text/plain"); err != nil {
		t.Fatal(err)
	}
	limit, _ := objectstore.StorageLimit(workspace.PlanFree)
	if limit != 100<<20 {
		t.Fatalf("free limit %d", limit)
	}
	if err := objectstore.CheckQuota(ctx, store, prefix, workspace.PlanFree, limit-1000); err != nil {
		t.Fatalf("exactly at the limit: %v", err)
	}
	err = objectstore.CheckQuota(ctx, store, prefix, workspace.PlanFree, limit-999)
	var qe *objectstore.QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, objectstore.ErrQuotaExceeded) || !strings.Contains(err.Error(), "100 MB") {
		t.Fatalf("over the limit: %v", err)
	}
	if v := qe.Violation("fld_1"); v.Field != "fld_1" || v.Code != "storage_quota_exceeded" {
		t.Fatalf("violation %+v", v)
	}
	if err := objectstore.CheckQuota(ctx, store, prefix, workspace.PlanStarter, 2<<30); err == nil || !strings.Contains(err.Error(), "1 GB") {
		t.Fatalf("starter: %v", err)
	}
	if err := objectstore.CheckQuota(ctx, store, prefix, workspace.PlanGrowth, 11<<30); err == nil || !strings.Contains(err.Error(), "10 GB") {
		t.Fatalf("growth: %v", err)
	}
	if err := objectstore.CheckQuota(ctx, store, prefix, workspace.PlanBusiness, 1<<50); err != nil {
		t.Fatalf("business is unlimited: %v", err)
	}
}

func TestFileRules(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	pdf := []byte("%PDF-1.7\n")
	html := []byte("<!DOCTYPE html><html><script>alert(1)</script>")
	csv := []byte("name,email\nAda,ada@example.com\n")
	docx := []byte("PK\x03\x04\x14\x00\x06\x00")
	images := objectstore.FileRules{MaxBytes: 1 << 20, Accept: []string{"image/*", "application/pdf"}}
	tests := []struct {
		name     string
		rules    objectstore.FileRules
		size     int64
		declared string
		head     []byte
		wantType string
		wantCode string
	}{
		{"png", images, 100, "image/png", png, "image/png", ""},
		{"pdf with params", images, 100, "application/pdf; name=x", pdf, "application/pdf", ""},
		{"no declared type", images, 100, "", png, "image/png", ""},
		{"too large", images, 2 << 20, "image/png", png, "", "file_too_large"},
		{"html declared as png", images, 100, "image/png", html, "", "file_type_not_allowed"},
		{"declared type not accepted", images, 100, "text/html", html, "", "file_type_not_allowed"},
		{"csv", objectstore.FileRules{Accept: []string{"text/csv"}}, 100, "text/csv", csv, "text/csv", ""},
		{"docx", objectstore.FileRules{Accept: []string{"application/vnd.openxmlformats-officedocument.wordprocessingml.document"}}, 100,
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx,
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document", ""},
		{"anything goes", objectstore.FileRules{}, 1 << 30, "application/x-thing", []byte{1, 2, 3}, "application/x-thing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.rules.Check(tt.size, tt.declared, tt.head)
			var fe *objectstore.FileError
			switch {
			case tt.wantCode == "" && err != nil:
				t.Fatalf("unexpected %v", err)
			case tt.wantCode != "" && (!errors.As(err, &fe) || fe.Code != tt.wantCode):
				t.Fatalf("got %v, want code %s", err, tt.wantCode)
			case got != tt.wantType:
				t.Fatalf("type %q, want %q", got, tt.wantType)
			}
		})
	}
}

func TestPeekKeepsEveryByte(t *testing.T) {
	src := strings.Repeat("abcdefgh", 200)
	head, all, err := objectstore.Peek(strings.NewReader(src))
	if err != nil || len(head) != objectstore.SniffLen {
		t.Fatalf("head %d, %v", len(head), err)
	}
	b, _ := io.ReadAll(all)
	if string(b) != src {
		t.Fatal("bytes lost")
	}
	head, _, err = objectstore.Peek(strings.NewReader("tiny"))
	if err != nil || string(head) != "tiny" {
		t.Fatalf("short: %q %v", head, err)
	}
}
