package relay

import (
	"context"
	"errors"
	"time"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// RelayConfig tunes the relay. Zero fields take the defaults.
type RelayConfig struct {
	// Batch is the most outbox rows read and published at once (default 500).
	Batch int
	// Poll is how long an idle relay waits before reading the outbox again (default 20ms). Other
	// processes write the outbox too, so polling is what guarantees progress; Notify only
	// shortens the wait for events written by this process.
	Poll time.Duration
	// Retention is how long published rows are kept before they are purged (default 7 days).
	Retention time.Duration
	// PurgeEvery is how often published rows past Retention are deleted (default 5 minutes).
	PurgeEvery time.Duration
	// MinBackoff (default 100ms) is the first wait after a failure; it doubles per consecutive
	// failure up to MaxBackoff (default 5s).
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

func (c RelayConfig) withDefaults() RelayConfig {
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Poll <= 0 {
		c.Poll = 20 * time.Millisecond
	}
	if c.Retention <= 0 {
		c.Retention = 7 * 24 * time.Hour
	}
	if c.PurgeEvery <= 0 {
		c.PurgeEvery = 5 * time.Minute
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(5*time.Second, c.MinBackoff)
	}
	return c
}

// RelayObserver hears what the relay does, for logs and metrics. It never sees event payloads.
type RelayObserver interface {
	// LeaseAcquired is called when this process became the active relay.
	LeaseAcquired()
	// Published is called after the broker acknowledged events and their rows were marked.
	Published(events []event.Event, took time.Duration)
	// Failed is called when a step failed and will be retried after retryIn.
	Failed(step string, err error, attempt int, retryIn time.Duration)
	// Purged is called after published rows past retention were deleted.
	Purged(rows int64)
}

// The steps a relay reports to RelayObserver.Failed.
const (
	RelayStepAcquireLease  = "acquire lease"
	RelayStepRelay         = "relay" // a lease term ended by repeated database failures
	RelayStepPurgeOutbox   = "purge outbox"
	RelayStepReadOutbox    = "read outbox"
	RelayStepPublish       = "publish"
	RelayStepMarkPublished = "mark published"
)

// RelaySteps lists every step a relay may report as failed, so metrics can show each at 0.
func RelaySteps() []string {
	return []string{RelayStepAcquireLease, RelayStepRelay, RelayStepPurgeOutbox, RelayStepReadOutbox, RelayStepPublish, RelayStepMarkPublished}
}

// NopRelayObserver ignores everything.
type NopRelayObserver struct{}

func (NopRelayObserver) LeaseAcquired()                           {}
func (NopRelayObserver) Published([]event.Event, time.Duration)   {}
func (NopRelayObserver) Failed(string, error, int, time.Duration) {}
func (NopRelayObserver) Purged(int64)                             {}

// Relay publishes the outbox's committed events to the event transport, at least once and in
// order per form.
//
// A row is marked published only after the transport acknowledged it; when publishing fails the
// same rows are published again, never skipped and never reordered, so a form's events reach the
// transport in outbox order, possibly more than once (consumers dedupe on the event ID). Only the
// holder of the lease publishes, so several relay processes never interleave one form's events.
type Relay struct {
	outbox    ports.Outbox
	publisher ports.EventPublisher
	lease     ports.Lease
	clock     ports.Clock
	cfg       RelayConfig
	observer  RelayObserver
	wake      chan struct{}
}

// NewRelay makes a relay; observer may be nil.
func NewRelay(outbox ports.Outbox, publisher ports.EventPublisher, lease ports.Lease, clock ports.Clock, cfg RelayConfig, observer RelayObserver) *Relay {
	if observer == nil {
		observer = NopRelayObserver{}
	}
	return &Relay{
		outbox: outbox, publisher: publisher, lease: lease, clock: clock,
		cfg: cfg.withDefaults(), observer: observer, wake: make(chan struct{}, 1),
	}
}

// Notify wakes an idle relay at once, e.g. after this process wrote to the outbox. It never blocks.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run relays events until ctx ends, then returns nil. Failures (database, broker, lease) are
// reported to the observer and retried with a backoff; Run does not give up on them.
func (r *Relay) Run(ctx context.Context) error {
	failures := 0
	for ctx.Err() == nil {
		release, err := r.lease.Acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			if !r.backoff(ctx, RelayStepAcquireLease, err, failures) {
				break
			}
			continue
		}
		failures = 0
		r.observer.LeaseAcquired()
		err = r.relay(ctx)
		release()
		if err != nil && ctx.Err() == nil {
			// relay only returns errors that suggest the lease may be gone (its database
			// connection failed): give it up and take it again before publishing more.
			failures++
			if !r.backoff(ctx, RelayStepRelay, err, failures) {
				break
			}
		}
	}
	return nil
}

// errLeaseSuspect ends a lease term after repeated database failures.
var errLeaseSuspect = errors.New("relay: repeated database failures while holding the lease")

// relay publishes while this process holds the lease. It returns nil when ctx ends.
func (r *Relay) relay(ctx context.Context) error {
	nextPurge := time.Time{} // purge once at start, then every PurgeEvery
	failures := 0
	fail := func(step string, err error) bool {
		failures++
		return r.backoff(ctx, step, err, failures)
	}
	for ctx.Err() == nil {
		if now := r.clock.Now(); !now.Before(nextPurge) {
			n, err := r.outbox.PurgePublished(ctx, now.Add(-r.cfg.Retention))
			if err != nil {
				r.observer.Failed(RelayStepPurgeOutbox, err, 1, r.cfg.PurgeEvery)
			} else if n > 0 {
				r.observer.Purged(n)
			}
			nextPurge = now.Add(r.cfg.PurgeEvery)
		}

		// From seq 0 every time: on PostgreSQL a lower seq may commit after a higher one was
		// read, and Pending returns only unpublished rows, so none is ever skipped.
		recs, err := r.outbox.Pending(ctx, 0, r.cfg.Batch)
		if err != nil {
			if !fail(RelayStepReadOutbox, err) {
				return nil
			}
			if failures >= 5 {
				return errLeaseSuspect
			}
			continue
		}
		if len(recs) == 0 {
			failures = 0
			r.idle(ctx)
			continue
		}
		evs := make([]event.Event, len(recs))
		seqs := make([]int64, len(recs))
		for i, rec := range recs {
			evs[i], seqs[i] = rec.Event, rec.Seq
		}
		start := time.Now()
		if err := r.publisher.Publish(ctx, evs); err != nil {
			// Nothing is marked: the same rows, in the same order, are read and published again.
			if !fail(RelayStepPublish, err) {
				return nil
			}
			continue
		}
		// Marked only after the acknowledgement. If this fails the rows are published again:
		// a duplicate, never a loss. It outlives ctx briefly, so a relay stopped right after an
		// acknowledgement does not leave a whole batch to be published twice.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err = r.outbox.MarkPublished(mctx, seqs, r.clock.Now())
		cancel()
		if err != nil {
			if !fail(RelayStepMarkPublished, err) {
				return nil
			}
			if failures >= 5 {
				return errLeaseSuspect
			}
			continue
		}
		failures = 0
		r.observer.Published(evs, time.Since(start))
		if len(recs) < r.cfg.Batch {
			r.idle(ctx)
		}
		// A full batch: more rows are probably waiting, so read again at once.
	}
	return nil
}

// idle waits for the poll interval, a Notify, or the end of ctx.
func (r *Relay) idle(ctx context.Context) {
	t := time.NewTimer(r.cfg.Poll)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.wake:
	case <-ctx.Done():
	}
}

// backoff reports a failure and waits before the next attempt; false when ctx ended meanwhile.
func (r *Relay) backoff(ctx context.Context, step string, err error, attempt int) bool {
	wait := r.cfg.MinBackoff
	for i := 1; i < attempt && wait < r.cfg.MaxBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, r.cfg.MaxBackoff)
	r.observer.Failed(step, err, attempt, wait)
	return ports.Sleep(ctx, wait)
}
