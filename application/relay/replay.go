package relay

import (
	"context"
	"fmt"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// ReplayBatch is the most events published at once by a replay or a backfill: the broker
// acknowledges each batch before the next is read.
const ReplayBatch = 500

// ReplayEvents publishes again the retained events of a time range (`formward events replay`).
// Events keep their IDs, so consumers dedupe them as usual.
type ReplayEvents struct {
	Since, Until time.Time
	// FormID, when set, keeps the events of that form only.
	FormID string
	// AfterSeq resumes an interrupted replay after the last seq it reported.
	AfterSeq int64
	// To is where the events go (a Kafka topic whose messages say they are replayed).
	To ports.EventPublisher
	// Progress, when set, hears after each acknowledged batch.
	Progress func(ReplayProgress)
}

// ReplayProgress is how far a replay got: events published and the last seq walked (pass it
// as AfterSeq to resume), out of the range's last seq.
type ReplayProgress struct {
	Published  int
	Seq, ToSeq int64
}

// ReplayEventsHandler replays events.
type ReplayEventsHandler struct {
	log       ports.EventLog
	clock     ports.Clock
	retention time.Duration
}

// NewReplayEventsHandler makes the command; retention is how long published events are kept.
func NewReplayEventsHandler(log ports.EventLog, clock ports.Clock, retention time.Duration) ReplayEventsHandler {
	return ReplayEventsHandler{log: log, clock: clock, retention: retention}
}

// Handle checks the range (within the retention, until after since, not in the future) and
// publishes its events in seq order, per form in the order they happened. On an error it returns
// how far it got: the events up to Seq were acknowledged.
func (h ReplayEventsHandler) Handle(ctx context.Context, cmd ReplayEvents) (ReplayProgress, error) {
	now := h.clock.Now()
	if cmd.Until.IsZero() {
		cmd.Until = now
	}
	if err := checkRange(cmd.Since, cmd.Until, now, h.retention); err != nil {
		return ReplayProgress{}, err
	}
	from, to, err := h.log.Range(ctx, cmd.Since, cmd.Until)
	if err != nil {
		return ReplayProgress{}, err
	}
	p := ReplayProgress{Seq: max(from-1, cmd.AfterSeq), ToSeq: to}
	f := ports.EventFilter{FormID: cmd.FormID, Since: cmd.Since, Until: cmd.Until}
	for p.Seq < to {
		recs, next, err := h.log.Read(ctx, p.Seq, to, ReplayBatch, f)
		if err != nil {
			return p, err
		}
		if err := publish(ctx, cmd.To, recs); err != nil {
			return p, err
		}
		p.Published += len(recs)
		p.Seq = next
		if cmd.Progress != nil {
			cmd.Progress(p)
		}
	}
	return p, nil
}

// checkRange refuses a range the retention may not hold in full, backwards or in the future.
func checkRange(since, until, now time.Time, retention time.Duration) error {
	var vs domain.Violations
	oldest := now.Add(-retention)
	switch {
	case since.IsZero():
		vs.Add("since", "required", "--since is required: the start of the range (RFC 3339)")
	case since.Before(oldest):
		vs.Add("since", "out_of_range", fmt.Sprintf("--since is before the oldest retained event: events are kept for %s (FORMWARD_OUTBOX_RETENTION), so start at %s at the earliest",
			retention, domain.FormatTime(oldest)))
	case !until.After(since):
		vs.Add("until", "out_of_range", "--until must be after --since")
	}
	if until.After(now) {
		vs.Add("until", "out_of_range", "--until is in the future")
	}
	return vs.Err()
}
