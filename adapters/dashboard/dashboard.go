// Package dashboard is the people's side of Formward: the server-rendered pages under /app
// (html/template, embedded assets, no build step). Sign-in, first-run setup, invitations,
// password resets and single sign-on; then the shell with the workspace's forms and its
// settings: API keys, members and invitations, billing, the audit log and the profile.
//
// It only parses requests and renders pages. Who may do what is decided by the use cases of
// *application.Application, called with the principal of the signed-in member
// (application.WithPrincipal); errors go through the shared table of adapters/httperr.
// Every page works without JavaScript; assets/app.js only adds copy buttons and small comforts.
package dashboard

import (
	"embed"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/ports"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Options configure the dashboard.
type Options struct {
	// PublicURL is the server's public origin; an https URL makes every cookie Secure.
	PublicURL string
	// CookieKey signs and seals the short-lived cookies of the sign-in steps (two-factor,
	// single sign-on). At least 32 bytes.
	CookieKey []byte
	// SSO shows "Sign in with SSO" (OpenID Connect is configured).
	SSO bool
	// TrustedProxies may set X-Forwarded-For; the peer address counts otherwise.
	TrustedProxies []netip.Prefix
	// Mail is the send_email runner when SMTP is configured (FORMWARD_SMTP_URL and
	// FORMWARD_SMTP_FROM); the workflow editor's "Send a test" goes through it. nil: email is
	// not set up, and the editor warns on every email action.
	Mail ports.ActionRunner
}

// Deps are what the dashboard needs.
type Deps struct {
	App    *application.Application
	Clock  ports.Clock
	Logger *zap.Logger
	// FileURL turns a submission's own uploads into signed download links (the API's
	// linker); nil shows stored values as they are.
	FileURL httpkit.FileLinker
	// Preview writes the builder's preview of a form: its public page with the buttons posting
	// to action, and, for post (nil on a first view), the next page, the page with its errors or
	// the preview's thank-you, storing nothing; it returns the status (web.Preview, wired by
	// bootstrap, so that the dashboard does not import the public pages' adapter). nil answers
	// the preview with 404.
	Preview func(w io.Writer, f *form.Form, action string, post *http.Request) (int, error)
}

// Handler serves /app.
type Handler struct {
	app           *application.Application
	clock         ports.Clock
	log           *zap.Logger
	opts          Options
	pages         *pageSet
	secure        bool
	cookies       cookieBox
	origin        *http.CrossOriginProtection
	fileURL       httpkit.FileLinker
	renderPreview func(w io.Writer, f *form.Form, action string, post *http.Request) (int, error)
}

// New parses the templates and checks the options.
func New(d Deps, o Options) (*Handler, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	box, err := newCookieBox(o.CookieKey)
	if err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	secure := false
	if u, err := url.Parse(o.PublicURL); err == nil && strings.EqualFold(u.Scheme, "https") {
		secure = true
	}
	cop := http.NewCrossOriginProtection()
	if o.PublicURL != "" {
		if u, err := url.Parse(o.PublicURL); err == nil {
			// The public origin is trusted even when a proxy rewrites Host; in canonical form,
			// as browsers send their Origin (HTTPS://Forms.Example:443 is https://forms.example).
			if pub, err := origin.Of(u); err == nil {
				_ = cop.AddTrustedOrigin(pub.String())
			}
		}
	}
	h := &Handler{app: d.App, clock: d.Clock, log: d.Logger, opts: o, pages: pages, secure: secure, cookies: box, origin: cop, fileURL: d.FileURL, renderPreview: d.Preview}
	cop.SetDenyHandler(http.HandlerFunc(h.crossOriginDenied))
	return h, nil
}

// Mount adds GET / (a redirect to /app) and every dashboard route to r.
func (h *Handler) Mount(r *gin.Engine) {
	r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, "/app") })
	g := r.Group("/app", h.headers, h.sameOrigin)
	g.GET("/assets/*path", assets.Serve)

	// Signed-out pages.
	g.GET("/login", h.loginPage)
	g.POST("/login", h.login)
	g.GET("/login/verify", h.loginVerifyPage)
	g.POST("/login/verify", h.loginVerify)
	g.POST("/logout", h.logout)
	g.GET("/setup", h.setupPage)
	g.POST("/setup", h.setup)
	g.GET("/forgot-password", h.forgotPage)
	g.POST("/forgot-password", h.forgot)
	g.GET("/reset-password", h.resetPage)
	g.POST("/reset-password", h.reset)
	g.GET("/invitations/:token", h.invitationPage)
	g.POST("/invitations/:token", h.acceptInvitation)
	g.GET("/oidc/start", h.oidcStart)
	g.GET("/oidc/callback", h.oidcCallback)

	// Signed-in pages.
	a := g.Group("", h.authenticate)
	a.GET("", h.home)
	a.GET("/no-workspace", h.noWorkspace)
	w := a.Group("", h.requireWorkspace)
	w.POST("/workspaces/switch", h.switchWorkspace)
	h.mountForms(w)
	h.mountResponses(w)
	h.mountHistory(w)
	h.mountFiles(w)
	// Settings: one file and one mount per page (settings_*.go).
	h.mountKeys(w)
	h.mountMembers(w)
	h.mountBilling(w)
	h.mountAudit(w)
	h.mountPrivacy(w)
	h.mountRouting(w)
	h.mountIntegrations(w)
	h.mountWorkflows(w)
	h.mountProfile(a)
}

func (h *Handler) now() time.Time { return h.clock.Now() }
