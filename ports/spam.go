package ports

import (
	"context"
	"errors"
	"time"

	"github.com/formward/formward/domain/form"
)

// Errors of RenderTokens.Verify.
var (
	ErrTokenMissing = errors.New("render token missing")
	ErrTokenInvalid = errors.New("render token invalid")
	ErrTokenExpired = errors.New("render token expired")
)

// RenderToken is a verified render token: when its page was shown and its single-use nonce.
type RenderToken struct {
	Issued time.Time
	Nonce  string
	// ExpiresAt is when the token is refused anyway; the spent nonce need not be kept longer.
	ExpiresAt time.Time
}

// RenderTokens check the signed token each rendered page carries; they do not spend it.
type RenderTokens interface {
	// Verify returns the token, or ErrTokenMissing, ErrTokenInvalid or ErrTokenExpired.
	Verify(formID, token string, now time.Time) (RenderToken, error)
}

// Errors of ProofOfWork.Verify.
var (
	ErrPoWMissing = errors.New("proof of work missing")
	ErrPoWInvalid = errors.New("proof of work invalid")
)

// ProofOfWork checks a solved challenge bound to a render token's nonce.
type ProofOfWork interface {
	// Verify returns nil, ErrPoWMissing or ErrPoWInvalid.
	Verify(solution, nonce string, now time.Time) error
}

// Captcha asks the form's captcha provider whether a response is good; failing to reach the
// provider is a failed check.
type Captcha interface {
	Verify(ctx context.Context, c *form.Captcha, response, ip string) error
}

// RateLimiter counts events per key in fixed windows.
type RateLimiter interface {
	// Allow counts one event and returns 0, or how long to wait when the key is over its limit.
	Allow(key string, now time.Time) time.Duration
}
