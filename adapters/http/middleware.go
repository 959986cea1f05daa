package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/formward/formward/domain/access"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/ports"
)

const (
	ctxRequestID = "formward.request_id"
	ctxBody      = "formward.body"
	// ctxCreatedSubmission is the ID of the submission the request created, for idempotent.
	ctxCreatedSubmission = "formward.created_submission"
	// ctxNotKept marks a response idempotent must not keep (see privacyExport).
	ctxNotKept = "formward.not_kept"
)

func requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-ID")
		if !saneRequestID(id) {
			b := make([]byte, 12)
			_, _ = rand.Read(b)
			id = "req_" + hex.EncodeToString(b)
		}
		c.Set(ctxRequestID, id)
		c.Header("X-Request-ID", id)
		c.Next()
	}
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// accessLog writes one line per request: never a header value, a query string or a body.
func accessLog(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		log.Info("request",
			zap.String("request_id", c.GetString(ctxRequestID)),
			zap.String("method", c.Request.Method),
			zap.String("route", route),
			zap.Int("status", c.Writer.Status()),
			zap.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000),
			zap.Int("bytes", c.Writer.Size()),
		)
	}
}

func recovery(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				log.Error("panic", zap.String("request_id", c.GetString(ctxRequestID)), zap.Any("panic", r), zap.Stack("stack"))
				fail(c, log, errors.New("panic"))
			}
		}()
		c.Next()
	}
}

// limitBody reads the whole body up front (at most 1 MiB) so that handlers and the
// idempotency check see the same bytes.
func (a *api) limitBody(c *gin.Context) {
	if c.Request.Method == http.MethodGet || c.Request.Method == http.MethodDelete {
		return
	}
	if c.Request.ContentLength > MaxBodyBytes {
		fail(c, a.Logger, errPayloadTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			fail(c, a.Logger, err)
			return
		}
		fail(c, a.Logger, badRequest("could not read the request body"))
		return
	}
	c.Set(ctxBody, body)
}

func body(c *gin.Context) []byte {
	b, _ := c.Get(ctxBody)
	raw, _ := b.([]byte)
	return raw
}

// authenticate resolves the key and puts who acts into the request's context: every use case
// checks its own permission against it (a scope too small is 403 there, from the shared
// error table).
func (a *api) authenticate(c *gin.Context) {
	scheme, token, ok := strings.Cut(c.GetHeader("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		fail(c, a.Logger, auth.ErrUnauthenticated)
		return
	}
	ctx := c.Request.Context()
	if c.Request.Method == http.MethodPost && c.FullPath() == captureRoute && httpkit.WellFormedID(c.Param("id")) {
		// The capture reads its form right after the key: one round trip reads both.
		ctx = ports.WithReadAhead(ctx, c.Param("id"))
		c.Request = c.Request.WithContext(ctx)
	}
	p, err := a.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: strings.TrimSpace(token)})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Request = c.Request.WithContext(auth.WithPrincipal(c.Request.Context(), p))
}

// principal is who the request acts as; authenticate has set it before any handler runs.
func principal(c *gin.Context) auth.Principal {
	p, _ := auth.PrincipalFrom(c.Request.Context())
	return p
}

// limiter is a token bucket per API key.
type limiter struct {
	rate  rate.Limit
	burst int
	now   func() time.Time
	mu    sync.Mutex
	keys  map[string]*rate.Limiter
}

func newLimiter(perSecond float64, burst int, clock ports.Clock) *limiter {
	if burst <= 0 {
		burst = int(math.Max(1, perSecond*2))
	}
	now := time.Now
	if clock != nil {
		now = clock.Now
	}
	return &limiter{rate: rate.Limit(perSecond), burst: burst, now: now, keys: map[string]*rate.Limiter{}}
}

func (l *limiter) get(key string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.keys[key]
	if !ok {
		lim = rate.NewLimiter(l.rate, l.burst)
		l.keys[key] = lim
	}
	return lim
}

func (a *api) rateLimit(c *gin.Context) {
	if a.limiter.rate <= 0 {
		return
	}
	lim := a.limiter.get(principal(c).KeyID)
	now := a.limiter.now()
	c.Header("RateLimit-Limit", itoa(a.limiter.burst))
	if !lim.AllowN(now, 1) {
		wait := time.Duration(float64(time.Second) / float64(a.limiter.rate))
		secs := int(math.Ceil(wait.Seconds()))
		c.Header("RateLimit-Remaining", "0")
		c.Header("RateLimit-Reset", itoa(secs))
		fail(c, a.Logger, rateLimited(secs))
		return
	}
	remaining := int(lim.TokensAt(now))
	c.Header("RateLimit-Remaining", itoa(max(remaining, 0)))
	c.Header("RateLimit-Reset", itoa(int(math.Ceil(float64(a.limiter.burst-remaining)/float64(a.limiter.rate)))))
}

// idempotent replays the first response to a POST with the same Idempotency-Key and body. The
// response of a POST that created a submission is kept with the submission's ID, so that
// deleting the submission deletes it too; a replay then gets 409. A response marked not kept
// (ctxNotKept) frees the key instead, as a failed request does.
func (a *api) idempotent(c *gin.Context) {
	key := c.GetHeader("Idempotency-Key")
	if c.Request.Method != http.MethodPost || key == "" {
		return
	}
	if len(key) > 255 || !printableASCII(key) {
		fail(c, a.Logger, badRequest("Idempotency-Key must be at most 255 printable ASCII characters"))
		return
	}
	p := principal(c)
	// Keyed, so a stored fingerprint reveals nothing about a short, guessable body.
	h := hmac.New(sha256.New, a.signingKey)
	h.Write([]byte(c.Request.Method + " " + c.Request.URL.Path + "\n"))
	h.Write(body(c))
	stored, err := a.Idempotency.Reserve(c.Request.Context(), p.WorkspaceID, "api", key, h.Sum(nil), a.Clock.Now())
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	if stored != nil {
		c.Header("Idempotent-Replayed", "true")
		c.Data(stored.Status, "application/json; charset=utf-8", stored.Body)
		c.Abort()
		return
	}
	rec := &recorder{ResponseWriter: c.Writer}
	c.Writer = rec
	c.Next()
	if rec.Status() >= 500 || rec.Status() == 429 || c.GetBool(ctxNotKept) {
		_ = a.Idempotency.Release(c.Request.Context(), p.WorkspaceID, "api", key)
		return
	}
	resp := ports.StoredResponse{Status: rec.Status(), Body: rec.buf.Bytes(), SubmissionID: c.GetString(ctxCreatedSubmission)}
	if err := a.Idempotency.Complete(c.Request.Context(), p.WorkspaceID, "api", key, resp); err != nil {
		a.Logger.Error("store idempotent response", zap.String("request_id", c.GetString(ctxRequestID)), zap.Error(err))
	}
}

type recorder struct {
	gin.ResponseWriter
	buf bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.buf.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.buf.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}

// refuseEarly answers 403 before the body is read into a command when the key's scope can
// never do what the route does (need says what that is), so a read-only key gets 403 (not 422)
// for a bad body. The use cases check again: they are the one place the rule lives for the API
// and the dashboard alike.
func (a *api) refuseEarly(need func(method string) access.Permission) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := principal(c).Require(need(c.Request.Method)); err != nil {
			fail(c, a.Logger, err)
		}
	}
}

// readOrWrite is what a data route needs: Read to look, Write to change.
func readOrWrite(method string) access.Permission {
	if method == http.MethodGet || method == http.MethodHead {
		return access.Read
	}
	return access.Write
}

// manageAccount is what every account-management route needs, whatever the method.
func manageAccount(string) access.Permission { return access.ManageAccount }
