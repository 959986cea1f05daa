package tracing

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Header names of W3C Trace Context, also used as Kafka header keys.
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// roleKey is the resource attribute naming the process role.
var roleKey = attribute.Key("formward.role")

// TraceParent is the W3C traceparent of the span in ctx, or "" when there is none (always so
// when tracing is off). It is what the outbox, delivery and run rows store.
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c[HeaderTraceParent]
}

// WithTraceParent returns ctx continuing the trace of a stored traceparent, so that the next
// span started from it is its child. A traceparent that is empty or malformed leaves ctx as it
// is (its own span, if any, stays the parent).
func WithTraceParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{HeaderTraceParent: traceparent}))
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// Inject writes the trace context of ctx into carrier with the global propagator (nothing when
// tracing is off).
func Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	otel.GetTextMapPropagator().Inject(ctx, carrier)
}

// Extract reads a trace context from carrier into ctx with the global propagator.
func Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	return otel.GetTextMapPropagator().Extract(ctx, carrier)
}

// End ends span, recording err as its error status when there is one.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
