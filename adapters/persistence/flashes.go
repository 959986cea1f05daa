package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// FlashRepository is the flashes table: what a dashboard page shows once. The payload arrives
// sealed and is stored as it is.
type FlashRepository struct{ db *DB }

var _ ports.FlashRepository = (*FlashRepository)(nil)

// NewFlashRepository returns the flash repository.
func NewFlashRepository(db *DB) *FlashRepository { return &FlashRepository{db: db} }

type flashRow struct {
	ID        string `gorm:"column:id;primaryKey"`
	SessionID string `gorm:"column:session_id"`
	Kind      string `gorm:"column:kind"`
	Sealed    []byte `gorm:"column:sealed"`
	CreatedAt int64  `gorm:"column:created_at"`
	ExpiresAt int64  `gorm:"column:expires_at"`
}

func (flashRow) TableName() string { return "flashes" }

// Put stores the flash.
func (r *FlashRepository) Put(ctx context.Context, f ports.Flash) error {
	return r.db.write(ctx, func(db *gorm.DB) error {
		err := db.Exec("INSERT INTO flashes (id, session_id, kind, sealed, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
			f.ID, f.SessionID, f.Kind, f.Sealed, toMillis(f.CreatedAt), toMillis(f.ExpiresAt)).Error
		return mapErr("put flash", err)
	})
}

// Take deletes the unexpired flash and returns it in one statement: of concurrent calls one
// gets the flash, the others domain.ErrNotFound.
func (r *FlashRepository) Take(ctx context.Context, id, sessionID, kind string, now time.Time) (ports.Flash, error) {
	var rows []flashRow
	err := r.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("take flash", db.Raw(`DELETE FROM flashes WHERE id = ? AND session_id = ? AND kind = ? AND expires_at > ?
			RETURNING id, session_id, kind, sealed, created_at, expires_at`, id, sessionID, kind, toMillis(now)).Scan(&rows).Error)
	})
	if err != nil {
		return ports.Flash{}, err
	}
	if len(rows) == 0 {
		return ports.Flash{}, domain.ErrNotFound
	}
	row := rows[0]
	return ports.Flash{ID: row.ID, SessionID: row.SessionID, Kind: row.Kind, Sealed: row.Sealed,
		CreatedAt: fromMillis(row.CreatedAt), ExpiresAt: fromMillis(row.ExpiresAt)}, nil
}

// Purge deletes the flashes expired at now.
func (r *FlashRepository) Purge(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := r.db.write(ctx, func(db *gorm.DB) error {
		res := db.Exec("DELETE FROM flashes WHERE expires_at <= ?", toMillis(now))
		n = res.RowsAffected
		return mapErr("purge flashes", res.Error)
	})
	return n, err
}
