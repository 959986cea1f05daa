package kafka

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/domain/event"
)

// The relay's producer span continues the trace stored with the event, the message carries it
// in a W3C traceparent header, and the worker's consumer span continues that header and hands
// the event on under its own context.
func TestTraceContextTravelsInHeaders(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))))

	const topic = "traced"
	brokers, p := newTopic(t, topic, 1)
	ctx, request := tracing.Tracer().Start(context.Background(), "request")
	evs := testEvents(2, 1)
	evs[0].TraceParent = tracing.TraceParent(ctx)
	request.End()

	if err := p.Publish(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	publish := spanOf(t, exp, topic+" publish", evs[0].ID)
	if publish.SpanKind != trace.SpanKindProducer || publish.Parent.SpanID() != request.SpanContext().SpanID() ||
		publish.SpanContext.TraceID() != request.SpanContext().TraceID() {
		t.Fatalf("publish span %+v is not a producer child of the request", publish)
	}
	msgs := readRaw(t, brokers, topic, 1, 2)
	want := "00-" + publish.SpanContext.TraceID().String() + "-" + publish.SpanContext.SpanID().String() + "-01"
	if got := (headerCarrier{&msgs[0]}).Get("traceparent"); got != want {
		t.Fatalf("traceparent header %q, want %q", got, want)
	}

	s := newTestSubscriber(t, brokers, topic, "traced-group")
	c := run(t, s, 20*time.Second, 2, nil)
	consumer := spanOf(t, exp, topic+" process", evs[0].ID)
	if consumer.SpanKind != trace.SpanKindConsumer || consumer.Parent.SpanID() != publish.SpanContext.SpanID() ||
		consumer.SpanContext.TraceID() != request.SpanContext().TraceID() {
		t.Fatalf("consumer span %+v does not continue the message's trace", consumer)
	}
	var handed event.Event
	for _, e := range c.got {
		if e.ID == evs[0].ID {
			handed = e
		}
	}
	if want := "00-" + consumer.SpanContext.TraceID().String() + "-" + consumer.SpanContext.SpanID().String() + "-01"; handed.TraceParent != want {
		t.Fatalf("the handler got trace context %q, want the consumer span's %q", handed.TraceParent, want)
	}
}

func spanOf(t *testing.T, exp *tracetest.InMemoryExporter, name, eventID string) tracetest.SpanStub {
	t.Helper()
	for _, s := range exp.GetSpans() {
		if s.Name != name {
			continue
		}
		for _, a := range s.Attributes {
			if a.Key == "messaging.message.id" && a.Value.AsString() == eventID {
				return s
			}
		}
	}
	t.Fatalf("no span %q of event %s", name, eventID)
	return tracetest.SpanStub{}
}
