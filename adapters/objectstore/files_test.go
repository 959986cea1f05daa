package objectstore_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/objectstore"
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

// A workspace that types another workspace's file path into its own submission gets no link.
func TestSubmissionLinkOnlyForTheSubmissionsOwnUploads(t *testing.T) {
	s := objectstore.Signer{Key: []byte("k"), BaseURL: "https://forms.example.com"}
	exp := time.Now().Add(time.Hour)
	own := "workspaces/wsp_b/forms/frm_b/submissions/sub_b/obj_1/cv.pdf"
	if u, ok := s.SubmissionLink("wsp_b", "frm_b", "sub_b", own, exp); !ok || !strings.Contains(u, "sig=") {
		t.Fatalf("own upload: %q %v", u, ok)
	}
	legacy := "workspaces/wsp_b/forms/frm_b/0123456789abcdef0123456789abcdef/cv.pdf"
	if _, ok := s.SubmissionLink("wsp_b", "frm_b", "sub_b", s.Reference(legacy), exp); !ok {
		t.Fatal("an upload stored before per-submission prefixes lost its link")
	}
	for _, v := range []string{
		"workspaces/wsp_a/forms/frm_a/submissions/sub_a/obj_1/secret.pdf",                  // another workspace's key
		s.Reference("workspaces/wsp_a/forms/frm_a/submissions/sub_a/obj_1/secret.pdf"),     // ... as a URL
		s.Reference("workspaces/wsp_a/forms/frm_a/0123456789abcdef0123456789abcdef/x.pdf"), // ... an older upload
		"workspaces/wsp_b/forms/frm_b/submissions/sub_other/obj_1/x.pdf",                   // another submission of the same form
		s.Reference(own),                                 // own key, but typed as a URL
		"https://evil.example/files/" + own,              // another origin
		"workspaces/wsp_b/forms/frm_b/submissions/sub_b", // the prefix itself
		"workspaces/wsp_b/forms/frm_b/submissions/sub_b/../sub_a/x.pdf",
	} {
		if u, ok := s.SubmissionLink("wsp_b", "frm_b", "sub_b", v, exp); ok {
			t.Errorf("signed %q as %q", v, u)
		}
	}
}
