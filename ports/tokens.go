package ports

import (
	"errors"
	"time"
)

// ErrTokenUsed is returned when a capture spends a render token whose nonce was already spent:
// the post is a replay and nothing of it was stored.
var ErrTokenUsed = errors.New("render token already used")

// SpentToken is the nonce of a public form's render token, spent atomically with the
// submission it carries, so each token is accepted once across every process. The nonce is
// remembered until ExpiresAt (after which the token itself is rejected as expired).
type SpentToken struct {
	Nonce     string
	ExpiresAt time.Time
}
