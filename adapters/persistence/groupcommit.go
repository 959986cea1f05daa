package persistence

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Group commit: every capture is one INSERT of a submission, one of an outbox row and one
// counter increment, and the cost of a capture is dominated by the commit's fsync. Callers seal
// their rows in parallel, then queue them; each committer takes everything queued (up to
// GroupCommitMax) and writes it in one transaction, so one fsync acknowledges many captures.
// On PostgreSQL several committers keep commits overlapping; each increments its own counter
// shard, so they never wait on each other's counter rows.

// commitTimeout bounds one capture transaction; waiters get its error.
const commitTimeout = 30 * time.Second

// pendingAdd is one sealed submission and its sealed event, waiting for a committer.
type pendingAdd struct {
	ctx   context.Context
	sub   submissionRow
	event sealedEvent
	done  chan error
}

// enqueue hands p to the committers and waits for its commit.
func (d *DB) enqueue(ctx context.Context, p *pendingAdd) error {
	d.closeMu.RLock()
	if d.closed {
		d.closeMu.RUnlock()
		return ErrClosed
	}
	select {
	case d.adds <- p:
	case <-ctx.Done():
		d.closeMu.RUnlock()
		return ctx.Err()
	}
	d.closeMu.RUnlock()
	// Once queued the outcome is decided by the committer (bounded by commitTimeout);
	// waiting for it keeps the answer truthful: nil means durably stored.
	return <-p.done
}

// commitLoop is one committer; shard is its form_counters shard. It ends when the queue is
// closed and drained.
func (d *DB) commitLoop(shard int) {
	defer d.committers.Done()
	batch := make([]*pendingAdd, 0, d.groupMax)
	for first := range d.adds {
		batch = append(batch[:0], first)
	fill:
		for len(batch) < d.groupMax {
			select {
			case p, ok := <-d.adds:
				if !ok {
					break fill
				}
				batch = append(batch, p)
			default:
				break fill
			}
		}
		d.commitBatch(shard, batch)
	}
}

func (d *DB) commitBatch(shard int, batch []*pendingAdd) {
	// Requests that gave up before their turn are answered without writing.
	live := batch[:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.done <- err
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	err := d.writeAdds(shard, live)
	if err == nil {
		for _, p := range live {
			p.done <- nil
		}
		return
	}
	if len(live) == 1 {
		live[0].done <- mapErr("add submission", err)
		return
	}
	// One bad item (a form deleted meanwhile, a reused ID) fails the whole batch; retry each
	// alone so only the bad one fails.
	for _, p := range live {
		p.done <- mapErr("add submission", d.writeAdds(shard, []*pendingAdd{p}))
	}
}

// writeAdds writes the submissions, their events and one counter increment per form in one
// transaction.
func (d *DB) writeAdds(shard int, batch []*pendingAdd) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	return d.tx(ctx, func(tx *gorm.DB) error {
		var sb strings.Builder
		sb.WriteString("INSERT INTO submissions (id, workspace_id, form_id, submitted_at, updated_at, sealed) VALUES ")
		args := make([]any, 0, len(batch)*6)
		events := make([]sealedEvent, 0, len(batch))
		counts := make(map[string]int64)
		for i, p := range batch {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(?,?,?,?,?,?)")
			s := p.sub
			args = append(args, s.ID, s.WorkspaceID, s.FormID, s.SubmittedAt, s.UpdatedAt, s.Sealed)
			events = append(events, p.event)
			counts[s.FormID]++
		}
		if err := tx.Exec(sb.String(), args...).Error; err != nil {
			return fmt.Errorf("insert submissions: %w", err)
		}
		if err := insertEvents(tx, events); err != nil {
			return fmt.Errorf("insert submission events: %w", err)
		}
		if err := addCounts(tx, shard, counts); err != nil {
			return fmt.Errorf("count submissions: %w", err)
		}
		return nil
	})
}

// addCounts adds to the forms' counter rows of one shard with one upsert.
func addCounts(tx *gorm.DB, shard int, counts map[string]int64) error {
	if len(counts) == 0 {
		return nil
	}
	forms := make([]string, 0, len(counts))
	for id := range counts {
		forms = append(forms, id)
	}
	slices.Sort(forms) // a stable lock order
	var sb strings.Builder
	sb.WriteString("INSERT INTO form_counters (form_id, shard, n) VALUES ")
	args := make([]any, 0, len(forms)*3)
	for i, id := range forms {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?,?)")
		args = append(args, id, shard, counts[id])
	}
	sb.WriteString(" ON CONFLICT (form_id, shard) DO UPDATE SET n = form_counters.n + excluded.n")
	return tx.Exec(sb.String(), args...).Error
}
