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
// database/sql directly and rows.Scan fills the five columns that vary (gorm's reflective
// scan cost more than SQLite's own work), and rows are opened on every CPU while the next
// ones are scanned.
func (r *SubmissionRepository) ListOldestFirst(ctx context.Context, workspaceID, formID string, q ports.OldestFirst) ([]*submission.Submission, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	var sb strings.Builder
	sb.WriteString("SELECT id, submitted_at, updated_at, sealed, form_version FROM submissions WHERE form_id = ? AND workspace_id = ?")
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
	if len(q.IDs) > 0 {
		sb.WriteString(" AND id IN (?" + strings.Repeat(", ?", len(q.IDs)-1) + ")")
		for _, id := range q.IDs {
			args = append(args, id)
		}
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
	// Rows are opened (decrypted and decoded) on every CPU while the next ones are scanned, in
	// chunks handed to the workers in order.
	o := newOpener(ctx, r)
	defer o.stop()
	chunk := make([]submissionRow, 0, openChunk)
	for rows.Next() {
		row := submissionRow{WorkspaceID: workspaceID, FormID: formID}
		if err := rows.Scan(&row.ID, &row.SubmittedAt, &row.UpdatedAt, &row.Sealed, &row.FormVersion); err != nil {
			return nil, mapErr("list submissions oldest first", err)
		}
		if chunk = append(chunk, row); len(chunk) == openChunk {
			o.open(chunk)
			chunk = make([]submissionRow, 0, openChunk)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr("list submissions oldest first", err)
	}
	if len(chunk) > 0 {
		o.open(chunk)
	}
	return o.wait()
}

// openChunk is how many scanned rows a worker opens at a time.
const openChunk = 64

// opener opens chunks of rows on runtime.GOMAXPROCS workers, started on the first chunk.
type opener struct {
	r       *SubmissionRepository
	ctx     context.Context
	work    chan *openedChunk
	chunks  []*openedChunk
	wg      sync.WaitGroup
	started bool
	stopped bool
}

type openedChunk struct {
	rows []submissionRow
	out  []*submission.Submission
	err  error
}

func newOpener(ctx context.Context, r *SubmissionRepository) *opener {
	return &opener{r: r, ctx: ctx}
}

func (o *opener) open(rows []submissionRow) {
	if !o.started {
		o.started = true
		workers := runtime.GOMAXPROCS(0)
		o.work = make(chan *openedChunk, 2*workers)
		for range workers {
			o.wg.Add(1)
			go func() {
				defer o.wg.Done()
				for c := range o.work {
					c.out = make([]*submission.Submission, len(c.rows))
					for i := range c.rows {
						s, err := o.r.open(o.ctx, c.rows[i])
						if err != nil {
							c.err = err
							break
						}
						c.out[i] = s
					}
					c.rows = nil
				}
			}()
		}
	}
	c := &openedChunk{rows: rows}
	o.chunks = append(o.chunks, c)
	o.work <- c
}

// stop ends the workers (after the chunks given to them); wait and stop may both run.
func (o *opener) stop() {
	if o.started && !o.stopped {
		o.stopped = true
		close(o.work)
		o.wg.Wait()
	}
}

// wait returns every opened submission in the order the rows came, or the first error.
func (o *opener) wait() ([]*submission.Submission, error) {
	o.stop()
	n := 0
	for _, c := range o.chunks {
		if c.err != nil {
			return nil, c.err
		}
		n += len(c.out)
	}
	out := make([]*submission.Submission, 0, n)
	for _, c := range o.chunks {
		out = append(out, c.out...)
	}
	return out, nil
}
