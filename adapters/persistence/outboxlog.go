package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

var _ ports.EventLog = (*Outbox)(nil)

// outboxClockSkew is how far an outbox row's created_at may run behind a row of a lower seq:
// on PostgreSQL seq is taken at insert and rows of concurrent transactions interleave. A
// range's seq bounds are looked up this much wider, and its rows filtered by time.
const outboxClockSkew = time.Minute

// Range returns the seq bounds of the rows that may hold events of [since, until).
func (o *Outbox) Range(ctx context.Context, since, until time.Time) (from, to int64, err error) {
	return outboxRange(o.db.read(ctx), since, until)
}

func outboxRange(db *gorm.DB, since, until time.Time) (from, to int64, err error) {
	if from, err = seqAt(db, toMillis(since.Add(-outboxClockSkew))); err != nil {
		return 0, 0, err
	}
	if to, err = seqAt(db, toMillis(until.Add(outboxClockSkew))); err != nil {
		return 0, 0, err
	}
	return from, to - 1, nil // seqAt is the first row at or after the time: the range ends before it
}

// seqAt is the seq of the first outbox row created at or after ms, found by bisecting seq
// (rows are close to time order); one past the last row when none is that recent. It costs a
// few dozen primary-key lookups instead of an index on created_at, which every capture would
// pay for.
func seqAt(db *gorm.DB, ms int64) (int64, error) {
	var bounds struct{ Lo, Hi *int64 }
	if err := db.Raw("SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM outbox").Scan(&bounds).Error; err != nil {
		return 0, mapErr("find outbox range", err)
	}
	if bounds.Lo == nil {
		return 1, nil
	}
	lo, hi := *bounds.Lo, *bounds.Hi+1 // the answer is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		var at []int64
		if err := db.Raw("SELECT created_at FROM outbox WHERE seq >= ? ORDER BY seq LIMIT 1", mid).Scan(&at).Error; err != nil {
			return 0, mapErr("find outbox range", err)
		}
		if len(at) == 0 || at[0] >= ms {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// Read returns the events after afterSeq up to toSeq that pass f, and the last seq walked.
func (o *Outbox) Read(ctx context.Context, afterSeq, toSeq int64, limit int, f ports.EventFilter) ([]ports.OutboxRecord, int64, error) {
	var heads []struct {
		Seq         int64
		WorkspaceID string
		Type        string
		FormID      string
		CreatedAt   int64
	}
	// The walk reads no payload but of the rows that pass: the outbox holds every workspace's
	// events.
	err := o.db.read(ctx).Table("outbox").Select("seq, workspace_id, type, form_id, created_at").
		Where("seq > ? AND seq <= ?", afterSeq, toSeq).Order("seq").Limit(limit).Scan(&heads).Error
	if err != nil {
		return nil, 0, mapErr("walk outbox", err)
	}
	cursor := toSeq
	if len(heads) == limit {
		cursor = heads[len(heads)-1].Seq
	}
	var seqs []int64
	for _, h := range heads {
		e := event.Event{Type: event.Type(h.Type), WorkspaceID: h.WorkspaceID, FormID: h.FormID, OccurredAt: fromMillis(h.CreatedAt)}
		if f.Matches(e) {
			seqs = append(seqs, h.Seq)
		}
	}
	if len(seqs) == 0 {
		return nil, cursor, nil
	}
	var rows []outboxRow
	if err := o.db.read(ctx).Where("seq IN ? AND length(payload) > 0", seqs).Order("seq").Find(&rows).Error; err != nil {
		return nil, 0, mapErr("read outbox", err)
	}
	out, err := o.records(ctx, rows)
	return out, cursor, err
}
