package web

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/domain/form"
)

// gunzip decompresses one gzip member, checking its CRC-32 and size (compress/gzip does).
func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	if rest, _ := io.ReadAll(zr); len(rest) != 0 {
		t.Fatal("data after the gzip member")
	}
	return string(out)
}

// The compressed page decompresses to the uncompressed page byte for byte, whatever the
// per-view values (escaped characters, invalid UTF-8, empty, longer than a stored block).
func TestCachedPageGzipEqualsPlain(t *testing.T) {
	h, err := New(Deps{}, Options{TokenKey: []byte("k"), PoWKey: []byte("p")})
	if err != nil {
		t.Fatal(err)
	}
	noPoW := form.DefaultSettings()
	noPoW.Spam.ProofOfWork, noPoW.Spam.Honeypot = false, false
	rnd := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", "\"", "'", "&", "<", ">", "+", "\x00", "é", "\uFFFD", "\xff", " ", "\n", "%", "=", "?"}
	random := func(n int) string {
		var sb strings.Builder
		for range rnd.IntN(n + 1) {
			sb.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		return sb.String()
	}
	for i, s := range []form.Settings{form.DefaultSettings(), noPoW, form.DefaultSettings()} {
		f := cacheTestForm(`Contact "us" <now> & + 'then'`, s)
		if i == 2 {
			f = cacheTestPagedForm(s)
		}
		p, err := h.buildPage(formData(f, h.opts.Captchas, nil, nil, "", 0))
		if err != nil {
			t.Fatal(err)
		}
		views := []struct {
			token, challenge string
			utm              []utmValue
		}{
			{"tok.abc_DEF-123", `{"algorithm":"SHA-256","challenge":"abc"}`, nil},
			{"", "", nil},
			{`we"ird<&>+'` + "\x00é\uFFFD\xff", `{"a":"<script>\u2028"}`, []utmValue{{"_utm_source", `news"letter <&> + 'x'`}, {"_utm_term", "é"}}},
			{strings.Repeat(`"&`, 40000), strings.Repeat("<", 70000), []utmValue{{"_utm_content", strings.Repeat("x", 140000)}}},
		}
		for range 200 {
			views = append(views, struct {
				token, challenge string
				utm              []utmValue
			}{random(60), random(200), []utmValue{{"_utm_source", random(30)}, {"_utm_campaign", random(300)}}})
		}
		var plain, gz, scratch bytes.Buffer
		for _, v := range views {
			plain.Reset()
			gz.Reset()
			p.write(&plain, v.token, v.challenge, v.utm)
			p.writeGzip(&gz, &scratch, v.token, v.challenge, v.utm)
			if got := gunzip(t, gz.Bytes()); got != plain.String() {
				t.Fatalf("gzip page differs from the plain page:\ngzip:  %q\nplain: %q", got, plain.String())
			}
		}
	}
}

func TestCRCCombine(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a, b := make([]byte, rnd.IntN(5000)), make([]byte, rnd.IntN(70000))
		for i := range a {
			a[i] = byte(rnd.Uint32())
		}
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte(nil), a...), b...))
		if got := crcCombine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), crcShift(uint64(len(b)))); got != want {
			t.Fatalf("combined CRC %08x, want %08x (lengths %d, %d)", got, want, len(a), len(b))
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, c := range []struct {
		method string
		ae     []string
		want   bool
	}{
		{"GET", nil, false},
		{"GET", []string{"gzip"}, true},
		{"GET", []string{"gzip, deflate, br, zstd"}, true},
		{"GET", []string{"br", "GZIP;q=0.5"}, true},
		{"GET", []string{"deflate, gzip;q=0"}, false},
		{"GET", []string{"gzip; q=0.000"}, false},
		{"GET", []string{"identity"}, false},
		{"GET", []string{"x-gzip"}, false},
		{"GET", []string{"zstd"}, false},
		{"HEAD", []string{"gzip"}, false},
	} {
		r, _ := http.NewRequest(c.method, "/f/frm_1", nil)
		for _, v := range c.ae {
			r.Header.Add("Accept-Encoding", v)
		}
		if got := acceptsGzip(r); got != c.want {
			t.Errorf("%s %q: acceptsGzip %v, want %v", c.method, c.ae, got, c.want)
		}
	}
}

// The policy of a form without a captcha, a redirect or framing sites is the one built for it.
func TestDefaultCSP(t *testing.T) {
	h, err := New(Deps{}, Options{TokenKey: []byte("k"), PoWKey: []byte("p")})
	if err != nil {
		t.Fatal(err)
	}
	if want := buildCSP([]string{"'self'"}, []string{}, []string{"'self'"}, []string{}); defaultCSP != want {
		t.Fatalf("default CSP %q, want %q", defaultCSP, want)
	}
	s := form.DefaultSettings()
	for _, st := range []*form.Settings{nil, &s} {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		h.securityHeaders(c, st)
		if rec.Header().Get("Content-Security-Policy") != defaultCSP || rec.Header().Get("X-Frame-Options") != "DENY" ||
			rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("headers %v", rec.Header())
		}
	}
}
