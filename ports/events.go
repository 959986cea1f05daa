package ports

import (
	"context"

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
