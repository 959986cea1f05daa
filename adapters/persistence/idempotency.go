package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// idempotencyTTL is how long a key is remembered; older rows count as absent until Purge
// deletes them.
const idempotencyTTL = ports.IdempotencyWindow

// IdempotencyStore remembers the first response to each Idempotency-Key; response bodies can
// hold submitted values, so they are sealed. A row goes through three states: in progress
// (status NULL, submission_id NULL), completed (status set), and, for a request that created a
// submission since deleted, forgotten (status and body NULL, submission_id kept): every
// deletion of submissions in this package nulls the responses naming them (forgetResponses).
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
// returns that response, and with a forgotten one ports.ErrIdempotentSubmissionDeleted;
// anything else (another body, or the first request still running) gives
// ports.ErrIdempotencyKeyReused. (nil, nil) means the caller owns the key now.
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
				res := db.Exec(`UPDATE idempotency_keys SET fingerprint = ?, status = NULL, body = NULL, submission_id = NULL, created_at = ?
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
		switch {
		case !bytes.Equal(row.Fingerprint, fingerprint):
			return nil, ports.ErrIdempotencyKeyReused
		case row.Status == nil && row.SubmissionID != nil:
			return nil, ports.ErrIdempotentSubmissionDeleted
		case row.Status == nil:
			return nil, ports.ErrIdempotencyKeyReused // the first request is still running
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
// A response that names a submission is stored only while the submission exists: one deleted
// since it was created (before this commits) leaves the key forgotten instead. On PostgreSQL
// the submission's row is locked against deletion (FOR KEY SHARE: updates still go ahead)
// until the commit, so a deletion either commits first (and the response is not stored) or
// waits and then finds the response to delete.
func (s *IdempotencyStore) Complete(ctx context.Context, workspaceID, scope, key string, resp ports.StoredResponse) error {
	sealed, err := s.cipher.Seal(ctx, workspaceID, resp.Body, idempotencyAAD(scope, key))
	if err != nil {
		return fmt.Errorf("seal idempotent response: %w", err)
	}
	const store = "UPDATE idempotency_keys SET status = ?, body = ?, submission_id = ? WHERE workspace_id = ? AND scope = ? AND key = ?"
	if resp.SubmissionID == "" {
		return s.db.write(ctx, func(db *gorm.DB) error {
			return changedRow("complete idempotency key", db.Exec(store, resp.Status, sealed, nil, workspaceID, scope, key))
		})
	}
	return s.db.tx(ctx, func(tx *gorm.DB) error {
		lock := ""
		if s.db.dialect == DialectPostgres {
			lock = " FOR KEY SHARE"
		}
		var live []int
		if err := tx.Raw("SELECT 1 FROM submissions WHERE id = ? AND workspace_id = ?"+lock, resp.SubmissionID, workspaceID).Scan(&live).Error; err != nil {
			return mapErr("find created submission", err)
		}
		if len(live) == 0 {
			return changedRow("complete idempotency key", tx.Exec(store, nil, nil, resp.SubmissionID, workspaceID, scope, key))
		}
		return changedRow("complete idempotency key", tx.Exec(store, resp.Status, sealed, resp.SubmissionID, workspaceID, scope, key))
	})
}

// Release forgets a reservation still in progress, so the request can be retried. A completed
// or forgotten key, or an unknown one, is left alone.
func (s *IdempotencyStore) Release(ctx context.Context, workspaceID, scope, key string) error {
	return s.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("release idempotency key", db.Exec(
			"DELETE FROM idempotency_keys WHERE workspace_id = ? AND scope = ? AND key = ? AND status IS NULL AND submission_id IS NULL",
			workspaceID, scope, key).Error)
	})
}

// forgetResponses deletes, in the caller's transaction, the stored responses of the requests
// that created the workspace's submissions named in ids (list is their jsonIDs): the key and
// its fingerprint stay, so a replay is told the submission was deleted. Call it after the
// submissions' deletion, in the same transaction: on PostgreSQL a Complete holding one of them
// (FOR KEY SHARE) has then committed, and its row is seen. On SQLite one probe of the index over
// the range the IDs span first says whether any row can match (see deleteDependents): most
// submissions were not created with an Idempotency-Key.
func forgetResponses(tx *gorm.DB, workspaceID string, ids []string, list string) error {
	if len(ids) == 0 {
		return nil
	}
	if tx.Dialector.Name() == DialectSQLite {
		var found []int
		if err := tx.Raw(probeResponsesSQL, workspaceID, slices.Min(ids), slices.Max(ids)).Scan(&found).Error; err != nil {
			return mapErr("find idempotent responses", err)
		}
		if len(found) == 0 {
			return nil
		}
	}
	return mapErr("forget idempotent responses", tx.Exec(forgetResponsesSQL(tx), workspaceID, list).Error)
}

// probeResponsesSQL says whether any key of the workspace (first argument) names a submission
// between two IDs: one seek of idempotency_keys_submission_idx.
const probeResponsesSQL = "SELECT 1 FROM idempotency_keys WHERE workspace_id = ? AND submission_id BETWEEN ? AND ? LIMIT 1"

// forgetResponsesSQL nulls the responses of the workspace's keys that name one of a list of
// submission IDs (see idList), found through idempotency_keys_submission_idx.
func forgetResponsesSQL(tx *gorm.DB) string {
	return "UPDATE idempotency_keys SET status = NULL, body = NULL WHERE workspace_id = ? AND submission_id IN (" + idList(tx) + ") AND status IS NOT NULL"
}

// forgetOrphanedResponses deletes, in the caller's transaction, the stored responses of the
// workspace's requests whose submission no longer exists: for deletions that name no IDs (a
// form's submissions, the rest of a workspace's). Call it after the deletion, as
// forgetResponses. It reads the workspace's keys that name a submission (those of the last
// 24 hours and a retention interval, see Purge).
func forgetOrphanedResponses(tx *gorm.DB, workspaceID string) error {
	return mapErr("forget idempotent responses", tx.Exec(forgetOrphanedResponsesSQL, workspaceID).Error)
}

const forgetOrphanedResponsesSQL = `UPDATE idempotency_keys SET status = NULL, body = NULL
	WHERE workspace_id = ? AND submission_id IS NOT NULL AND status IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.id = idempotency_keys.submission_id)`

// Purge removes entries created before the given time, the oldest thousand or so at a time
// (rows created in the same millisecond go together), so that a purge of many rows never holds
// SQLite's one writer for long.
func (s *IdempotencyStore) Purge(ctx context.Context, before time.Time) error {
	const batch = 1000
	end := toMillis(before)
	for {
		var edge []int64
		err := s.db.read(ctx).Raw("SELECT created_at FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT 1 OFFSET ?",
			end, batch-1).Scan(&edge).Error
		if err != nil {
			return mapErr("find idempotency keys to purge", err)
		}
		upTo := end
		if len(edge) == 1 {
			upTo = edge[0] + 1
		}
		err = s.db.write(ctx, func(db *gorm.DB) error {
			return mapErr("purge idempotency keys", db.Exec("DELETE FROM idempotency_keys WHERE created_at < ?", upTo).Error)
		})
		if err != nil || upTo == end {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func idempotencyAAD(scope, key string) []byte { return []byte("idempotency_keys/" + scope + "/" + key) }

type idempotencyRow struct {
	WorkspaceID string `gorm:"column:workspace_id;primaryKey"`
	Scope       string `gorm:"column:scope;primaryKey"`
	Key         string `gorm:"column:key;primaryKey"`
	Fingerprint []byte `gorm:"column:fingerprint"`
	Status      *int   `gorm:"column:status"`
	Body        []byte `gorm:"column:body"`
	CreatedAt   int64  `gorm:"column:created_at"`
	// SubmissionID names the submission the request created; with Status NULL, that its
	// response was deleted with the submission.
	SubmissionID *string `gorm:"column:submission_id"`
}

func (idempotencyRow) TableName() string { return "idempotency_keys" }
