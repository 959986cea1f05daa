// Package web is the respondent's side of Formward: the public form page at /f/{form_id}
// (html/template, embedded assets, no JavaScript required), the capture of its posts
// (urlencoded, multipart, JSON with CORS) through the shared capture use case, and the spam
// rules each form switches in its settings.
package web

import (
	"context"
	"embed"
	"html/template"
	"mime/multipart"
	"net/http"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/application"
	"github.com/formward/formward/domain/form"
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
	// RateLimit is posts per minute per IP hash and form; 0 uses DefaultRateLimit, negative turns it off.
	RateLimit int
	// TrustedProxies may set X-Forwarded-For; the peer address counts otherwise.
	TrustedProxies []netip.Prefix
	// CaptchaVerifyURLs override the providers' verification endpoints (tests, proxies).
	CaptchaVerifyURLs map[form.CaptchaProvider]string
	// HTTPClient reaches the captcha providers (default: 10 s timeout).
	HTTPClient *http.Client
	// Uploader stores the files of multipart posts; nil refuses uploads with a field error.
	Uploader Uploader
}

// Uploader keeps one uploaded file of a public form post in object storage and returns the
// reference the submission stores. An error with a Violation(fieldID) method is shown to the
// respondent next to the field (size, type, quota); others are internal.
type Uploader interface {
	Upload(ctx context.Context, f *form.Form, fieldID string, file *multipart.FileHeader) (string, error)
	// Discard deletes files this post uploaded when the post is then refused, so that nothing
	// half-written stays behind.
	Discard(ctx context.Context, f *form.Form, refs []string)
}

// Deps are what the public form needs.
type Deps struct {
	App      *application.Application
	IPHasher ports.IPHasher
	Clock    ports.Clock
	Logger   *zap.Logger
	Metrics  *Metrics
}

// Handler serves the public form routes.
type Handler struct {
	d       Deps
	opts    Options
	tmpl    *template.Template
	pages   *pageCache
	limiter *rateLimiter
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
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if d.Metrics == nil {
		m, err := NewMetrics(nil)
		if err != nil {
			return nil, err
		}
		d.Metrics = m
	}
	t, err := template.New("").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Funcs(templateFuncs()).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages, err := newPageCache()
	if err != nil {
		return nil, err
	}
	return &Handler{d: d, opts: o, tmpl: t, pages: pages, limiter: &rateLimiter{limit: o.RateLimit}}, nil
}

// Mount adds the public routes to r: GET/POST /f/:form_id, OPTIONS /f/:form_id (CORS
// preflight), GET /f/:form_id/challenge (token and challenge for JSON posts) and /f/assets/*.
func (h *Handler) Mount(r gin.IRoutes) {
	r.GET("/f/assets/*path", assets.serve)
	r.GET("/f/:form_id", h.page)
	r.POST("/f/:form_id", h.capture)
	r.OPTIONS("/f/:form_id", h.preflight)
	r.GET("/f/:form_id/challenge", h.challenge)
	r.OPTIONS("/f/:form_id/challenge", h.preflight)
}
