// Package httperr is the one table that turns errors into HTTP answers, for the HTTP
// adapters: the API (adapters/http), the public form pages (adapters/web) and the dashboard
// (adapters/dashboard). A domain or application error gets the same status and code wherever
// it surfaces. Everything else the three share is in adapters/httpkit.
package httperr

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/spam"
)

// UnavailableRetryAfter is the Retry-After of a 503 unavailable answer.
const UnavailableRetryAfter = 5 * time.Second

// Errors the HTTP adapters raise themselves (ErrForbidden is the application's: a scope that
// lacks the permission an action needs).
var (
	ErrForbidden        = auth.ErrForbidden
	ErrRouteNotFound    = errors.New("no such route")
	ErrMethodNotAllowed = errors.New("method not allowed on this route")
	ErrPayloadTooLarge  = errors.New("request body is larger than 1 MiB")
)

// RequestError is a malformed request: a body that cannot be read as the endpoint expects, or
// a bad query parameter. Its message is shown.
type RequestError struct{ Message string }

func (e *RequestError) Error() string { return e.Message }

// BadRequest is a 400 invalid_request with msg.
func BadRequest(msg string) error { return &RequestError{Message: msg} }

// RateLimited is an API key over its request rate.
type RateLimited struct{ RetryAfter time.Duration }

func (e *RateLimited) Error() string { return "rate limit exceeded" }

// Detail is one broken rule of a 422 answer.
type Detail struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Body is the error object of every error answer: {"error": Body}.
type Body struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Status  int      `json:"status"`
	Details []Detail `json:"details,omitempty"`
	// RetryAfter, when set, goes out as the Retry-After header (whole seconds, at least 1).
	RetryAfter time.Duration `json:"-"`
}

// Problem maps an error to its status, code and public message. Errors it does not know are
// 500 internal_error, whose message reveals nothing.
func Problem(err error) Body {
	var (
		verr *domain.ValidationError
		rerr *RequestError
		mb   *http.MaxBytesError
		rl   *RateLimited
		srl  *spam.RateLimited
		rej  *spam.Rejection
		// throttled is a sign-in refused for a while after repeated failures.
		throttled *accounts.ThrottledError
		// conflict is a clash with the current state; its message says what clashed.
		conflict *domain.ConflictError
	)
	switch {
	case errors.As(err, &verr):
		b := Body{Code: "validation_failed", Status: 422, Message: "the request breaks one or more rules; see details"}
		for _, v := range verr.Violations {
			b.Details = append(b.Details, Detail{Field: v.Field, Code: v.Code, Message: v.Message})
		}
		return b
	case errors.As(err, &rerr):
		return Body{Code: "invalid_request", Status: 400, Message: rerr.Message}
	case errors.As(err, &throttled):
		return Body{Code: "rate_limited", Status: 429, Message: "too many failed sign-ins; retry after the Retry-After delay", RetryAfter: throttled.RetryAfter}
	case errors.Is(err, accounts.ErrInvalidCredentials), errors.Is(err, accounts.ErrTwoFactorRequired), errors.Is(err, accounts.ErrOIDCRefused):
		return Body{Code: "unauthorized", Status: 401, Message: "the email, password or code is not correct"}
	case errors.Is(err, member.ErrOwnersOnly), errors.Is(err, accounts.ErrNoAccount):
		return Body{Code: "forbidden", Status: 403, Message: err.Error()}
	case errors.Is(err, invitation.ErrNotUsable), errors.Is(err, accounts.ErrSetupClosed), errors.Is(err, accounts.ErrLinkNotUsable),
		errors.Is(err, accounts.ErrOIDCNotConfigured):
		return Body{Code: "not_found", Status: 404, Message: err.Error()}
	case errors.Is(err, auth.ErrUnauthenticated):
		return Body{Code: "unauthorized", Status: 401, Message: "a valid API key is required: Authorization: Bearer <key>"}
	case errors.Is(err, ErrForbidden):
		return Body{Code: "forbidden", Status: 403, Message: ErrForbidden.Error()}
	case errors.As(err, &rej):
		return Body{Code: "rejected", Status: 403, Message: "the response could not be accepted; reload the form and try again"}
	case errors.Is(err, domain.ErrNotFound), errors.Is(err, ErrRouteNotFound):
		return Body{Code: "not_found", Status: 404, Message: "no such resource"}
	case errors.Is(err, ErrMethodNotAllowed):
		return Body{Code: "method_not_allowed", Status: 405, Message: ErrMethodNotAllowed.Error()}
	case errors.Is(err, domain.ErrFormClosed):
		return Body{Code: "form_closed", Status: 409, Message: "this form does not accept submissions in its current status"}
	case errors.As(err, &conflict):
		return Body{Code: "conflict", Status: 409, Message: conflict.Message}
	case errors.Is(err, domain.ErrConflict):
		// A clash nobody put in words: a unique key taken by a concurrent change.
		return Body{Code: "conflict", Status: 409, Message: "this clashes with a change made in the meantime; reload and try again"}
	case errors.As(err, &mb), errors.Is(err, ErrPayloadTooLarge):
		msg := ErrPayloadTooLarge.Error()
		if mb != nil {
			msg = "request body is larger than " + sizeOf(mb.Limit)
		}
		return Body{Code: "payload_too_large", Status: 413, Message: msg}
	case errors.As(err, &rl):
		return Body{Code: "rate_limited", Status: 429, Message: "too many requests for this key; retry after the Retry-After delay", RetryAfter: rl.RetryAfter}
	case errors.As(err, &srl):
		return Body{Code: "rate_limited", Status: 429, Message: "too many responses from this address; retry after the Retry-After delay", RetryAfter: srl.RetryAfter}
	case errors.Is(err, domain.ErrUnavailable):
		return Body{Code: "unavailable", Status: 503, Message: "storage is unavailable right now; retry after the Retry-After delay", RetryAfter: UnavailableRetryAfter}
	}
	return Body{Code: "internal_error", Status: 500, Message: "something went wrong on our side; the request ID identifies it in our logs"}
}

// Write sends b as the error answer and stops the chain.
func Write(c *gin.Context, b Body) {
	SetRetryAfter(c, b)
	c.AbortWithStatusJSON(b.Status, gin.H{"error": b})
}

// SetRetryAfter sets the Retry-After header of b, if it has one.
func SetRetryAfter(c *gin.Context, b Body) {
	if b.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(int(math.Max(1, math.Ceil(b.RetryAfter.Seconds())))))
	}
}

func sizeOf(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
