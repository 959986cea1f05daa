package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// UsedTokens is the table of render-token nonces already spent on a public form post.
type UsedTokens struct {
	db    *DB
	clock ports.Clock
}

var _ ports.UsedTokens = (*UsedTokens)(nil)

// NewUsedTokens returns the store; expired nonces are purged as new ones arrive.
func NewUsedTokens(db *DB, clock ports.Clock) *UsedTokens { return &UsedTokens{db: db, clock: clock} }

// Use inserts the nonce; an existing unexpired row means the token was replayed. Every call
// also deletes a few expired rows, so the table stays the size of one token lifetime.
func (u *UsedTokens) Use(ctx context.Context, nonce string, expiresAt time.Time) (bool, error) {
	now := toMillis(u.clock.Now())
	var inserted int64
	err := u.db.write(ctx, func(db *gorm.DB) error {
		if err := db.Exec(`DELETE FROM used_form_tokens WHERE nonce IN (SELECT nonce FROM used_form_tokens WHERE expires_at < ? LIMIT 100)`, now).Error; err != nil {
			return err
		}
		res := db.Exec(`INSERT INTO used_form_tokens (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING`, nonce, toMillis(expiresAt))
		inserted = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return false, mapErr("use form token", err)
	}
	return inserted == 1, nil
}
