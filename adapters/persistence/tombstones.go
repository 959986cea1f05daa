package persistence

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/ports"
)

// TombstoneRepository is the database's own copy of the tombstones (the tombstones table): the
// deleting transactions write rows, the backup adapter copies them to the log beside the
// backups and then removes them.
type TombstoneRepository struct{ db *DB }

var _ ports.TombstoneRepository = (*TombstoneRepository)(nil)

// NewTombstoneRepository returns the repository.
func NewTombstoneRepository(db *DB) *TombstoneRepository { return &TombstoneRepository{db: db} }

// A tombstone row names one or more things of one kind and workspace deleted at the same time:
// ids is the JSON array of their IDs (a retention batch writes one row, not a row a submission).
type tombstoneRow struct {
	Seq         int64
	Kind        string
	IDs         string
	WorkspaceID string
	DeletedAt   int64
}

// tombstonesWritten is the context key of the flag a transaction run by DB.tx raises when it
// writes tombstones, so that their commit wakes the shipper.
type tombstonesWritten struct{}

// TombstonesRecorded is signalled after each commit that recorded tombstones: the shipper
// copies them to the log at once rather than at its next tick.
func (d *DB) TombstonesRecorded() <-chan struct{} { return d.tombstoned }

func (d *DB) noteTombstones() {
	select {
	case d.tombstoned <- struct{}{}:
	default:
	}
}

// writeTombstones inserts tombstones inside the caller's transaction (one run by DB.tx), so a
// tombstone exists exactly when the deletion it records does. A zero DeletedAt means now (the
// wall clock, which a restore compares with the backup's time: leave it zero). Every deletion
// in this package (and the retention and privacy deletions) calls it in its transaction.
func writeTombstones(tx *gorm.DB, ts []ports.Tombstone) error {
	if len(ts) == 0 {
		return nil
	}
	markTombstones(tx)
	now := time.Now()
	for chunk := range slices.Chunk(ts, 200) {
		var sb strings.Builder
		sb.WriteString("INSERT INTO tombstones (kind, ids, workspace_id, deleted_at) VALUES ")
		args := make([]any, 0, len(chunk)*4)
		for i, t := range chunk {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(?,?,?,?)")
			at := t.DeletedAt
			if at.IsZero() {
				at = now
			}
			args = append(args, string(t.Kind), jsonIDs([]string{t.ID}), t.WorkspaceID, toMillis(at))
		}
		if err := tx.Exec(sb.String(), args...).Error; err != nil {
			return mapErr("write tombstones", err)
		}
	}
	return nil
}

// writeTombstoneList is writeTombstones for many IDs of one kind and workspace, deleted now: one
// row naming them all.
func writeTombstoneList(tx *gorm.DB, kind ports.TombstoneKind, workspaceID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	markTombstones(tx)
	err := tx.Exec("INSERT INTO tombstones (kind, ids, workspace_id, deleted_at) VALUES (?, ?, ?, ?)",
		string(kind), jsonIDs(ids), workspaceID, toMillis(time.Now())).Error
	return mapErr("write tombstones", err)
}

// writeSubmissionTombstones records a tombstone for every submission of the form still in the
// database, in the caller's transaction (before the form's deletion cascades to them): a row
// each, since a form may hold any number.
func writeSubmissionTombstones(tx *gorm.DB, workspaceID, formID string, at time.Time) error {
	markTombstones(tx)
	list := "json_array(id)"
	if tx.Dialector.Name() == DialectPostgres {
		list = "json_build_array(id)::text"
	}
	err := tx.Exec(`INSERT INTO tombstones (kind, ids, workspace_id, deleted_at)
		SELECT ?, `+list+`, workspace_id, ? FROM submissions WHERE workspace_id = ? AND form_id = ?`,
		string(ports.TombstoneSubmission), toMillis(at), workspaceID, formID).Error
	return mapErr("write submission tombstones", err)
}

func markTombstones(tx *gorm.DB) {
	if tx.Statement != nil && tx.Statement.Context != nil {
		if wrote, ok := tx.Statement.Context.Value(tombstonesWritten{}).(*atomic.Bool); ok {
			wrote.Store(true)
		}
	}
}

// Record stores tombstones in their own transaction.
func (r *TombstoneRepository) Record(ctx context.Context, ts []ports.Tombstone) error {
	if len(ts) == 0 {
		return nil
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error { return writeTombstones(tx, ts) })
}

// Pending returns the tombstones not yet copied to the log, oldest first: those of the oldest
// rows, row by row, until at least limit (or all there are).
func (r *TombstoneRepository) Pending(ctx context.Context, limit int) ([]ports.PendingTombstone, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := r.db.read(ctx).Raw("SELECT seq, kind, ids, workspace_id, deleted_at FROM tombstones ORDER BY seq LIMIT ?", limit).Rows()
	if err != nil {
		return nil, mapErr("read tombstones", err)
	}
	defer func() { _ = rows.Close() }()
	var out []ports.PendingTombstone
	for len(out) < limit && rows.Next() {
		var row tombstoneRow
		if err := rows.Scan(&row.Seq, &row.Kind, &row.IDs, &row.WorkspaceID, &row.DeletedAt); err != nil {
			return nil, mapErr("read tombstones", err)
		}
		var ids []string
		if err := jsoncodec.Unmarshal([]byte(row.IDs), &ids); err != nil {
			return nil, fmt.Errorf("read tombstones: row %d: %w", row.Seq, err)
		}
		for _, id := range ids {
			out = append(out, ports.PendingTombstone{Seq: row.Seq, Tombstone: ports.Tombstone{
				Kind: ports.TombstoneKind(row.Kind), ID: id, WorkspaceID: row.WorkspaceID, DeletedAt: fromMillis(row.DeletedAt)}})
		}
	}
	return out, mapErr("read tombstones", rows.Err())
}

// Shipped removes tombstones the log now holds, in one transaction (one commit, however many
// chunks).
func (r *TombstoneRepository) Shipped(ctx context.Context, seqs []int64) error {
	if len(seqs) == 0 {
		return nil
	}
	seqs = slices.Compact(slices.Sorted(slices.Values(seqs))) // a row's tombstones share its seq
	return r.db.tx(ctx, func(db *gorm.DB) error {
		for chunk := range slices.Chunk(seqs, 500) {
			if err := db.Exec("DELETE FROM tombstones WHERE seq IN ?", chunk).Error; err != nil {
				return mapErr("remove shipped tombstones", err)
			}
		}
		return nil
	})
}

// workspaceDataTables hold a workspace's data, deleted when a workspace tombstone is
// re-applied (stored idempotent responses too: they may repeat content); what depends on them
// (deliveries, form counters, email keys) cascades.
var workspaceDataTables = []string{"submissions", "webhooks", "workflows", "runs", "outbox", "idempotency_keys", "forms"}

// Apply deletes whatever the tombstones name that the database still holds, in batches of
// one transaction each, without writing new tombstones.
func (r *TombstoneRepository) Apply(ctx context.Context, ts []ports.Tombstone) (ports.TombstoneCounts, error) {
	var total ports.TombstoneCounts
	for chunk := range slices.Chunk(ts, 500) {
		var counts ports.TombstoneCounts
		err := r.db.tx(ctx, func(tx *gorm.DB) error {
			counts = ports.TombstoneCounts{}
			for _, t := range chunk {
				n, err := applyTombstone(tx, t)
				if err != nil {
					return err
				}
				switch t.Kind {
				case ports.TombstoneSubmission:
					counts.Submissions += n
				case ports.TombstoneForm:
					counts.Forms += n
				case ports.TombstoneWorkspace:
					counts.Workspaces += n
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total.Submissions += counts.Submissions
		total.Forms += counts.Forms
		total.Workspaces += counts.Workspaces
	}
	return total, nil
}

// applyTombstone deletes what one tombstone names and returns 1 when something was still there.
func applyTombstone(tx *gorm.DB, t ports.Tombstone) (int64, error) {
	switch t.Kind {
	case ports.TombstoneSubmission:
		var formIDs []string
		if err := tx.Raw("SELECT form_id FROM submissions WHERE workspace_id = ? AND id = ?", t.WorkspaceID, t.ID).
			Scan(&formIDs).Error; err != nil {
			return 0, mapErr("find tombstoned submission", err)
		}
		if len(formIDs) == 0 {
			return 0, nil
		}
		if err := tx.Exec("DELETE FROM submissions WHERE workspace_id = ? AND id = ?", t.WorkspaceID, t.ID).Error; err != nil {
			return 0, mapErr("delete tombstoned submission", err)
		}
		if err := addCounts(tx, 0, map[string]int64{formIDs[0]: -1}); err != nil {
			return 0, mapErr("count tombstoned submission", err)
		}
		if err := forgetResponses(tx, t.WorkspaceID, []string{t.ID}, jsonIDs([]string{t.ID})); err != nil {
			return 0, err
		}
		if err := forgetEvents(tx, t.WorkspaceID, []string{t.ID}, jsonIDs([]string{t.ID}), time.Now()); err != nil {
			return 0, err
		}
		return 1, nil
	case ports.TombstoneForm:
		res := tx.Exec("DELETE FROM forms WHERE workspace_id = ? AND id = ?", t.WorkspaceID, t.ID)
		if res.Error != nil {
			return 0, mapErr("delete tombstoned form", res.Error)
		}
		for _, table := range []string{"submissions", "webhooks", "workflows", "runs", "outbox", "drafts"} {
			if err := tx.Exec("DELETE FROM "+table+" WHERE workspace_id = ? AND form_id = ?", t.WorkspaceID, t.ID).Error; err != nil {
				return 0, mapErr("delete tombstoned form's "+table, err)
			}
		}
		if err := tx.Exec("DELETE FROM form_counters WHERE form_id = ?", t.ID).Error; err != nil {
			return 0, mapErr("delete tombstoned form's counters", err)
		}
		if err := forgetOrphanedResponses(tx, t.WorkspaceID); err != nil {
			return 0, err
		}
		return min(res.RowsAffected, 1), nil
	case ports.TombstoneWorkspace:
		var n int64
		for _, table := range workspaceDataTables {
			res := tx.Exec("DELETE FROM "+table+" WHERE workspace_id = ?", t.WorkspaceID)
			if res.Error != nil {
				return 0, mapErr("delete tombstoned workspace's "+table, res.Error)
			}
			n += res.RowsAffected
		}
		return min(n, 1), nil
	default:
		return 0, fmt.Errorf("apply tombstone: unknown kind %q", t.Kind)
	}
}
