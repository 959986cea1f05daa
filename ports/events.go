package ports

import (
	"context"
	"slices"
	"time"

	"github.com/formward/formward/domain/event"
)

// EventPublisher hands outbox events to the event transport (Kafka, or the in-process bus).
type EventPublisher interface {
	// Publish returns nil only when the transport acknowledged every event, so the relay may mark
	// the outbox rows published; on error it publishes the rows again later (at-least-once).
	Publish(ctx context.Context, events []event.Event) error
}

// EventHandler reacts to one event; a non-nil error asks for the event again.
type EventHandler func(ctx context.Context, e event.Event) error

// EventSubscriber delivers events to a handler, in order per form and at least once.
type EventSubscriber interface {
	// Run delivers events to handle and acknowledges an event only after handle returned nil; on
	// an error it delivers the same event again after a backoff, holding back the form's later
	// events. It returns nil when ctx ends, or earlier with an error it cannot recover from.
	Run(ctx context.Context, handle EventHandler) error
}

// EventBatchHandler reacts to several events at once, in order per form; a non-nil error asks
// for all of them again (so a handler must tolerate events it already handled).
type EventBatchHandler func(ctx context.Context, events []event.Event) error

// EventFilter selects retained events: each field left zero selects all.
type EventFilter struct {
	WorkspaceID string
	FormID      string
	Types       []event.Type
	// Since (inclusive) and Until (exclusive) bound when the events happened.
	Since, Until time.Time
}

// Matches reports whether e passes the filter.
func (f EventFilter) Matches(e event.Event) bool {
	return (f.WorkspaceID == "" || f.WorkspaceID == e.WorkspaceID) && (f.FormID == "" || f.FormID == e.FormID) &&
		(len(f.Types) == 0 || slices.Contains(f.Types, e.Type)) &&
		(f.Since.IsZero() || !e.OccurredAt.Before(f.Since)) && (f.Until.IsZero() || e.OccurredAt.Before(f.Until))
}

// EventLog reads the retained events of the outbox (published ones are kept for
// FORMWARD_OUTBOX_RETENTION), for replays: by seq, the order they were written in.
type EventLog interface {
	// Range returns the bounds (inclusive) of the seqs that may hold events of [since, until).
	Range(ctx context.Context, since, until time.Time) (from, to int64, err error)
	// Read returns, in seq order, up to limit events after afterSeq and up to toSeq that pass
	// f, never one of a deleted submission (its payload left with it), and the last seq walked:
	// pass it as afterSeq to go on; it is toSeq at the end.
	Read(ctx context.Context, afterSeq, toSeq int64, limit int, f EventFilter) ([]OutboxRecord, int64, error)
}

// Backfill is the progress of one backfill of snapshot events to a topic.
type Backfill struct {
	ID    string
	Topic string
	// Scope is the form backfilled, or "all".
	Scope string
	// FormID is the form being published ("" before the first); After the last of its
	// submissions the broker acknowledged (nil before the first).
	FormID    string
	After     *Position
	Published int64
	StartedAt time.Time
}

// BackfillStore keeps the progress of backfills, so an interrupted one resumes.
type BackfillStore interface {
	// Running returns the unfinished backfill of topic and scope, or nil.
	Running(ctx context.Context, topic, scope string) (*Backfill, error)
	// Start records a new backfill; one of the same topic and scope still running gives a
	// *domain.ConflictError.
	Start(ctx context.Context, b *Backfill) error
	// Save records its progress.
	Save(ctx context.Context, b *Backfill, now time.Time) error
	// Finish marks it done (done) or abandoned for a new one (not done).
	Finish(ctx context.Context, id string, done bool, now time.Time) error
}
