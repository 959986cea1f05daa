// Package httpapi is the gin adapter of the /v1 REST API.
package httpapi

import (
	"context"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/http/openapi"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/application"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/ports"
)

// MaxBodyBytes is the API body limit (1 MiB; docs/api.md); a larger body is 413 payload_too_large.
const MaxBodyBytes = 1 << 20

// Options configure the API edge.
type Options struct {
	// SigningKey signs pagination cursors and keys the Idempotency-Key request fingerprints.
	SigningKey []byte
	// RateLimit is requests per second per key; 0 turns the limit off.
	RateLimit float64
	// RateBurst is the bucket size of the per-key limit.
	RateBurst int
	// RateClock tells the per-key limit the time; nil means the system clock (tests move a fake one).
	RateClock ports.Clock
	// FileURL turns a submission's own uploads into signed download links; nil leaves values as stored.
	FileURL httpkit.FileLinker
	// PublicURL is the server's public origin, the base of the file links that never expire
	// (CSV and XLSX exports).
	PublicURL string
	// Middleware runs first on every request, routes mounted later included (tracing).
	Middleware []gin.HandlerFunc
}

// Deps are what the router needs.
type Deps struct {
	App         *application.Application
	Idempotency ports.IdempotencyStore
	Clock       ports.Clock
	Logger      *zap.Logger
	// Ready reports whether the database answers.
	Ready func(ctx context.Context) error
}

type api struct {
	Deps
	signingKey []byte
	cursors    cursors
	fileURL    httpkit.FileLinker
	publicURL  string
	limiter    *limiter
}

// captureRoute is the API's capture, whose key and form are read in one round trip.
const captureRoute = "/v1/forms/:id/submissions"

// gin renders and binds JSON with the hot paths' codec (adapters/jsoncodec): the same bytes.
func init() { jsoncodec.UseForGin() }

// NewRouter builds the HTTP handler: /healthz, /readyz and the /v1 API.
func NewRouter(d Deps, o Options) *Router {
	gin.SetMode(gin.ReleaseMode)
	a := &api{Deps: d, signingKey: o.SigningKey, cursors: cursors{key: o.SigningKey}, limiter: newLimiter(o.RateLimit, o.RateBurst, o.RateClock), fileURL: o.FileURL,
		publicURL: o.PublicURL}
	if a.fileURL == nil {
		a.fileURL = httpkit.KeepValue
	}
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.ContextWithFallback = true
	r.Use(o.Middleware...)
	r.Use(requestID(), accessLog(d.Logger), recovery(d.Logger))
	rt := &Router{Engine: r}
	r.NoRoute(func(c *gin.Context) {
		if !rt.fellBack(c) {
			fail(c, d.Logger, errRouteNotFound)
		}
	})
	r.NoMethod(func(c *gin.Context) {
		if !rt.fellBack(c) {
			fail(c, d.Logger, errMethodNotFound)
		}
	})

	r.GET("/healthz", func(c *gin.Context) { c.JSON(200, gin.H{"status": "ok"}) })
	r.GET("/readyz", func(c *gin.Context) {
		if err := d.Ready(c.Request.Context()); err != nil {
			d.Logger.Warn("not ready", zap.Error(err))
			c.JSON(503, gin.H{"status": "unavailable"})
			return
		}
		c.JSON(200, gin.H{"status": "ok"})
	})
	r.GET("/v1/openapi.json", func(c *gin.Context) { c.Data(200, "application/json", openapi.Document()) })

	// Two groups on /v1, the same chain but for what a key's scope must allow before anything
	// else is read: the forms and their data, and account management.
	chain := func(need func(string) access.Permission) []gin.HandlerFunc {
		return []gin.HandlerFunc{a.limitBody, a.authenticate, a.rateLimit, a.refuseEarly(need), wellFormedIDs(d.Logger), a.idempotent}
	}
	v1 := r.Group("/v1", chain(readOrWrite)...)
	account := r.Group("/v1", chain(manageAccount)...)
	v1.GET("/forms", a.listForms)
	v1.POST("/forms", a.createForm)
	v1.GET("/forms/:id", a.getForm)
	v1.PATCH("/forms/:id", a.updateForm)
	v1.DELETE("/forms/:id", a.deleteForm)
	v1.GET("/forms/:id/definition", a.getFormDefinition)
	v1.PUT("/forms/by-ref/:ref", a.putFormByRef)
	v1.GET("/forms/:id/submissions", a.listSubmissions)
	v1.GET("/forms/:id/submissions/export", a.exportSubmissions)
	v1.GET("/forms/:id/stats", a.getFormStats)
	v1.GET("/forms/:id/drafts", a.listDrafts)
	v1.GET("/forms/:id/versions", a.listFormVersions)
	v1.GET("/forms/:id/versions/:version", a.getFormVersion)
	v1.POST("/forms/:id/versions/:version/restore", a.restoreFormVersion)
	v1.GET("/forms/:id/versions/:version/schema", a.getVersionSchema)
	v1.POST(strings.TrimPrefix(captureRoute, "/v1"), a.createSubmission)
	v1.GET("/forms/:id/submissions/:submission_id", a.getSubmission)
	v1.PATCH("/forms/:id/submissions/:submission_id", a.updateSubmission)
	v1.DELETE("/forms/:id/submissions/:submission_id", a.deleteSubmission)
	v1.GET("/webhooks", a.listWebhooks)
	v1.POST("/webhooks", a.createWebhook)
	v1.GET("/webhooks/:id", a.getWebhook)
	v1.PATCH("/webhooks/:id", a.updateWebhook)
	v1.DELETE("/webhooks/:id", a.deleteWebhook)
	v1.GET("/webhooks/:id/deliveries", a.listDeliveries)
	v1.POST("/webhooks/:id/deliveries/:delivery_id/retry", a.retryDelivery)
	v1.POST("/webhooks/:id/replay", a.startReplay)
	v1.GET("/webhooks/:id/replays", a.listReplays)
	v1.GET("/webhooks/:id/replays/:job_id", a.getReplay)
	v1.GET("/workflows", a.listWorkflows)
	v1.POST("/workflows", a.createWorkflow)
	v1.GET("/workflows/:id", a.getWorkflow)
	v1.PATCH("/workflows/:id", a.updateWorkflow)
	v1.DELETE("/workflows/:id", a.deleteWorkflow)
	v1.GET("/integrations", a.listIntegrations)
	v1.POST("/integrations", a.createIntegration)
	v1.GET("/integrations/:id", a.getIntegration)
	v1.DELETE("/integrations/:id", a.deleteIntegration)
	v1.GET("/workflows/:id/runs", a.listRuns)
	v1.POST("/workflows/:id/runs/:run_id/retry", a.retryRun)
	v1.GET("/forms/:id/notification-runs", a.listNotificationRuns)
	account.GET("/workspace", a.getWorkspace)
	account.PATCH("/workspace", a.updateWorkspace)
	account.GET("/api-keys", a.listAPIKeys)
	account.POST("/api-keys", a.createAPIKey)
	account.DELETE("/api-keys/:id", a.revokeAPIKey)
	account.GET("/members", a.listMembers)
	account.PATCH("/members/:id", a.updateMember)
	account.DELETE("/members/:id", a.removeMember)
	account.GET("/invitations", a.listInvitations)
	account.POST("/invitations", a.createInvitation)
	account.DELETE("/invitations/:id", a.withdrawInvitation)
	account.GET("/audit-events", a.listAuditEvents)
	account.POST("/privacy/export", a.privacyExport)
	account.POST("/privacy/erase", a.privacyErase)
	return rt
}

// Router is the API's http.Handler.
type Router struct {
	*gin.Engine
	fallbacks []fallback
}

// fallback answers the requests that no route matched below a prefix that is not the API's.
type fallback struct {
	prefix string
	handle gin.HandlerFunc
}

// Fallback makes handle answer every unmatched request at prefix or below it (a page's own
// 404 with its own headers) instead of the API's JSON error. Call it while mounting, before
// serving.
func (r *Router) Fallback(prefix string, handle gin.HandlerFunc) {
	r.fallbacks = append(r.fallbacks, fallback{prefix: strings.TrimSuffix(prefix, "/"), handle: handle})
}

func (r *Router) fellBack(c *gin.Context) bool {
	path := c.Request.URL.Path
	for _, f := range r.fallbacks {
		if path == f.prefix || strings.HasPrefix(path, f.prefix+"/") {
			f.handle(c)
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }
