package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/ports"
)

// SessionRepository stores dashboard sessions, found by the hash of the cookie's token.
type SessionRepository struct{ db *DB }

var _ ports.SessionRepository = (*SessionRepository)(nil)

// NewSessionRepository returns the session repository.
func NewSessionRepository(db *DB) *SessionRepository { return &SessionRepository{db: db} }

// Create stores s; an unknown user gives domain.ErrNotFound.
func (r *SessionRepository) Create(ctx context.Context, s *session.Session) error {
	row := sessionFromDomain(s)
	return r.db.insert(ctx, "create session", &row)
}

// FindByToken returns the session whose token hashes to tokenHash, or domain.ErrNotFound.
func (r *SessionRepository) FindByToken(ctx context.Context, tokenHash []byte) (*session.Session, error) {
	var row sessionRow
	if err := r.db.read(ctx).Where("token_hash = ?", tokenHash).Take(&row).Error; err != nil {
		return nil, mapErr("find session", err)
	}
	return row.toDomain(), nil
}

// Touch moves last_seen_at forward to at (never back) and, when workspaceID is not empty,
// switches the session's workspace. An ended session gives domain.ErrNotFound.
func (r *SessionRepository) Touch(ctx context.Context, id string, at time.Time, workspaceID string) error {
	ms := toMillis(at)
	return r.db.write(ctx, func(db *gorm.DB) error {
		var res *gorm.DB
		if workspaceID == "" {
			res = db.Exec("UPDATE sessions SET last_seen_at = CASE WHEN last_seen_at < ? THEN ? ELSE last_seen_at END WHERE id = ?", ms, ms, id)
		} else {
			res = db.Exec("UPDATE sessions SET last_seen_at = CASE WHEN last_seen_at < ? THEN ? ELSE last_seen_at END, workspace_id = ? WHERE id = ?", ms, ms, workspaceID, id)
		}
		return changedRow("touch session", res)
	})
}

// Delete ends one session; ending one already gone is not an error.
func (r *SessionRepository) Delete(ctx context.Context, id string) error {
	return r.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("delete session", db.Exec("DELETE FROM sessions WHERE id = ?", id).Error)
	})
}

// DeleteForUser ends every session of the user except keepID (empty: all of them).
func (r *SessionRepository) DeleteForUser(ctx context.Context, userID, keepID string) error {
	return r.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("delete user's sessions", db.Exec("DELETE FROM sessions WHERE user_id = ? AND id <> ?", userID, keepID).Error)
	})
}

// Purge removes the sessions no longer valid at now: idle for IdleTimeout, or older than
// AbsoluteTimeout.
func (r *SessionRepository) Purge(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := r.db.write(ctx, func(db *gorm.DB) error {
		res := db.Exec("DELETE FROM sessions WHERE last_seen_at <= ? OR created_at <= ?",
			toMillis(now.Add(-session.IdleTimeout)), toMillis(now.Add(-session.AbsoluteTimeout)))
		n = res.RowsAffected
		return mapErr("purge sessions", res.Error)
	})
	return n, err
}
