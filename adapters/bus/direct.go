// Package bus is the in-process event bus of the embedded mode, in place of Kafka.
package bus

import (
	"context"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// Direct hands published events straight to the subscriber's handler and returns only once
// the handler succeeded. The relay marks outbox rows published after Publish returns, so a
// crash never loses an event: until the handler has stored its work (the fan-out's deliveries),
// the rows stay in the outbox and are handed over again, and the handler dedupes. The relay
// publishes one batch at a time, in outbox order, so each form's events keep their order.
type Direct struct {
	handle ports.EventBatchHandler
}

var _ ports.EventPublisher = (*Direct)(nil)

// NewDirect connects the bus to its one subscriber.
func NewDirect(handle ports.EventBatchHandler) *Direct { return &Direct{handle: handle} }

// Publish runs the handler on the events; its error is the relay's signal to retry them.
func (d *Direct) Publish(ctx context.Context, events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	return d.handle(ctx, events)
}
