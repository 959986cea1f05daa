package persistence

import (
	"context"

	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// UsageReader counts what a workspace holds in the database: forms, submissions (the sum of
// the forms' counter shards) and members. Uploaded files live in the object store, which
// measures them; StorageBytes is left zero here.
type UsageReader struct{ db *DB }

var _ ports.UsageReader = (*UsageReader)(nil)

// NewUsageReader returns the usage reader.
func NewUsageReader(db *DB) *UsageReader { return &UsageReader{db: db} }

// Usage returns the workspace's counts; an unknown workspace counts zero everywhere.
func (u *UsageReader) Usage(ctx context.Context, workspaceID string) (workspace.Usage, error) {
	var row struct {
		Forms       int64 `gorm:"column:forms"`
		Submissions int64 `gorm:"column:submissions"`
		Members     int64 `gorm:"column:members"`
	}
	err := u.db.read(ctx).Raw(`SELECT
			(SELECT COUNT(*) FROM forms WHERE workspace_id = ?) AS forms,
			(SELECT CAST(COALESCE(SUM(c.n), 0) AS BIGINT) FROM form_counters c JOIN forms f ON f.id = c.form_id WHERE f.workspace_id = ?) AS submissions,
			(SELECT COUNT(*) FROM memberships WHERE workspace_id = ?) AS members`,
		workspaceID, workspaceID, workspaceID).Scan(&row).Error
	if err != nil {
		return workspace.Usage{}, mapErr("measure workspace usage", err)
	}
	return workspace.Usage{Forms: row.Forms, Submissions: row.Submissions, Members: row.Members}, nil
}
