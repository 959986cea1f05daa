package httpapi

import (
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
)

// The API's own errors; adapters/httperr maps them (and every domain error) to HTTP.
var (
	errRouteNotFound   = httperr.ErrRouteNotFound
	errMethodNotFound  = httperr.ErrMethodNotAllowed
	errPayloadTooLarge = httperr.ErrPayloadTooLarge
)

func badRequest(msg string) error { return httperr.BadRequest(msg) }

// rateLimited is an API key over its rate; the wait goes out as Retry-After.
func rateLimited(retryAfterSeconds int) error {
	return &httperr.RateLimited{RetryAfter: time.Duration(retryAfterSeconds) * time.Second}
}

// problem is the shared error table of both HTTP adapters.
func problem(err error) httperr.Body { return httperr.Problem(err) }

// fail writes the error body and stops the chain. Internal errors are logged, never shown.
func fail(c *gin.Context, log *zap.Logger, err error) {
	b := problem(err)
	if b.Status >= 500 {
		log.Error("request failed", zap.String("request_id", c.GetString(ctxRequestID)), zap.Int("status", b.Status), zap.Error(err))
	}
	httperr.Write(c, b)
}
