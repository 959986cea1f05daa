package delivery

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/delivery/deliverytest"
	"github.com/formward/formward/test/testkit"
)

// tlsServer starts an HTTPS test server on 127.0.0.1 and writes its certificate to a PEM file
// for Options.ExtraCAFile.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, caFile
}

func newClient(t *testing.T, o Options) *Client {
	t.Helper()
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func request(url string) Request {
	return Request{
		EndpointID: "whk_test",
		URL:        url,
		Body:       []byte(`{"event":"submission.created"}`),
		Event:      "submission.created",
		DeliveryID: "dlv_123",
		Attempt:    1,
	}
}

// counter is a handler that counts hits and answers with a settable status.
type counter struct {
	hits   atomic.Int64
	status atomic.Int64
}

func (c *counter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c.hits.Add(1)
	w.WriteHeader(int(c.status.Load()))
}

func newCounter(status int) *counter {
	c := &counter{}
	c.status.Store(int64(status))
	return c
}

func TestDeliverSuccess(t *testing.T) {
	h := newCounter(http.StatusAccepted)
	srv, ca := tlsServer(t, h)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca})

	res := c.Deliver(context.Background(), request(srv.URL+"/hook"))
	if res.Err != nil || res.StatusCode != http.StatusAccepted || res.BreakerOpen {
		t.Fatalf("result = %+v, want 202 and no error", res)
	}
	if res.Duration <= 0 {
		t.Fatalf("duration = %v", res.Duration)
	}
	if h.hits.Load() != 1 {
		t.Fatalf("hits = %d", h.hits.Load())
	}
}

func TestDeliverResolvesThroughResolver(t *testing.T) {
	// The httptest certificate is valid for example.com; the fake resolver sends it to the
	// test server, proving dials use Options.Resolver and TLS verifies the URL's host name.
	h := newCounter(http.StatusOK)
	srv, ca := tlsServer(t, h)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := newClient(t, Options{
		AllowPrivate: true,
		ExtraCAFile:  ca,
		Resolver:     deliverytest.Resolver{"example.com": {"127.0.0.1"}},
	})
	res := c.Deliver(context.Background(), request("https://example.com:"+port+"/hook"))
	if res.Err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("result = %+v", res)
	}
}

func TestDeliverRefusesUntrustedCertificate(t *testing.T) {
	h := newCounter(http.StatusOK)
	srv, _ := tlsServer(t, h)
	c := newClient(t, Options{AllowPrivate: true}) // no ExtraCAFile
	res := c.Deliver(context.Background(), request(srv.URL))
	if res.Err == nil || res.StatusCode != 0 {
		t.Fatalf("result = %+v, want a TLS failure", res)
	}
	if h.hits.Load() != 0 {
		t.Fatal("handler reached without a trusted certificate")
	}
}

func TestDeliverRefusesPrivateAddressAtDialTime(t *testing.T) {
	h := newCounter(http.StatusOK)
	srv, ca := tlsServer(t, h)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	cases := map[string]struct {
		url      string
		resolver Resolver
	}{
		// A literal IP never goes through DNS: only the connect-time check can catch it.
		"literal loopback": {url: srv.URL + "/hook"},
		// DNS rebinding: the name resolves to loopback when the delivery is made.
		"name resolving to loopback": {
			url:      "https://evil.example:" + port + "/hook",
			resolver: deliverytest.Resolver{"evil.example": {"127.0.0.1"}},
		},
		"name resolving to mapped loopback": {
			url:      "https://evil.example:" + port + "/hook",
			resolver: deliverytest.Resolver{"evil.example": {"::ffff:127.0.0.1"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, Options{ExtraCAFile: ca, Resolver: tc.resolver})
			res := c.Deliver(context.Background(), request(tc.url))
			if !errors.Is(res.Err, ErrForbiddenAddress) {
				t.Fatalf("err = %v, want ErrForbiddenAddress", res.Err)
			}
			var ae *AddressError
			if !errors.As(res.Err, &ae) || ae.Kind != "loopback" || ae.Addr.String() != "127.0.0.1" {
				t.Fatalf("err = %#v, want a loopback AddressError for 127.0.0.1", res.Err)
			}
			// The refusal comes from the dialer (Control), not from a pre-check of the URL.
			var oe *net.OpError
			if !errors.As(res.Err, &oe) || oe.Op != "dial" {
				t.Fatalf("err = %v, want a dial error", res.Err)
			}
			if res.StatusCode != 0 || res.BreakerOpen {
				t.Fatalf("result = %+v", res)
			}
			if !strings.Contains(res.Err.Error(), "destination is a loopback address (127.0.0.1)") {
				t.Fatalf("message = %q", res.Err)
			}
		})
	}
	if h.hits.Load() != 0 {
		t.Fatalf("server was hit %d times", h.hits.Load())
	}
}

func TestDeliverRefusesHTTP(t *testing.T) {
	h := newCounter(http.StatusOK)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := newClient(t, Options{AllowPrivate: true})

	res := c.Deliver(context.Background(), request(srv.URL+"/hook"))
	if !errors.Is(res.Err, ErrNotHTTPS) || res.StatusCode != 0 {
		t.Fatalf("result = %+v, want ErrNotHTTPS", res)
	}
	if h.hits.Load() != 0 {
		t.Fatal("plain http server was hit")
	}
	// The transport itself refuses too, whoever builds the request.
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if _, err := c.http.Do(req); !errors.Is(err, ErrNotHTTPS) {
		t.Fatalf("transport err = %v, want ErrNotHTTPS", err)
	}
	if h.hits.Load() != 0 {
		t.Fatal("plain http server was hit")
	}
}

func TestDeliverDoesNotFollowRedirects(t *testing.T) {
	var targetHits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	mux.HandleFunc("/target", func(w http.ResponseWriter, _ *http.Request) {
		targetHits.Add(1)
	})
	srv, ca := tlsServer(t, mux)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca})

	res := c.Deliver(context.Background(), request(srv.URL+"/start"))
	if res.StatusCode != http.StatusFound {
		t.Fatalf("status = %d, want 302", res.StatusCode)
	}
	var se *StatusError
	if !errors.As(res.Err, &se) || se.StatusCode != http.StatusFound {
		t.Fatalf("err = %v, want a StatusError 302", res.Err)
	}
	if targetHits.Load() != 0 {
		t.Fatal("redirect target was hit")
	}
}

type fixedClock struct{ t time.Time }

func (f fixedClock) Now() time.Time { return f.t }

// received is what a test receiver saw.
type received struct {
	header http.Header
	body   []byte
}

func recorder(t *testing.T) (http.Handler, func() received) {
	var mu sync.Mutex
	var last received
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		last = received{header: r.Header.Clone(), body: body}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	return h, func() received {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

func TestDeliverSignatures(t *testing.T) {
	h, last := recorder(t)
	srv, ca := tlsServer(t, h)
	now := time.Unix(1_750_000_000, 0)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca, Clock: fixedClock{now}})

	rawKey := []byte("0123456789abcdef0123456789abcdef")
	secrets := map[string][]byte{ // secret -> Standard Webhooks key
		"s3cret-plain": []byte("s3cret-plain"),
		"whsec_" + base64.StdEncoding.EncodeToString(rawKey): rawKey,
	}
	for secret, key := range secrets {
		t.Run(secret[:6], func(t *testing.T) {
			r := request(srv.URL + "/hook")
			r.Secret = secret
			r.Attempt = 3
			r.Headers = map[string]string{"X-Custom": "yes", "Authorization": "Bearer token"}
			res := c.Deliver(context.Background(), r)
			if res.Err != nil || res.StatusCode != http.StatusNoContent {
				t.Fatalf("result = %+v", res)
			}
			got := last()
			hd := got.header
			if string(got.body) != string(r.Body) {
				t.Fatalf("body = %q", got.body)
			}
			want := map[string]string{
				"Content-Type":       "application/json",
				"User-Agent":         "Formward-Webhooks/1",
				"X-Service-Event":    "submission.created",
				"X-Service-Delivery": "dlv_123",
				"X-Service-Attempt":  "3",
				"webhook-id":         "dlv_123",
				"webhook-timestamp":  strconv.FormatInt(now.Unix(), 10),
				"X-Custom":           "yes",
				"Authorization":      "Bearer token",
			}
			for k, v := range want {
				if hd.Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, hd.Get(k), v)
				}
			}

			// What a receiver does: recompute and compare in constant time.
			m := hmac.New(sha256.New, []byte(secret))
			m.Write(got.body)
			expected := "sha256=" + hex.EncodeToString(m.Sum(nil))
			if !hmac.Equal([]byte(hd.Get("X-Service-Signature")), []byte(expected)) {
				t.Errorf("X-Service-Signature = %q, want %q", hd.Get("X-Service-Signature"), expected)
			}

			// Standard Webhooks: v1,base64(HMAC(key, id.timestamp.body)).
			sm := hmac.New(sha256.New, key)
			sm.Write([]byte(hd.Get("webhook-id") + "." + hd.Get("webhook-timestamp") + "."))
			sm.Write(got.body)
			expectedStd := "v1," + base64.StdEncoding.EncodeToString(sm.Sum(nil))
			if !hmac.Equal([]byte(hd.Get("webhook-signature")), []byte(expectedStd)) {
				t.Errorf("webhook-signature = %q, want %q", hd.Get("webhook-signature"), expectedStd)
			}
		})
	}

	t.Run("no secret", func(t *testing.T) {
		res := c.Deliver(context.Background(), request(srv.URL+"/hook"))
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		hd := last().header
		for _, k := range []string{"X-Service-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"} {
			if v, ok := hd[http.CanonicalHeaderKey(k)]; ok {
				t.Errorf("header %s = %q, want absent", k, v)
			}
		}
		if hd.Get("X-Service-Delivery") != "dlv_123" {
			t.Errorf("X-Service-Delivery = %q", hd.Get("X-Service-Delivery"))
		}
	})
}

func TestSign(t *testing.T) {
	// Known answer: HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog").
	got := Sign("key", []byte("The quick brown fox jumps over the lazy dog"))
	want := "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
	if got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	// Standard Webhooks' own test vector (standard-webhooks/standard-webhooks libraries).
	std := SignStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		1614265330, []byte(`{"test": 2432232314}`))
	if std != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("SignStandard = %q", std)
	}
}

func TestDeliverRejectsBadHeaders(t *testing.T) {
	h := newCounter(http.StatusOK)
	srv, ca := tlsServer(t, h)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca})
	bad := []map[string]string{
		{"X-Evil": "a\r\nX-Injected: 1"},
		{"X-Evil": "a\nb"},
		{"Bad Name": "x"},
		{"X-Service-Signature": "sha256=forged"},
		{"x-service-event": "form.published"},
		{"webhook-signature": "v1,forged"},
		{"Content-Type": "text/plain"},
		{"Host": "internal.example"},
		{"Content-Length": "1"},
		{"User-Agent": "me"},
	}
	for _, hdrs := range bad {
		r := request(srv.URL)
		r.Headers = hdrs
		res := c.Deliver(context.Background(), r)
		if !errors.Is(res.Err, ErrInvalidRequest) {
			t.Errorf("headers %q: err = %v, want ErrInvalidRequest", hdrs, res.Err)
		}
		if CheckHeaders(hdrs) == nil {
			t.Errorf("CheckHeaders(%q) = nil", hdrs)
		}
	}
	if h.hits.Load() != 0 {
		t.Fatal("a request with bad headers was sent")
	}
	if err := CheckHeaders(map[string]string{"Authorization": "Bearer x", "X-Tab": "a\tb"}); err != nil {
		t.Fatal(err)
	}
}

func TestErrorsDoNotMentionSecret(t *testing.T) {
	const secret = "whsec_c2VjcmV0LWtleS1ieXRlcw=="
	h := newCounter(http.StatusInternalServerError)
	srv, ca := tlsServer(t, h)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca})
	for _, r := range []Request{request(srv.URL), request("http://127.0.0.1/"), request(srv.URL)} {
		r.Secret = secret
		if r.URL == srv.URL && h.hits.Load() > 0 {
			r.Headers = map[string]string{"X-Bad": "a\r\nb"}
		}
		res := c.Deliver(context.Background(), r)
		if res.Err == nil {
			t.Fatalf("%+v, want a failure", res)
		}
		if strings.Contains(res.Err.Error(), secret) || strings.Contains(res.Err.Error(), "c2VjcmV0") {
			t.Fatalf("error %q mentions the secret", res.Err)
		}
	}
}

func TestDeliverTimeout(t *testing.T) {
	srv, ca := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	}))
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca, Timeout: 200 * time.Millisecond})

	start := time.Now()
	res := c.Deliver(context.Background(), request(srv.URL))
	if !errors.Is(res.Err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", res.Err)
	}
	if res.StatusCode != 0 {
		t.Fatalf("status = %d, want 0", res.StatusCode)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
	// The attempt's deadline starts a moment before the measured duration does.
	if res.Duration < 150*time.Millisecond {
		t.Fatalf("duration = %v, want about the timeout", res.Duration)
	}
}

func TestDeliverCanceledDoesNotCountAgainstEndpoint(t *testing.T) {
	h := newCounter(http.StatusOK)
	srv, ca := tlsServer(t, h)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca, BreakerFailures: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := c.Deliver(ctx, request(srv.URL)); !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", res.Err)
	}
	if res := c.Deliver(context.Background(), request(srv.URL)); res.Err != nil || res.BreakerOpen {
		t.Fatalf("result after cancellation = %+v, want success", res)
	}
}

func TestBreakerPerEndpoint(t *testing.T) {
	h := newCounter(http.StatusInternalServerError)
	srv, ca := tlsServer(t, h)
	const cooldown = 200 * time.Millisecond
	c := newClient(t, Options{
		AllowPrivate: true, ExtraCAFile: ca, BreakerFailures: 3, BreakerCooldown: cooldown,
	})
	ctx := context.Background()
	a := request(srv.URL + "/hook")
	a.EndpointID = "whk_a"
	b := request(srv.URL + "/hook") // same host, same URL, another endpoint
	b.EndpointID = "whk_b"

	for i := range 3 {
		res := c.Deliver(ctx, a)
		if res.StatusCode != http.StatusInternalServerError || res.Err == nil || res.BreakerOpen {
			t.Fatalf("attempt %d: %+v, want a 500 failure", i+1, res)
		}
	}
	before := time.Now()
	res := c.Deliver(ctx, a)
	if !res.BreakerOpen || !errors.Is(res.Err, ErrBreakerOpen) || res.StatusCode != 0 {
		t.Fatalf("4th attempt = %+v, want BreakerOpen", res)
	}
	if res.RetryAt.Before(before) || res.RetryAt.After(before.Add(cooldown)) {
		t.Fatalf("RetryAt = %v, want within %v of %v", res.RetryAt, cooldown, before)
	}
	if h.hits.Load() != 3 {
		t.Fatalf("hits = %d, want 3 (the open breaker must not send)", h.hits.Load())
	}

	// The receiver recovers; the other endpoint on the same host was never blocked.
	h.status.Store(http.StatusOK)
	if res := c.Deliver(ctx, b); res.BreakerOpen || res.Err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("other endpoint = %+v, want delivered", res)
	}
	if res := c.Deliver(ctx, a); !res.BreakerOpen {
		t.Fatalf("whk_a before cooldown = %+v, want BreakerOpen", res)
	}
	if h.hits.Load() != 4 {
		t.Fatalf("hits = %d, want 4", h.hits.Load())
	}

	waitProbe(t, c)
	for i := range 3 { // the half-open probe succeeds and closes the breaker
		if res := c.Deliver(ctx, a); res.Err != nil || res.BreakerOpen {
			t.Fatalf("after cooldown, attempt %d = %+v, want delivered", i+1, res)
		}
	}
	if h.hits.Load() != 7 {
		t.Fatalf("hits = %d, want 7", h.hits.Load())
	}
}

func TestBreakerReopensWhenProbeFails(t *testing.T) {
	h := newCounter(http.StatusBadGateway)
	srv, ca := tlsServer(t, h)
	const cooldown = 150 * time.Millisecond
	c := newClient(t, Options{
		AllowPrivate: true, ExtraCAFile: ca, BreakerFailures: 2, BreakerCooldown: cooldown,
	})
	ctx := context.Background()
	r := request(srv.URL)
	c.Deliver(ctx, r)
	c.Deliver(ctx, r)
	res := c.Deliver(ctx, r)
	if !res.BreakerOpen {
		t.Fatalf("%+v, want BreakerOpen", res)
	}
	waitProbe(t, c)
	if res := c.Deliver(ctx, r); res.BreakerOpen || res.StatusCode != http.StatusBadGateway {
		t.Fatalf("probe = %+v, want a 502 failure", res)
	}
	before := time.Now()
	res = c.Deliver(ctx, r)
	if !res.BreakerOpen || res.RetryAt.Before(before.Add(cooldown/2)) {
		t.Fatalf("after failed probe = %+v, want BreakerOpen for a new cooldown", res)
	}
	if h.hits.Load() != 3 {
		t.Fatalf("hits = %d, want 3", h.hits.Load())
	}
}

// waitProbe waits until no breaker of c is open any more: its cooldown is over and it lets one
// probe through. gobreaker reads the system clock itself, so the test waits for the state it
// reports rather than moving a fake clock.
func waitProbe(t *testing.T, c *Client) {
	t.Helper()
	testkit.Eventually(t, 0, func() bool { _, _, open := c.BreakerCounts(); return open == 0 }, "the breaker's cooldown to end")
}

func TestNewClientBadCAFile(t *testing.T) {
	if _, err := NewClient(Options{ExtraCAFile: filepath.Join(t.TempDir(), "missing.pem")}); err == nil {
		t.Fatal("missing CA file accepted")
	}
	f := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(f, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient(Options{ExtraCAFile: f}); err == nil {
		t.Fatal("CA file without certificates accepted")
	}
}

func TestDeliverRequiresEndpointID(t *testing.T) {
	c := newClient(t, Options{})
	r := request("https://93.184.216.34/")
	r.EndpointID = ""
	if res := c.Deliver(context.Background(), r); !errors.Is(res.Err, ErrInvalidRequest) {
		t.Fatalf("err = %v, want ErrInvalidRequest", res.Err)
	}
}

// An answer's Retry-After (on 429 and 503) and the start of its body come back with the
// result, for workflow actions that honour the one and report the other.
func TestDeliverKeepsRetryAfterAndAnswer(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var status atomic.Int64
	var retry atomic.Value
	srv, ca := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if v, _ := retry.Load().(string); v != "" {
			w.Header().Set("Retry-After", v)
		}
		w.WriteHeader(int(status.Load()))
		_, _ = io.WriteString(w, "Summary or Text is required."+strings.Repeat("x", 4096))
	}))
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca, Clock: fixedClock{now}, BreakerFailures: 100})
	for _, tc := range []struct {
		status int
		header string
		want   time.Duration
	}{
		{http.StatusTooManyRequests, "7", 7 * time.Second},
		{http.StatusServiceUnavailable, now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{http.StatusTooManyRequests, "soon", 0},
		{http.StatusTooManyRequests, "", 0},
		{http.StatusInternalServerError, "7", 0}, // only 429 and 503 ask to wait
		{http.StatusBadRequest, "", 0},
	} {
		status.Store(int64(tc.status))
		retry.Store(tc.header)
		res := c.Deliver(context.Background(), request(srv.URL))
		if res.StatusCode != tc.status || res.RetryAfter != tc.want || res.Err == nil {
			t.Errorf("%d with Retry-After %q: %+v, want Retry-After %v", tc.status, tc.header, res, tc.want)
		}
		if len(res.Answer) != 1024 || !strings.HasPrefix(string(res.Answer), "Summary or Text is required.") {
			t.Errorf("answer %q", res.Answer)
		}
	}
}
