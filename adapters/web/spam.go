package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/ports"
)

// Spam reasons, the reason label of formward_spam_total.
const (
	ReasonHoneypot     = string(spam.ReasonHoneypot)
	ReasonTokenMissing = string(spam.ReasonTokenMissing)
	ReasonTokenInvalid = string(spam.ReasonTokenInvalid)
	ReasonTokenExpired = string(spam.ReasonTokenExpired)
	ReasonTokenReplay  = string(spam.ReasonTokenReplay)
	ReasonTooFast      = string(spam.ReasonTooFast)
	ReasonPoWMissing   = string(spam.ReasonPoWMissing)
	ReasonPoWInvalid   = string(spam.ReasonPoWInvalid)
	ReasonCaptcha      = string(spam.ReasonCaptcha)
	ReasonRateLimited  = string(spam.ReasonRateLimited)
)

// Metrics are the public form's Prometheus collectors.
type Metrics struct {
	Spam *SpamCounter
}

// SpamCounter is formward_spam_total{reason}. The form is not a label: form IDs are unbounded
// (every workspace's forms), the reasons are a fixed set.
type SpamCounter struct{ vec *prometheus.CounterVec }

// WithLabelValues returns the counter of reason; formID is accepted and not used as a label.
func (c *SpamCounter) WithLabelValues(formID, reason string) prometheus.Counter {
	return c.vec.WithLabelValues(reason)
}

// NewMetrics registers formward_spam_total{reason} with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "formward_spam_total",
		Help: "Public form posts turned away as spam or abuse (never stored), by reason.",
	}, []string{"reason"})
	if reg != nil {
		if err := reg.Register(vec); err != nil {
			return nil, err
		}
	}
	// Every reason exists at 0 from the start, so rates and ratios work before the first refusal.
	for _, reason := range []string{ReasonHoneypot, ReasonTokenMissing, ReasonTokenInvalid, ReasonTokenExpired, ReasonTokenReplay,
		ReasonTooFast, ReasonPoWMissing, ReasonPoWInvalid, ReasonCaptcha, ReasonRateLimited} {
		vec.WithLabelValues(reason)
	}
	return &Metrics{Spam: &SpamCounter{vec: vec}}, nil
}

// rateLimiter counts posts per key in fixed one-minute windows. It is per process: behind a
// load balancer with N serve processes a client gets at most N times the limit.
type rateLimiter struct {
	limit int
	mu    sync.Mutex
	m     map[string]*window
}

type window struct {
	start time.Time
	n     int
}

const maxRateKeys = 100000

// Allow counts one request and returns 0, or how long to wait when the limit is reached
// (ports.RateLimiter).
func (l *rateLimiter) Allow(key string, now time.Time) time.Duration {
	if l.limit <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= maxRateKeys {
		l.prune(now)
	}
	w, ok := l.m[key]
	if !ok || now.Sub(w.start) >= time.Minute {
		w = &window{start: now}
		l.m[key] = w
	}
	if w.n >= l.limit {
		wait := time.Minute - now.Sub(w.start)
		if wait < time.Second {
			wait = time.Second
		}
		return wait
	}
	w.n++
	return 0
}

func (l *rateLimiter) prune(now time.Time) {
	if l.m == nil {
		l.m = make(map[string]*window)
		return
	}
	for k, w := range l.m {
		if now.Sub(w.start) >= time.Minute {
			delete(l.m, k)
		}
	}
	if len(l.m) >= maxRateKeys {
		l.m = make(map[string]*window)
	}
}

// DefaultCaptchaVerifyURLs are the providers' server-side verification endpoints.
var DefaultCaptchaVerifyURLs = map[form.CaptchaProvider]string{
	form.CaptchaTurnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
	form.CaptchaHCaptcha:  "https://api.hcaptcha.com/siteverify",
	form.CaptchaReCAPTCHA: "https://www.google.com/recaptcha/api/siteverify",
}

// CaptchaWidget is what the page needs of a captcha provider: the widget's script, the origins
// its scripts and frames come from (the CSP allows them), the class of the element it turns
// into the widget, and the form field it posts its response in.
type CaptchaWidget struct {
	Script   string
	Origins  []string
	Class    string
	Response string
}

// Captcha is a captcha provider of the public form: its widget and the server-side check.
type Captcha struct {
	CaptchaWidget
	Verifier ports.Captcha
}

// CaptchaWidgets are the widgets of the providers Formward ships.
var CaptchaWidgets = map[form.CaptchaProvider]CaptchaWidget{
	form.CaptchaTurnstile: {"https://challenges.cloudflare.com/turnstile/v0/api.js", []string{"https://challenges.cloudflare.com"}, "cf-turnstile", "cf-turnstile-response"},
	form.CaptchaHCaptcha:  {"https://js.hcaptcha.com/1/api.js", []string{"https://hcaptcha.com", "https://*.hcaptcha.com"}, "h-captcha", "h-captcha-response"},
	form.CaptchaReCAPTCHA: {"https://www.google.com/recaptcha/api.js", []string{"https://www.google.com", "https://www.gstatic.com"}, "g-recaptcha", "g-recaptcha-response"},
}

// BuiltinCaptchas are the providers Formward ships, checked with SiteVerify at verifyURLs
// (a provider missing there, or "", uses its DefaultCaptchaVerifyURLs) through client (nil: a
// client with a 10 s timeout).
func BuiltinCaptchas(verifyURLs map[form.CaptchaProvider]string, client *http.Client) map[form.CaptchaProvider]Captcha {
	out := make(map[form.CaptchaProvider]Captcha, len(CaptchaWidgets))
	for p, w := range CaptchaWidgets {
		out[p] = Captcha{CaptchaWidget: w, Verifier: SiteVerify{URL: verifyURLs[p], Default: DefaultCaptchaVerifyURLs[p], Client: client}}
	}
	return out
}

var errCaptcha = errors.New("captcha verification failed")

var defaultCaptchaClient = &http.Client{Timeout: 10 * time.Second}

// captchaVerifier hands a response to the form's provider (ports.Captcha); a provider this
// build does not have, or an empty response, fails the check.
type captchaVerifier struct {
	providers map[form.CaptchaProvider]Captcha
}

func (v captchaVerifier) Verify(ctx context.Context, c *form.Captcha, response, ip string) error {
	p, ok := v.providers[c.Provider]
	if !ok || strings.TrimSpace(response) == "" {
		return errCaptcha
	}
	return p.Verifier.Verify(ctx, c, response, ip)
}

// SiteVerify is the server-side check Turnstile, hCaptcha and reCAPTCHA share: a form post of
// secret, response and remoteip answered by {"success": true|false}.
type SiteVerify struct {
	// URL is the verification endpoint; "" uses Default.
	URL     string
	Default string
	// Client reaches it; nil: a client with a 10 s timeout.
	Client *http.Client
}

// Verify asks the provider whether the response token is good; any failure to reach the
// provider counts as a failed check (closed, not open).
func (v SiteVerify) Verify(ctx context.Context, c *form.Captcha, response, ip string) error {
	if strings.TrimSpace(response) == "" {
		return errCaptcha
	}
	endpoint := v.URL
	if endpoint == "" {
		endpoint = v.Default
	}
	client := v.Client
	if client == nil {
		client = defaultCaptchaClient
	}
	body := url.Values{"secret": {c.Secret}, "response": {response}}
	if ip != "" {
		body.Set("remoteip", ip)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body.Encode()))
	if err != nil {
		return errCaptcha
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := client.Do(req)
	if err != nil {
		return errCaptcha
	}
	defer res.Body.Close()
	var out struct {
		Success bool `json:"success"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(http.MaxBytesReader(nil, res.Body, 64<<10)).Decode(&out) != nil || !out.Success {
		return errCaptcha
	}
	return nil
}
