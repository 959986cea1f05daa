package bootstrap

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
)

// testConfig is the serve command's configuration with its defaults, a fresh data dir, a
// random master key and the given extra flags.
func testConfig(t *testing.T, args ...string) Config {
	t.Helper()
	var out bytes.Buffer
	c, root := newCLI(&out, &out)
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--log-level", "error",
		"--master-key", crypto.GenerateMasterKey().Base64()}
	if err := serve.ParseFlags(append(base, args...)); err != nil {
		t.Fatal(err)
	}
	if len(c.errs) > 0 {
		t.Fatal(c.errs)
	}
	return c.cfg
}

// startPublic serves handler like `formward serve` does (guard, timeouts, optional TLS) on a
// loopback port and returns its address.
func startPublic(t *testing.T, cfg Config, handler http.Handler) string {
	t.Helper()
	srv := newPublicServer(handler, zap.NewNop())
	ln, err := listenPublic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// selfSignedFiles writes a loopback certificate and key and returns their paths.
func selfSignedFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// A request with both Content-Length and Transfer-Encoding is refused with 400 and the
// connection closed; well-framed requests before it on the same connection (fixed length,
// chunked) are served normally. Plain and TLS.
func TestSmugglingShapeIsRefusedAndTheConnectionClosed(t *testing.T) {
	certFile, keyFile := selfSignedFiles(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"plain", nil},
		{"tls", []string{"--tls-cert-file", certFile, "--tls-key-file", keyFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var handled atomic.Int32
			var lastBody atomic.Value
			addr := startPublic(t, testConfig(t, tc.args...), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				handled.Add(1)
				b, _ := io.ReadAll(r.Body)
				lastBody.Store(string(b))
				if r.Header.Get("X-Want-TLS") == "1" && r.TLS == nil {
					w.WriteHeader(500)
					return
				}
				_, _ = w.Write([]byte("ok"))
			}))
			var conn net.Conn
			var err error
			if tc.args == nil {
				conn, err = net.Dial("tcp", addr)
			} else {
				conn, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(conn)
			send := func(raw string) *http.Response {
				t.Helper()
				if _, err := io.WriteString(conn, raw); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp
			}
			wantTLS := "0"
			if tc.args != nil {
				wantTLS = "1"
			}
			if r := send("POST /a HTTP/1.1\r\nHost: x\r\nX-Want-TLS: " + wantTLS + "\r\nContent-Length: 5\r\n\r\nhello"); r.StatusCode != 200 || r.Close {
				t.Fatalf("fixed-length request: %d close=%v", r.StatusCode, r.Close)
			}
			if r := send("POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n"); r.StatusCode != 200 || r.Close {
				t.Fatalf("chunked request: %d close=%v", r.StatusCode, r.Close)
			}
			if got := lastBody.Load(); got != "abcde" {
				t.Fatalf("chunked body %q", got)
			}
			// The smuggling shape: the body holds a second request a proxy framing by
			// Content-Length would not see.
			r := send("POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\ntransfer-encoding: chunked\r\n\r\n" +
				"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
			if r.StatusCode != 400 || !r.Close {
				t.Fatalf("both headers: %d close=%v, want 400 and Connection: close", r.StatusCode, r.Close)
			}
			if n := handled.Load(); n != 2 {
				t.Fatalf("handler ran %d times, want 2 (the refused request and the smuggled one never reach it)", n)
			}
			if _, err := br.ReadByte(); err != io.EOF && !isClosedErr(err) {
				t.Fatalf("connection still open after the refusal: %v", err)
			}
		})
	}
}

func isClosedErr(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "closed"))
}

// /metrics names every workspace's forms: the public listener answers 404, the metrics
// listener (default 127.0.0.1:9464) serves it.
func TestMetricsOnlyOnTheMetricsAddress(t *testing.T) {
	cfg := testConfig(t)
	if cfg.MetricsAddr != "127.0.0.1:9464" {
		t.Fatalf("default metrics address %q", cfg.MetricsAddr)
	}
	rt, cleanup, err := newRuntime(context.Background(), cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	handler, registry, err := newServeHandler(cfg, rt)
	if err != nil {
		t.Fatal(err)
	}
	addr := startPublic(t, cfg, handler)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("public /metrics: %d, want 404", resp.StatusCode)
	}
	rec := httptest.NewRecorder()
	metricsHandler(registry, nil).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "go_goroutines") {
		t.Fatalf("metrics listener: %d %.200s", rec.Code, rec.Body.String())
	}
}

// Direct TLS offers HTTP/2 through ALPN: an HTTP/2 client is served over HTTP/2 (which has no
// Content-Length/Transfer-Encoding ambiguity), an HTTP/1.1 client still goes through the guard,
// and a client that never finishes its handshake does not hold up the others.
func TestDirectTLSServesHTTP2AndHTTP1(t *testing.T) {
	certFile, keyFile := selfSignedFiles(t)
	addr := startPublic(t, testConfig(t, "--tls-cert-file", certFile, "--tls-key-file", keyFile),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS == nil {
				w.WriteHeader(500)
				return
			}
			_, _ = w.Write([]byte(r.Proto))
		}))

	// A silent client: connected, no handshake.
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	get := func(h2 bool) (int, string) {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1 only
		}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		resp, err := client.Get("https://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.ProtoMajor, string(b)
	}
	if major, body := get(true); major != 2 || body != "HTTP/2.0" {
		t.Fatalf("HTTP/2 client: protocol %d, body %q", major, body)
	}
	if major, body := get(false); major != 1 || body != "HTTP/1.1" {
		t.Fatalf("HTTP/1.1 client: protocol %d, body %q", major, body)
	}
}
