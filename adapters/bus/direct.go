// Package bus is the in-process event bus of the embedded mode, in place of Kafka.
package bus

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/adapters/tracing"
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

// spanName names the bus's consumer spans, as Kafka's are named after the topic.
const spanName = "formward.events process"

// Publish runs the handler on the events; its error is the relay's signal to retry them. Each
// event is handled under a consumer span continuing the trace stored in its outbox row, and is
// handed over carrying that span's context, as the Kafka subscriber does.
func (d *Direct) Publish(ctx context.Context, events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	traced := make([]event.Event, len(events))
	spans := make([]trace.Span, len(events))
	for i, e := range events {
		sctx, span := tracing.Tracer().Start(tracing.WithTraceParent(ctx, e.TraceParent), spanName,
			trace.WithSpanKind(trace.SpanKindConsumer))
		if span.IsRecording() {
			span.SetAttributes(attribute.String("messaging.system", "formward.bus"),
				attribute.String("messaging.operation.type", "process"),
				attribute.String("messaging.message.id", e.ID),
				attribute.String("formward.event.type", string(e.Type)))
		}
		e.TraceParent = tracing.TraceParent(sctx)
		traced[i], spans[i] = e, span
	}
	err := d.handle(ctx, traced)
	for _, s := range spans {
		tracing.End(s, err)
	}
	return err
}
