package bus

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// RunBatches is Run for a handler that takes several events at once: each call gets up to max
// queued events of one form, oldest first, and they leave the queue together when it returned
// nil. On an error the same events (and maybe more) are handled again after a backoff.
func (b *Bus) RunBatches(ctx context.Context, handle ports.EventBatchHandler, max int) error {
	max = maxOr(max, 100)
	done := make(chan struct{}, b.cfg.Workers)
	for range b.cfg.Workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				form, evs, ok := b.takeBatch(ctx, max)
				if !ok {
					return
				}
				if !b.deliverBatch(ctx, handle, evs) {
					b.giveBack(form)
					return
				}
				b.doneN(form, len(evs))
			}
		}()
	}
	for range b.cfg.Workers {
		<-done
	}
	return nil
}

func maxOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// takeBatch waits for a ready form and returns up to max of its oldest events, left queued until doneN.
func (b *Bus) takeBatch(ctx context.Context, max int) (string, []event.Event, bool) {
	for {
		b.mu.Lock()
		if len(b.ready) > 0 {
			form := b.ready[0]
			b.ready = b.ready[1:]
			q := b.forms[form]
			evs := append([]event.Event(nil), q[:min(len(q), max)]...)
			if len(b.ready) > 0 {
				b.signal()
			}
			b.mu.Unlock()
			return form, evs, true
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", nil, false
		case <-b.wake:
		}
	}
}

// doneN removes the n handled events at the head of form's queue.
func (b *Bus) doneN(form string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.forms[form]
	clear(q[:n]) // let the handled events be collected
	q = q[n:]
	b.pending -= n
	if len(q) == 0 {
		delete(b.forms, form)
		return
	}
	b.forms[form] = q
	b.ready = append(b.ready, form)
	b.signal()
}

// deliverBatch calls handle until it succeeds (true) or ctx ends (false).
func (b *Bus) deliverBatch(ctx context.Context, handle ports.EventBatchHandler, evs []event.Event) bool {
	wait := b.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := handle(ctx, evs)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		b.log.Warn("event handler failed, will retry", zap.String("first_event_id", evs[0].ID), zap.Int("events", len(evs)),
			zap.String("form_id", evs[0].FormID), zap.Int("attempt", attempt), zap.Duration("retry_in", wait), zap.Error(err))
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
