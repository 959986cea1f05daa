package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// idempotencyTTL is how long a key is remembered; older rows count as absent.
const idempotencyTTL = 24 * time.Hour

// IdempotencyStore remembers the first response to each Idempotency-Key; response bodies can
// hold submitted values, so they are sealed.
type IdempotencyStore struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the store; cipher seals stored response bodies.
func NewIdempotencyStore(db *DB, cipher ports.Cipher) *IdempotencyStore {
	return &IdempotencyStore{db: db, cipher: cipher}
}

// Reserve claims the key by inserting its row. When the row exists: an entry older than 24
// hours is replaced (the caller owns the key); the same fingerprint with a stored response
// returns that response; anything else (another body, or the first request still running)
// gives ports.ErrIdempotencyKeyReused. (nil, nil) means the caller owns the key now.
func (s *IdempotencyStore) Reserve(ctx context.Context, workspaceID, scope, key string, fingerprint []byte, now time.Time) (*ports.StoredResponse, error) {
	nowMS := toMillis(now)
	for attempt := 0; attempt < 3; attempt++ {
		var inserted int64
		err := s.db.write(ctx, func(db *gorm.DB) error {
			res := db.Exec(`INSERT INTO idempotency_keys (workspace_id, scope, key, fingerprint, created_at)
				VALUES (?, ?, ?, ?, ?) ON CONFLICT (workspace_id, scope, key) DO NOTHING`,
				workspaceID, scope, key, fingerprint, nowMS)
			inserted = res.RowsAffected
			return res.Error
		})
		if err != nil {
			return nil, mapErr("reserve idempotency key", err)
		}
		if inserted == 1 {
			return nil, nil
		}
		var row idempotencyRow
		err = s.db.read(ctx).Where("workspace_id = ? AND scope = ? AND key = ?", workspaceID, scope, key).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue // released or purged in between: try to insert again
		}
		if err != nil {
			return nil, mapErr("read idempotency key", err)
		}
		if row.CreatedAt <= nowMS-idempotencyTTL.Milliseconds() {
			// Expired: take it over, unless someone else just did (compare-and-swap on created_at).
			var replaced int64
			err := s.db.write(ctx, func(db *gorm.DB) error {
				res := db.Exec(`UPDATE idempotency_keys SET fingerprint = ?, status = NULL, body = NULL, created_at = ?
					WHERE workspace_id = ? AND scope = ? AND key = ? AND created_at = ?`,
					fingerprint, nowMS, workspaceID, scope, key, row.CreatedAt)
				replaced = res.RowsAffected
				return res.Error
			})
			if err != nil {
				return nil, mapErr("replace idempotency key", err)
			}
			if replaced == 1 {
				return nil, nil
			}
			continue
		}
		if !bytes.Equal(row.Fingerprint, fingerprint) || row.Status == nil {
			return nil, ports.ErrIdempotencyKeyReused
		}
		var body []byte
		if len(row.Body) > 0 {
			body, err = s.cipher.Open(ctx, workspaceID, row.Body, idempotencyAAD(scope, key))
			if err != nil {
				return nil, fmt.Errorf("open idempotent response: %w", err)
			}
		}
		return &ports.StoredResponse{Status: *row.Status, Body: body}, nil
	}
	return nil, ports.ErrIdempotencyKeyReused
}

// Complete stores the response of a reserved key; a key not reserved gives domain.ErrNotFound.
func (s *IdempotencyStore) Complete(ctx context.Context, workspaceID, scope, key string, resp ports.StoredResponse) error {
	sealed, err := s.cipher.Seal(ctx, workspaceID, resp.Body, idempotencyAAD(scope, key))
	if err != nil {
		return fmt.Errorf("seal idempotent response: %w", err)
	}
	return s.db.write(ctx, func(db *gorm.DB) error {
		res := db.Exec("UPDATE idempotency_keys SET status = ?, body = ? WHERE workspace_id = ? AND scope = ? AND key = ?",
			resp.Status, sealed, workspaceID, scope, key)
		if res.Error != nil {
			return mapErr("complete idempotency key", res.Error)
		}
		if res.RowsAffected == 0 {
			return domain.ErrNotFound
		}
		return nil
	})
}

// Release forgets a reservation still in progress, so the request can be retried. A completed
// key or an unknown one is left alone.
func (s *IdempotencyStore) Release(ctx context.Context, workspaceID, scope, key string) error {
	return s.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("release idempotency key", db.Exec(
			"DELETE FROM idempotency_keys WHERE workspace_id = ? AND scope = ? AND key = ? AND status IS NULL",
			workspaceID, scope, key).Error)
	})
}

// Purge removes entries created before the given time.
func (s *IdempotencyStore) Purge(ctx context.Context, before time.Time) error {
	return s.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("purge idempotency keys", db.Exec("DELETE FROM idempotency_keys WHERE created_at < ?", toMillis(before)).Error)
	})
}
