package persistence

import (
	"context"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/domain/event"
)

// The traceparent columns of outbox, deliveries and runs carry a W3C trace context from the
// request that wrote a row to the work done later from it (docs/tracing.md). NULL when tracing
// is off.

// eventTraceParent is the trace context an outbox row stores: the event's own when it has one,
// else that of the span writing it (the capture request's).
func eventTraceParent(ctx context.Context, e event.Event) *string {
	if e.TraceParent != "" {
		return &e.TraceParent
	}
	return nullIfEmpty(tracing.TraceParent(ctx))
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func emptyIfNull(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
