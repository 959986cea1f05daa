// Package bus carries events inside one process, for the embedded mode that runs without Kafka.
//
// The queue lives in memory only. While the process lives, no event Publish accepted is lost:
// it leaves the queue only when a handler returned nil. The bus needs no persistence of its own
// because the outbox is the durable copy: the relay marks rows published only after Publish
// returned, and after a restart it reads the rows never marked and publishes them again.
//
// What a crash does lose is the events that were accepted, and so marked published, but not yet
// handled: unlike Kafka, nothing re-reads them. Keep that window short (the default Limit bounds
// it to 10,000 events) or, where it matters, run with Kafka.
package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// ErrFull is returned by Publish while the handlers are too far behind; the relay leaves the
// rows in the outbox and tries again later.
var ErrFull = errors.New("event bus full")

// Config tunes the bus. Zero fields take the defaults.
type Config struct {
	// Limit is how many events may wait before Publish refuses more; default 10,000. A batch is
	// taken whole while the queue is below the limit, so the queue may exceed it by one batch.
	Limit int
	// Workers is how many forms are handled at the same time by each Run; default 1. Events of
	// one form are always handled one at a time, in order.
	Workers int
	// RetryBackoff (default 200ms) is the first wait before a failed event is handled again; it
	// doubles per attempt up to MaxRetryBackoff (default 30s).
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
}

func (c Config) withDefaults() Config {
	if c.Limit <= 0 {
		c.Limit = 10_000
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 200 * time.Millisecond
	}
	if c.MaxRetryBackoff < c.RetryBackoff {
		c.MaxRetryBackoff = max(30*time.Second, c.RetryBackoff)
	}
	return c
}

// Bus is an in-memory, ordered event queue: the relay publishes into it and the worker runs
// from it. Every event goes to one handler (concurrent Runs share the work, like members of a
// consumer group).
type Bus struct {
	cfg Config
	log *zap.Logger

	mu      sync.Mutex
	pending int                      // events published and not yet handled, in flight included
	forms   map[string][]event.Event // waiting events per form, oldest first; the head may be in flight
	ready   []string                 // forms with events and no handler, in the order they became ready
	wake    chan struct{}            // has a value when ready may have grown
}

var (
	_ ports.EventPublisher  = (*Bus)(nil)
	_ ports.EventSubscriber = (*Bus)(nil)
)

// New makes an empty bus. log may be nil.
func New(cfg Config, log *zap.Logger) *Bus {
	if log == nil {
		log = zap.NewNop()
	}
	return &Bus{
		cfg:   cfg.withDefaults(),
		log:   log,
		forms: make(map[string][]event.Event),
		wake:  make(chan struct{}, 1),
	}
}

// Publish queues events behind those already queued and returns at once. It takes all of them
// or none: ErrFull (wrapped) when the queue is at its limit.
func (b *Bus) Publish(ctx context.Context, events []event.Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if len(events) == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending >= b.cfg.Limit {
		return fmt.Errorf("publish %d events: %w (%d waiting)", len(events), ErrFull, b.pending)
	}
	for _, e := range events {
		q, known := b.forms[e.FormID]
		b.forms[e.FormID] = append(q, e)
		if !known {
			// A form with queued events is either ready or in a handler's hands; it becomes
			// ready when it gets its first event.
			b.ready = append(b.ready, e.FormID)
		}
	}
	b.pending += len(events)
	b.signal()
	return nil
}

// Len returns how many events are published and not yet handled.
func (b *Bus) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending
}

// Run hands events to handle until ctx ends, then returns nil. An event leaves the queue only
// when handle returned nil; on an error the same event is handled again after a backoff while
// the form's later events wait. Other forms go on when Workers > 1.
func (b *Bus) Run(ctx context.Context, handle ports.EventHandler) error {
	var wg sync.WaitGroup
	for range b.cfg.Workers {
		wg.Go(func() { b.work(ctx, handle) })
	}
	wg.Wait()
	return nil
}

func (b *Bus) work(ctx context.Context, handle ports.EventHandler) {
	for {
		form, e, ok := b.take(ctx)
		if !ok {
			return
		}
		if !b.deliver(ctx, handle, e) {
			b.giveBack(form)
			return
		}
		b.done(form)
	}
}

// take waits for a ready form and returns its oldest event, leaving it queued until done.
func (b *Bus) take(ctx context.Context) (string, event.Event, bool) {
	for {
		b.mu.Lock()
		if len(b.ready) > 0 {
			form := b.ready[0]
			b.ready = b.ready[1:]
			e := b.forms[form][0]
			if len(b.ready) > 0 {
				b.signal() // pass the wake-up on to another idle worker
			}
			b.mu.Unlock()
			return form, e, true
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", event.Event{}, false
		case <-b.wake:
		}
	}
}

// done removes the handled head of form's queue and lets the form's next event be taken.
func (b *Bus) done(form string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.forms[form]
	q[0] = event.Event{} // let the handled event be collected
	q = q[1:]
	b.pending--
	if len(q) == 0 {
		delete(b.forms, form)
		return
	}
	b.forms[form] = q
	b.ready = append(b.ready, form) // behind the other ready forms: no form starves the rest
	b.signal()
}

// giveBack returns an unhandled form to the front, for the next Run.
func (b *Bus) giveBack(form string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ready = append([]string{form}, b.ready...)
	b.signal()
}

// deliver calls handle until it succeeds (true) or ctx ends (false).
func (b *Bus) deliver(ctx context.Context, handle ports.EventHandler, e event.Event) bool {
	wait := b.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := handle(ctx, e)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		b.log.Warn("event handler failed, will retry", zap.String("event_id", e.ID),
			zap.String("event_type", string(e.Type)), zap.String("form_id", e.FormID),
			zap.Int("attempt", attempt), zap.Duration("retry_in", wait), zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		wait = min(2*wait, b.cfg.MaxRetryBackoff)
	}
}

// signal wakes one waiting worker, or the next one to wait; b.mu is held.
func (b *Bus) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
