package ports

import (
	"context"
	"time"

	"github.com/formward/formward/domain/submission"
)

// OldestFirst asks for at most Limit of a form's submissions in keyset order, oldest first by
// (submitted_at, id), strictly after After and strictly between the time bounds.
type OldestFirst struct {
	Limit         int
	After         *Position
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// IDs, when not empty, keeps only the submissions with these IDs.
	IDs []string
}

// SubmissionScanner reads all of a form's submissions in batches, oldest first, for exports:
// the caller keeps only one batch in memory at a time.
type SubmissionScanner interface {
	// ListOldestFirst returns the next batch; fewer than q.Limit rows means the end.
	ListOldestFirst(ctx context.Context, workspaceID, formID string, q OldestFirst) ([]*submission.Submission, error)
}
