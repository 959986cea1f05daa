package persistence

import (
	"context"
	"runtime"
	"strings"
	"sync"

	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// ListOldestFirst returns up to q.Limit submissions of the form, oldest first (submitted_at,
// id), strictly after q.After and strictly between the time bounds. The form's
// (form_id, submitted_at, id) index serves it read backwards, so each batch is one index range.
//
// Exports read every submission of a form through it, so it skips gorm: the statement goes to
// database/sql directly and rows.Scan fills the four columns that vary (gorm's reflective
// scan cost more than SQLite's own work), then the batch is opened on every CPU.
func (r *SubmissionRepository) ListOldestFirst(ctx context.Context, workspaceID, formID string, q ports.OldestFirst) ([]*submission.Submission, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	var sb strings.Builder
	sb.WriteString("SELECT id, submitted_at, updated_at, sealed FROM submissions WHERE form_id = ? AND workspace_id = ?")
	args := make([]any, 0, 7)
	args = append(args, formID, workspaceID)
	if q.CreatedAfter != nil {
		sb.WriteString(" AND submitted_at > ?")
		args = append(args, floorMillis(*q.CreatedAfter))
	}
	if q.CreatedBefore != nil {
		sb.WriteString(" AND submitted_at < ?")
		args = append(args, ceilMillis(*q.CreatedBefore))
	}
	if q.After != nil {
		sb.WriteString(" AND (submitted_at, id) > (?, ?)")
		args = append(args, toMillis(q.After.CreatedAt), q.After.ID)
	}
	sb.WriteString(" ORDER BY submitted_at, id LIMIT ?")
	args = append(args, q.Limit)
	rows, err := r.db.sqlDB.QueryContext(ctx, r.db.rebind(sb.String()), args...)
	if err != nil {
		return nil, mapErr("list submissions oldest first", err)
	}
	defer rows.Close()
	batch := make([]submissionRow, 0, q.Limit)
	for rows.Next() {
		row := submissionRow{WorkspaceID: workspaceID, FormID: formID}
		if err := rows.Scan(&row.ID, &row.SubmittedAt, &row.UpdatedAt, &row.Sealed); err != nil {
			return nil, mapErr("list submissions oldest first", err)
		}
		batch = append(batch, row)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr("list submissions oldest first", err)
	}
	return r.openAll(ctx, batch)
}

// openAll decrypts and decodes rows on every CPU: for a large batch that is most of the work.
func (r *SubmissionRepository) openAll(ctx context.Context, rows []submissionRow) ([]*submission.Submission, error) {
	out := make([]*submission.Submission, len(rows))
	workers := min(runtime.GOMAXPROCS(0), len(rows)/64+1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(rows); i += workers {
				s, err := r.open(ctx, rows[i])
				if err != nil {
					errs[w] = err
					return
				}
				out[i] = s
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
