package persistence

import (
	"context"
	"time"
)

// ObserveGroupCommits calls fn with the size of every group-commit batch written from now on
// (for metrics); nil stops it. fn runs on the committer: it must be quick.
func (d *DB) ObserveGroupCommits(fn func(size int)) {
	if fn == nil {
		d.batchObserver.Store(nil)
		return
	}
	d.batchObserver.Store(&fn)
}

func (d *DB) observeBatch(size int) {
	if fn := d.batchObserver.Load(); fn != nil {
		(*fn)(size)
	}
}

// OutboxBacklog counts the unpublished outbox events and returns when the oldest occurred
// (zero when there is none). Both read the partial index of unpublished rows.
func (d *DB) OutboxBacklog(ctx context.Context) (pending int64, oldest time.Time, err error) {
	if err := d.read(ctx).Raw("SELECT COUNT(*) FROM outbox WHERE published_at IS NULL").Scan(&pending).Error; err != nil {
		return 0, time.Time{}, mapErr("count outbox", err)
	}
	if pending == 0 {
		return 0, time.Time{}, nil
	}
	var created []int64
	if err := d.read(ctx).Raw("SELECT created_at FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT 1").Scan(&created).Error; err != nil {
		return 0, time.Time{}, mapErr("read outbox", err)
	}
	if len(created) == 0 {
		return pending, time.Time{}, nil
	}
	return pending, fromMillis(created[0]), nil
}

// The due counts name the predicates of the partial indexes deliveries_due_idx and
// runs_due_idx word for word: SQLite uses a partial index only for a query that repeats its
// WHERE terms.
const (
	deliveriesDueSQL = "SELECT COUNT(*) AS n, MIN(next_attempt_at) AS oldest FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ?"
	runsDueSQL       = "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running') AND next_attempt_at <= ?"
)

// DeliveriesDue counts the deliveries due at now and not yet attempted (pending, their next
// attempt time reached; an engine's claim moves that time to the end of its lease, so one in
// flight is not counted) and returns the earliest of their due times (zero when none). One read
// of the partial index of pending deliveries: the worker's backlog as the database sees it,
// whether or not a worker runs.
func (d *DB) DeliveriesDue(ctx context.Context, now time.Time) (due int64, oldest time.Time, err error) {
	var row struct {
		N      int64
		Oldest *int64
	}
	if err := d.read(ctx).Raw(deliveriesDueSQL, toMillis(now)).Scan(&row).Error; err != nil {
		return 0, time.Time{}, mapErr("count due deliveries", err)
	}
	if row.N == 0 || row.Oldest == nil {
		return 0, time.Time{}, nil
	}
	return row.N, fromMillis(*row.Oldest), nil
}

// RunsDue counts the runs (workflows and the form notifications) due at now and not claimed by
// an engine, from the partial index of unfinished runs.
func (d *DB) RunsDue(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	if err := d.read(ctx).Raw(runsDueSQL, toMillis(now)).Scan(&n).Error; err != nil {
		return 0, mapErr("count due runs", err)
	}
	return n, nil
}
