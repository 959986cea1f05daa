package httpapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/application"
	"github.com/formward/formward/domain"
)

// requestError is a malformed request: a body that is not a JSON object or a bad query parameter.
type requestError struct{ message string }

func (e *requestError) Error() string { return e.message }

func badRequest(msg string) error { return &requestError{message: msg} }

var (
	errForbidden       = application.ErrForbidden
	errRouteNotFound   = errors.New("no such route")
	errMethodNotFound  = errors.New("method not allowed on this route")
	errPayloadTooLarge = errors.New("request body is larger than 1 MiB")
)

// unavailableRetryAfter is the Retry-After, in seconds, of a 503 when storage is failing.
const unavailableRetryAfter = 5

// rateLimited carries the wait a client should honour.
type rateLimited struct{ retryAfter int }

func (e *rateLimited) Error() string { return "rate limit exceeded" }

type errorDetail struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type errorBody struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Status  int           `json:"status"`
	Details []errorDetail `json:"details,omitempty"`
}

// problem maps an error to its status, code and public message. It is the only place that
// knows how domain and application errors look over HTTP.
func problem(err error) errorBody {
	var (
		verr *domain.ValidationError
		rerr *requestError
		mb   *http.MaxBytesError
		rl   *rateLimited
	)
	switch {
	case errors.As(err, &verr):
		b := errorBody{Code: "validation_failed", Status: 422, Message: "the request breaks one or more rules; see details"}
		for _, v := range verr.Violations {
			b.Details = append(b.Details, errorDetail{Field: v.Field, Code: v.Code, Message: v.Message})
		}
		return b
	case errors.As(err, &rerr):
		return errorBody{Code: "invalid_request", Status: 400, Message: rerr.message}
	case errors.Is(err, application.ErrUnauthenticated):
		return errorBody{Code: "unauthorized", Status: 401, Message: "a valid API key is required: Authorization: Bearer <key>"}
	case errors.Is(err, errForbidden):
		return errorBody{Code: "forbidden", Status: 403, Message: errForbidden.Error()}
	case errors.Is(err, domain.ErrNotFound), errors.Is(err, errRouteNotFound):
		return errorBody{Code: "not_found", Status: 404, Message: "no such resource"}
	case errors.Is(err, errMethodNotFound):
		return errorBody{Code: "method_not_allowed", Status: 405, Message: errMethodNotFound.Error()}
	case errors.Is(err, domain.ErrFormClosed):
		return errorBody{Code: "form_closed", Status: 409, Message: "this form does not accept submissions in its current status"}
	case errors.Is(err, domain.ErrConflict):
		return errorBody{Code: "conflict", Status: 409, Message: "this Idempotency-Key was already used with another request, or that request is still running"}
	case errors.As(err, &mb), errors.Is(err, errPayloadTooLarge):
		return errorBody{Code: "payload_too_large", Status: 413, Message: errPayloadTooLarge.Error()}
	case errors.As(err, &rl):
		return errorBody{Code: "rate_limited", Status: 429, Message: "too many requests for this key; retry after the Retry-After delay"}
	case errors.Is(err, domain.ErrUnavailable):
		return errorBody{Code: "unavailable", Status: 503, Message: "storage is unavailable right now; retry after the Retry-After delay"}
	}
	return errorBody{Code: "internal_error", Status: 500, Message: "something went wrong on our side; the request ID identifies it in our logs"}
}

// fail writes the error body and stops the chain. Internal errors are logged, never shown.
func fail(c *gin.Context, log *zap.Logger, err error) {
	b := problem(err)
	if b.Status == 500 {
		log.Error("request failed", zap.String("request_id", c.GetString(ctxRequestID)), zap.Error(err))
	}
	if b.Status == 503 {
		log.Warn("storage unavailable", zap.String("request_id", c.GetString(ctxRequestID)), zap.Error(err))
		c.Header("Retry-After", itoa(unavailableRetryAfter))
	}
	var rl *rateLimited
	if errors.As(err, &rl) {
		c.Header("Retry-After", itoa(rl.retryAfter))
	}
	c.AbortWithStatusJSON(b.Status, gin.H{"error": b})
}
