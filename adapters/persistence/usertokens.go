package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// UserTokenRepository stores one-time tokens (setup, password links, pending two-factor) by the
// hash of their value.
type UserTokenRepository struct{ db *DB }

var _ ports.UserTokenRepository = (*UserTokenRepository)(nil)

// NewUserTokenRepository returns the user token repository.
func NewUserTokenRepository(db *DB) *UserTokenRepository { return &UserTokenRepository{db: db} }

// Put stores the token, replacing any earlier token of the same purpose and user (for the setup
// token, whose user is empty, any earlier setup token).
func (r *UserTokenRepository) Put(ctx context.Context, t ports.UserToken) error {
	row := userTokenFromPort(t)
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM user_tokens WHERE purpose = ? AND user_id = ?", t.Purpose, t.UserID).Error; err != nil {
			return mapErr("replace user token", err)
		}
		return mapErr("put user token", tx.Create(&row).Error)
	})
}

// Peek returns the unexpired token with this purpose and hash, or domain.ErrNotFound.
func (r *UserTokenRepository) Peek(ctx context.Context, purpose string, tokenHash []byte, now time.Time) (ports.UserToken, error) {
	var row userTokenRow
	err := r.db.read(ctx).Where("purpose = ? AND token_hash = ? AND expires_at > ?", purpose, tokenHash, toMillis(now)).Take(&row).Error
	if err != nil {
		return ports.UserToken{}, mapErr("peek user token", err)
	}
	return row.toPort(), nil
}

// Spend deletes the unexpired token with this purpose and hash and returns it, in one
// statement: of concurrent calls one gets the token, the others domain.ErrNotFound.
func (r *UserTokenRepository) Spend(ctx context.Context, purpose string, tokenHash []byte, now time.Time) (ports.UserToken, error) {
	var rows []userTokenRow
	err := r.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("spend user token", db.Raw(`DELETE FROM user_tokens WHERE purpose = ? AND token_hash = ? AND expires_at > ?
			RETURNING token_hash, purpose, user_id, data, expires_at`, purpose, tokenHash, toMillis(now)).Scan(&rows).Error)
	})
	if err != nil {
		return ports.UserToken{}, err
	}
	if len(rows) == 0 {
		return ports.UserToken{}, domain.ErrNotFound
	}
	return rows[0].toPort(), nil
}

// ForUser returns the user's unexpired token of the purpose, or domain.ErrNotFound.
func (r *UserTokenRepository) ForUser(ctx context.Context, purpose, userID string, now time.Time) (ports.UserToken, error) {
	var row userTokenRow
	err := r.db.read(ctx).Where("purpose = ? AND user_id = ? AND expires_at > ?", purpose, userID, toMillis(now)).
		Order("expires_at DESC").Take(&row).Error
	if err != nil {
		return ports.UserToken{}, mapErr("find user token", err)
	}
	return row.toPort(), nil
}
