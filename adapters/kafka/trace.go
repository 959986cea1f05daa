package kafka

import (
	"context"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/domain/event"
)

// Trace context travels in W3C headers (traceparent, and tracestate when there is one) next to
// the CloudEvents headers; consumers that do not trace ignore them (docs/events.md).

// headerCarrier reads and writes a message's headers for a propagator.
type headerCarrier struct{ m *kafkago.Message }

var _ propagation.TextMapCarrier = headerCarrier{}

func (c headerCarrier) Get(key string) string {
	for _, h := range c.m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func (c headerCarrier) Set(key, value string) {
	for i, h := range c.m.Headers {
		if h.Key == key {
			c.m.Headers[i].Value = []byte(value)
			return
		}
	}
	c.m.Headers = append(c.m.Headers, kafkago.Header{Key: key, Value: []byte(value)})
}

func (c headerCarrier) Keys() []string {
	keys := make([]string, len(c.m.Headers))
	for i, h := range c.m.Headers {
		keys[i] = h.Key
	}
	return keys
}

func messagingAttrs(topic string, e event.Event, op string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("messaging.system", "kafka"),
		attribute.String("messaging.operation.type", op),
		attribute.String("messaging.destination.name", topic),
		attribute.String("messaging.message.id", e.ID),
		attribute.String("messaging.kafka.message.key", e.FormID),
		attribute.String("formward.event.type", string(e.Type)),
	}
}

// startPublish starts the producer span of one event, a child of the trace context stored in
// its outbox row, and writes that span's context into m's headers.
func startPublish(ctx context.Context, topic string, e event.Event, m *kafkago.Message) trace.Span {
	ctx, span := tracing.Tracer().Start(tracing.WithTraceParent(ctx, e.TraceParent), topic+" publish",
		trace.WithSpanKind(trace.SpanKindProducer))
	if span.IsRecording() {
		span.SetAttributes(messagingAttrs(topic, e, "send")...)
	}
	tracing.Inject(ctx, headerCarrier{m})
	return span
}

// startProcess starts the consumer span of one event, continuing the trace of m's headers, and
// returns e carrying that span's trace context, which the deliveries and runs made from it
// store.
func startProcess(ctx context.Context, topic string, m *kafkago.Message, e event.Event) (event.Event, trace.Span) {
	ctx = tracing.Extract(ctx, headerCarrier{m})
	ctx, span := tracing.Tracer().Start(ctx, topic+" process", trace.WithSpanKind(trace.SpanKindConsumer))
	if span.IsRecording() {
		span.SetAttributes(messagingAttrs(topic, e, "process")...)
		span.SetAttributes(attribute.Int("messaging.destination.partition.id", m.Partition),
			attribute.Int64("messaging.kafka.offset", m.Offset))
	}
	e.TraceParent = tracing.TraceParent(ctx)
	return e, span
}
