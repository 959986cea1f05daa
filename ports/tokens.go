package ports

import (
	"context"
	"time"
)

// UsedTokens remembers the nonces of the public form's render tokens, so each token is
// accepted once across every process.
type UsedTokens interface {
	// Use records the nonce until expiresAt and reports false when it was already used.
	Use(ctx context.Context, nonce string, expiresAt time.Time) (bool, error)
}
