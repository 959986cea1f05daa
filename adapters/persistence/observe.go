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
