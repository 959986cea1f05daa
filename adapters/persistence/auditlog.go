package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

// AuditLog reads the audit log and appends the events that record no other change. Events of a
// change are written by that change's repository, in its transaction (writeAudit).
type AuditLog struct{ db *DB }

var _ ports.AuditLog = (*AuditLog)(nil)

// NewAuditLog returns the audit log.
func NewAuditLog(db *DB) *AuditLog { return &AuditLog{db: db} }

// Append writes the events in one transaction.
func (l *AuditLog) Append(ctx context.Context, events ...audit.Event) error {
	if len(events) == 0 {
		return nil
	}
	return l.db.tx(ctx, func(tx *gorm.DB) error { return writeAudit(tx, events) })
}

// List returns one page of the workspace's events newest first, filtered by action and by
// creation time (both bounds exclusive).
func (l *AuditLog) List(ctx context.Context, workspaceID string, q ports.AuditQuery) ([]audit.Event, error) {
	db := l.db.read(ctx).Where("workspace_id = ?", workspaceID)
	if q.Action != "" {
		db = db.Where("action = ?", q.Action)
	}
	if q.ActorID != "" {
		db = db.Where("actor_id = ?", q.ActorID)
	}
	if q.CreatedAfter != nil {
		db = db.Where("created_at > ?", toMillis(*q.CreatedAfter))
	}
	if q.CreatedBefore != nil {
		db = db.Where("created_at < ?", toMillis(*q.CreatedBefore))
	}
	rows, err := newestFirst[auditRow](db, q.Page, "created_at", "audit events")
	if err != nil {
		return nil, err
	}
	out := make([]audit.Event, len(rows))
	for i, row := range rows {
		out[i] = row.toDomain()
	}
	return out, nil
}

// Purge removes the events created before the time and returns how many.
func (l *AuditLog) Purge(ctx context.Context, before time.Time) (int64, error) {
	return l.db.execCount(ctx, "purge audit events", "DELETE FROM audit_events WHERE created_at < ?", toMillis(before))
}
