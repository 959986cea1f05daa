// Package web is the respondent's side of Formward: the public form page at /f/{form_id}
// (html/template, embedded assets) and the reading of its posts (urlencoded, multipart, JSON
// with CORS). It only parses requests and renders pages: what a post must pass (the spam
// policy, validation, uploads, storage) is the use case application.SubmitPublicFormHandler.
// The spam checks that need this adapter's keys (render tokens, proof of work) or a remote
// service (captcha) and the rate limiter's counters are implemented here as its ports.
package web

import (
	"embed"
	"html/template"
	"net/http"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Defaults of Options.
const (
	DefaultTokenTTL     = 24 * time.Hour
	DefaultPoWMaxNumber = 100000
	DefaultRateLimit    = 10
	// MaxFormBytes bounds a urlencoded or JSON post; multipart posts get MaxMultipartBytes.
	MaxFormBytes      = 1 << 20
	MaxMultipartBytes = 32 << 20
)

// Options configure the public form.
type Options struct {
	// TokenKey signs the render tokens; PoWKey signs the proof-of-work challenges.
	TokenKey []byte
	PoWKey   []byte
	// TokenTTL is how long a rendered page can be submitted (default 24h).
	TokenTTL time.Duration
	// PoWMaxNumber is the largest secret number of a challenge: the work's upper bound.
	PoWMaxNumber int
	// RateLimit is posts (and challenges) per minute per address and form; an IPv6 address
	// counts as its /64. 0 uses DefaultRateLimit, negative turns it off.
	RateLimit int
	// TrustedProxies may set X-Forwarded-For; the peer address counts otherwise.
	TrustedProxies []netip.Prefix
	// Captchas are the captcha providers forms may use (bootstrap passes the registered ones,
	// adapters/extend); nil: BuiltinCaptchas(CaptchaVerifyURLs, HTTPClient).
	Captchas map[form.CaptchaProvider]Captcha
	// CaptchaVerifyURLs override the built-in providers' verification endpoints when Captchas
	// is nil (tests).
	CaptchaVerifyURLs map[form.CaptchaProvider]string
	// HTTPClient reaches the built-in captcha providers when Captchas is nil (default: 10 s timeout).
	HTTPClient *http.Client
	// TempDir is where uploads larger than MemoryUploadBytes are spooled while the post is
	// read (default: the system's temp dir).
	TempDir string
	// MaxFilesPerPost stops reading a multipart post at its next file (the use case applies
	// the per-field limit); default submission.DefaultMaxFilesPerPost.
	MaxFilesPerPost int
	// PublicURL is the base of resume links (default: the request's own origin).
	PublicURL string
}

// Deps are what the public form needs.
type Deps struct {
	App     *application.Application
	Clock   ports.Clock
	Logger  *zap.Logger
	Metrics *Metrics
}

// Handler serves the public form routes.
type Handler struct {
	d     Deps
	opts  Options
	tmpl  *template.Template
	pages *pageCache
	// messages are the rendered message pages (messagecache.go).
	messages messageCache
	tokens   renderTokens
	// drafts limits the drafts one address starts per form and minute.
	drafts *rateLimiter
	submit capture.SubmitPublicFormHandler
	starts capture.RecordFormStartHandler
}

// New checks the options and parses the templates.
func New(d Deps, o Options) (*Handler, error) {
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.PoWMaxNumber <= 0 {
		o.PoWMaxNumber = DefaultPoWMaxNumber
	}
	if o.RateLimit == 0 {
		o.RateLimit = DefaultRateLimit
	}
	if o.Captchas == nil {
		o.Captchas = BuiltinCaptchas(o.CaptchaVerifyURLs, o.HTTPClient)
	}
	if d.Metrics == nil {
		m, err := NewMetrics(nil)
		if err != nil {
			return nil, err
		}
		d.Metrics = m
	}
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	if o.MaxFilesPerPost <= 0 {
		o.MaxFilesPerPost = submission.DefaultMaxFilesPerPost
	}
	pages, err := newPageCache()
	if err != nil {
		return nil, err
	}
	tokens := renderTokens{key: o.TokenKey, ttl: o.TokenTTL}
	checks := capture.SpamChecks{Tokens: tokens, ProofOfWork: proofOfWork{key: o.PoWKey},
		Captcha: captchaVerifier{providers: o.Captchas}, Limiter: &rateLimiter{limit: o.RateLimit}}
	h := &Handler{d: d, opts: o, tmpl: t, pages: pages, tokens: tokens, drafts: &rateLimiter{limit: draftLimit(o.RateLimit)}}
	if d.App != nil {
		h.submit = d.App.Commands.SubmitPublicForm.WithSpamChecks(checks)
		h.starts = d.App.Commands.RecordFormStart.WithSpamChecks(checks)
	}
	return h, nil
}

// Mount adds the public routes to r: GET/POST /f/:form_id, OPTIONS /f/:form_id (CORS
// preflight), GET /f/:form_id/challenge (token and challenge for JSON posts), POST
// /f/:form_id/start (the page's report of a first interaction), the theme's GET
// /f/:form_id/theme.css and /f/:form_id/logo/:version, and /f/assets/*.
func (h *Handler) Mount(r gin.IRoutes) {
	r.GET("/f/assets/*path", assets.Serve)
	r.GET("/f/:form_id", h.page)
	r.POST("/f/:form_id", h.capture)
	r.POST("/f/:form_id/page", h.step)
	r.POST("/f/:form_id/draft", h.draft)
	r.POST("/f/:form_id/resume-email", h.resumeEmail)
	r.POST("/f/:form_id/start", h.start)
	r.OPTIONS("/f/:form_id", h.preflight)
	r.GET("/f/:form_id/challenge", h.challenge)
	r.GET("/f/:form_id/theme.css", h.themeStylesheet)
	r.GET("/f/:form_id/logo/:version", h.logo)
	r.OPTIONS("/f/:form_id/challenge", h.preflight)
}

// draftLimit is how many drafts one address may start on one form per minute: a visit starts
// one, so a few times the post limit leaves room for people behind one address.
func draftLimit(rate int) int {
	if rate < 0 {
		return -1
	}
	return 3 * rate
}
