// Package delivery sends webhook deliveries and workflow HTTP actions: signed HTTPS POSTs to
// public addresses only, one circuit breaker per endpoint.
//
// The address rule is enforced where it cannot be dodged: in the dialer's Control function,
// against the IP actually being connected to after DNS resolution, so a name that resolved to a
// public address at registration and to 127.0.0.1 later (DNS rebinding) is still refused.
// Redirects are not followed and environment proxies are not used, since either would reach a
// host that was never checked.
package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/formward/formward/ports"
)

// Defaults for Options left zero.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
	DefaultUserAgent       = "Formward-Webhooks/1"
)

// maxResponseBody is how much of a response is read (and discarded) before the connection is
// returned to the pool; receivers' answers are not used.
const maxResponseBody = 64 << 10

var (
	// ErrTimeout means the endpoint did not answer within Options.Timeout.
	ErrTimeout = errors.New("timed out")
	// ErrBreakerOpen is the Err of a Result whose endpoint's circuit breaker refused the attempt.
	ErrBreakerOpen = errors.New("circuit breaker open")
	// ErrInvalidRequest is matched by errors about a Request that could never be sent as given.
	ErrInvalidRequest = errors.New("invalid delivery request")
)

// StatusError is an answer outside 2xx, redirects included.
type StatusError struct {
	StatusCode int
}

func (e *StatusError) Error() string {
	if e.StatusCode >= 300 && e.StatusCode < 400 {
		return fmt.Sprintf("endpoint answered %d (redirects are not followed)", e.StatusCode)
	}
	return fmt.Sprintf("endpoint answered %d", e.StatusCode)
}

// Options configures a Client. Zero values take the defaults above.
type Options struct {
	// Timeout bounds one attempt: connect, TLS, request and response headers.
	Timeout time.Duration
	// AllowPrivate lifts the public-address rule (self-hosted and test setups). HTTPS stays.
	AllowPrivate bool
	// ExtraCAFile is a PEM file of CA certificates trusted in addition to the system pool.
	ExtraCAFile string
	// BreakerFailures is how many consecutive failed attempts open an endpoint's breaker.
	BreakerFailures uint32
	// BreakerCooldown is how long a breaker stays open before it lets one probe through.
	BreakerCooldown time.Duration
	// UserAgent is sent on every request.
	UserAgent string
	// Resolver resolves destination hosts; nil means net.DefaultResolver.
	Resolver Resolver
	// Clock stamps webhook-timestamp and RetryAt; nil means the system clock.
	Clock ports.Clock
}

// Request is one attempt to deliver a body to an endpoint.
type Request struct {
	// EndpointID keys the circuit breaker: a webhook ID or a workflow action ID, never a host,
	// so one failing receiver does not block others on the same host.
	EndpointID string
	URL        string
	Body       []byte
	Event      string
	// DeliveryID is stable across retries; it is X-Service-Delivery and webhook-id.
	DeliveryID string
	Attempt    int
	// Secret, when set, signs the request (X-Service-Signature and Standard Webhooks headers).
	Secret string
	// Headers are extra headers of a send_webhook action. They may not set a header Formward
	// sets itself, nor a hop-by-hop or framing header; see CheckHeaders.
	Headers map[string]string
	// FormVersion, when above 0, is sent as X-Service-Form-Version: the version of the form
	// the submission of the event answered.
	FormVersion int
	// ReplayOf, when set, is the event a replay sends again: X-Service-Replay: true and
	// X-Service-Event-Id go with it.
	ReplayOf string
}

// maxAnswer is how much of an answer's body a Result keeps.
const maxAnswer = 1 << 10

// Result is the outcome of one attempt.
type Result struct {
	// StatusCode is the endpoint's answer, 0 when there was none.
	StatusCode int
	// RetryAfter is the answer's Retry-After on a 429 or 503 (seconds or an HTTP date), 0 when
	// there was none.
	RetryAfter time.Duration
	// Answer is the start of the answer's body (at most 1 KiB).
	Answer   []byte
	Duration time.Duration
	// Err is nil exactly when the endpoint answered 2xx within the timeout.
	Err error
	// BreakerOpen means no request was made because the endpoint's breaker is open; the attempt
	// should be rescheduled for RetryAt and not counted.
	BreakerOpen bool
	RetryAt     time.Time
}

// Client delivers requests. It is safe for concurrent use.
type Client struct {
	http         *http.Client
	transport    *http.Transport
	dialer       *net.Dialer
	resolver     Resolver
	allowPrivate bool
	timeout      time.Duration
	failures     uint32
	cooldown     time.Duration
	userAgent    string
	clock        ports.Clock

	mu       sync.Mutex
	breakers map[string]*endpointBreaker
}

// NewClient builds a Client. It fails only when ExtraCAFile cannot be used.
func NewClient(o Options) (*Client, error) {
	c := &Client{
		resolver:     o.Resolver,
		allowPrivate: o.AllowPrivate,
		timeout:      o.Timeout,
		failures:     o.BreakerFailures,
		cooldown:     o.BreakerCooldown,
		userAgent:    o.UserAgent,
		clock:        o.Clock,
		breakers:     map[string]*endpointBreaker{},
	}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.failures == 0 {
		c.failures = DefaultBreakerFailures
	}
	if c.cooldown <= 0 {
		c.cooldown = DefaultBreakerCooldown
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.clock == nil {
		c.clock = systemClock{}
	}

	roots, err := rootCAs(o.ExtraCAFile)
	if err != nil {
		return nil, err
	}
	c.dialer = &net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second, Control: c.control}
	c.transport = &http.Transport{
		Proxy:                  nil, // a proxy would connect on our behalf to an unchecked address
		DialContext:            c.dialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		TLSHandshakeTimeout:    c.timeout,
		ResponseHeaderTimeout:  c.timeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    16, // as many as a webhook's adaptive concurrency may reach by default
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: maxResponseBody,
		DisableCompression:     true,
	}
	c.http = &http.Client{
		Transport: tracedTransport{httpsOnly{c.transport}},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return c, nil
}

// Close releases idle connections.
func (c *Client) Close() {
	c.transport.CloseIdleConnections()
}

func rootCAs(extraCAFile string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if extraCAFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(extraCAFile)
	if err != nil {
		return nil, fmt.Errorf("delivery: read extra CA file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("delivery: no PEM certificates in %s", extraCAFile)
	}
	return pool, nil
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// httpsOnly refuses any request that is not https, whoever built it.
type httpsOnly struct{ next http.RoundTripper }

func (t httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, ErrNotHTTPS
	}
	return t.next.RoundTrip(req)
}

// dialContext resolves the host itself (so tests can substitute the resolver) and dials the
// addresses in order. Every dial goes through c.control, which judges the final address.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := lookup(ctx, c.resolver, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var first error
	for _, a := range addrs {
		conn, err := c.dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control runs after DNS resolution, just before connect(2): address is the literal IP and
// port about to be connected to.
func (c *Client) control(_, address string, _ syscall.RawConn) error {
	if c.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unparsable destination %q: %w", address, ErrForbiddenAddress)
	}
	if kind := refusal(ap.Addr()); kind != "" {
		return &AddressError{Addr: ap.Addr(), Kind: kind}
	}
	return nil
}

// Deliver makes one attempt, unless the endpoint's breaker is open. A request that could never
// be sent (no endpoint ID, not https, bad extra headers) fails with ErrInvalidRequest without
// touching the breaker. A caller's canceled context is not counted against the endpoint.
// Errors never contain the secret.
func (c *Client) Deliver(ctx context.Context, r Request) Result {
	if err := validate(r); err != nil {
		return Result{Err: err}
	}
	b := c.breaker(r.EndpointID)
	res, err := b.cb.Execute(func() (Result, error) {
		res := c.send(ctx, r)
		return res, res.Err
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return Result{
			Err:         ErrBreakerOpen,
			BreakerOpen: true,
			RetryAt:     c.clock.Now().Add(b.remaining(c.cooldown, c.timeout)),
		}
	}
	return res
}

func (c *Client) send(ctx context.Context, r Request) Result {
	attemptCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(attemptCtx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("%w: %w", ErrInvalidRequest, err)}
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", c.userAgent)
	h.Set("X-Service-Event", r.Event)
	h.Set("X-Service-Delivery", r.DeliveryID)
	h.Set("X-Service-Attempt", strconv.Itoa(r.Attempt))
	if r.FormVersion > 0 {
		h.Set("X-Service-Form-Version", strconv.Itoa(r.FormVersion))
	}
	if r.ReplayOf != "" {
		h.Set("X-Service-Replay", "true")
		h.Set("X-Service-Event-Id", r.ReplayOf)
	}
	if r.Secret != "" {
		ts := c.clock.Now().Unix()
		h.Set("X-Service-Signature", Sign(r.Secret, r.Body))
		h.Set("Webhook-Id", r.DeliveryID)
		h.Set("Webhook-Timestamp", strconv.FormatInt(ts, 10))
		h.Set("Webhook-Signature", SignStandard(r.Secret, r.DeliveryID, ts, r.Body))
	}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err == nil && attemptCtx.Err() != nil {
		// The transport hands back a response that raced the deadline (the endpoint answered
		// only once the attempt gave up and hung up): that is no answer within the timeout.
		_ = resp.Body.Close()
		err = attemptCtx.Err()
	}
	if err != nil {
		return Result{Duration: time.Since(start), Err: c.describe(ctx, attemptCtx, err)}
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody-maxAnswer))
	_ = resp.Body.Close()
	res := Result{StatusCode: resp.StatusCode, Duration: time.Since(start), Answer: answer}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		res.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), c.clock.Now())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		res.Err = &StatusError{StatusCode: resp.StatusCode}
	}
	return res
}

// canceledError is an attempt abandoned because the caller's context ended (shutdown, say).
// It says nothing about the endpoint, so the breaker ignores it.
type canceledError struct{ err error }

func (e *canceledError) Error() string { return "delivery canceled: " + e.err.Error() }
func (e *canceledError) Unwrap() error { return e.err }

// describe turns a client error into a short message: no request URL (it is in the delivery
// already), timeouts named as such.
func (c *Client) describe(parent, attempt context.Context, err error) error {
	if parent.Err() != nil {
		return &canceledError{err: parent.Err()}
	}
	if errors.Is(attempt.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w after %s", ErrTimeout, c.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// validate rejects a request that could never be sent, before the breaker sees it.
func validate(r Request) error {
	if r.EndpointID == "" {
		return fmt.Errorf("%w: endpoint id is required", ErrInvalidRequest)
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return fmt.Errorf("%w: url is not a valid URL", ErrInvalidRequest)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, ErrNotHTTPS)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: url must have a host", ErrInvalidRequest)
	}
	if u.User != nil {
		return fmt.Errorf("%w: url must not contain a user name or password", ErrInvalidRequest)
	}
	for name, v := range map[string]string{"event": r.Event, "delivery id": r.DeliveryID} {
		if !validHeaderValue(v) {
			return fmt.Errorf("%w: %s contains a control character", ErrInvalidRequest, name)
		}
	}
	if err := CheckHeaders(r.Headers); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return nil
}

// reservedHeaders are set by Formward or by the HTTP stack; extra headers may not set them.
var reservedHeaders = map[string]bool{
	"content-type": true, "user-agent": true,
	"webhook-id": true, "webhook-timestamp": true, "webhook-signature": true,
	"host": true, "content-length": true, "transfer-encoding": true, "connection": true,
	"keep-alive": true, "te": true, "trailer": true, "upgrade": true,
	"proxy-authorization": true, "proxy-connection": true,
}

// CheckHeaders validates the extra headers of a send_webhook action: valid names, no control
// characters (CR/LF would inject headers) in values, and none of the headers Formward sets
// (Content-Type, User-Agent, X-Service-*, webhook-*) or HTTP framing headers (Host,
// Content-Length, Transfer-Encoding, Connection, ...). Deliver applies it too.
func CheckHeaders(headers map[string]string) error {
	for name, value := range headers {
		if !isToken(name) {
			return fmt.Errorf("header name %q is not valid", name)
		}
		lower := strings.ToLower(name)
		if reservedHeaders[lower] || strings.HasPrefix(lower, "x-service-") {
			return fmt.Errorf("header %s is set by Formward and cannot be overridden", name)
		}
		if !validHeaderValue(value) {
			return fmt.Errorf("header %s has a control character in its value", name)
		}
	}
	return nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue refuses CR, LF, NUL and other control characters except tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if ch := v[i]; (ch < 0x20 && ch != '\t') || ch == 0x7f {
			return false
		}
	}
	return true
}

// endpointBreaker is one endpoint's breaker and when it last opened (gobreaker does not say).
type endpointBreaker struct {
	cb *gobreaker.CircuitBreaker[Result]

	mu       sync.Mutex
	openedAt time.Time
}

// breaker returns the endpoint's breaker, creating it on first use. Breakers live as long as
// the Client; there is one per webhook or action that ever delivered, a bounded number.
func (c *Client) breaker(endpointID string) *endpointBreaker {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.breakers[endpointID]; ok {
		return b
	}
	b := &endpointBreaker{}
	failures := c.failures
	b.cb = gobreaker.NewCircuitBreaker[Result](gobreaker.Settings{
		Name:        endpointID,
		MaxRequests: 1,
		Timeout:     c.cooldown,
		ReadyToTrip: func(counts gobreaker.Counts) bool {
			return counts.ConsecutiveFailures >= failures
		},
		// Called with gobreaker's own lock held: touch only b.mu here.
		OnStateChange: func(_ string, _, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.mu.Lock()
				b.openedAt = time.Now()
				b.mu.Unlock()
			}
		},
		IsExcluded: func(err error) bool {
			var ce *canceledError
			return errors.As(err, &ce)
		},
	})
	c.breakers[endpointID] = b
	return b
}

// remaining is how long until the breaker lets a request through again. When it is already
// half-open with its one probe in flight, the probe ends within one timeout.
func (b *endpointBreaker) remaining(cooldown, timeout time.Duration) time.Duration {
	b.mu.Lock()
	openedAt := b.openedAt
	b.mu.Unlock()
	if openedAt.IsZero() {
		return cooldown
	}
	if d := time.Until(openedAt.Add(cooldown)); d > 0 {
		return d
	}
	return timeout
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date; 0 when absent, odd or
// past.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(n)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
