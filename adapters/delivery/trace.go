package delivery

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/ports"
)

// tracedTransport makes each outbound request a client span and sends the W3C traceparent
// (nothing when tracing is off). It is written here rather than taken from otelhttp because
// otelhttp records url.full, and the path of a Slack, Discord or Google Chat webhook URL is its
// credential: these spans name the method and the host only, never the path, the query, the
// headers or the body.
type tracedTransport struct{ next http.RoundTripper }

func (t tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, span := tracing.Tracer().Start(req.Context(), req.Method, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		span.End()
		return t.next.RoundTrip(req)
	}
	defer span.End()
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", req.Method),
		attribute.String("url.scheme", req.URL.Scheme),
		attribute.String("server.address", req.URL.Hostname()),
	}
	if p := req.URL.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	span.SetAttributes(attrs...)
	req = req.Clone(ctx) // a RoundTripper must not change the caller's request
	tracing.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		tracing.End(span, errRequestFailed)
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
		tracing.End(span, errRequestFailed)
	}
	return resp, nil
}

// errRequestFailed is the status of a failed request's span; the error's own text may quote
// the URL, so it is not recorded.
var errRequestFailed = errors.New("request failed")

// errorType names the class of a transport failure without its text.
func errorType(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &ne):
		return "network"
	}
	return "request"
}

// startSend starts the span of one attempt ("webhook.send"), continuing the trace stored with
// the delivery, or the caller's (a workflow action's) when none is stored.
func startSend(ctx context.Context, r ports.OutboundRequest) (context.Context, trace.Span) {
	ctx, span := tracing.Tracer().Start(tracing.WithTraceParent(ctx, r.TraceParent), "webhook.send")
	if span.IsRecording() {
		span.SetAttributes(attribute.String("formward.endpoint.id", r.EndpointID),
			attribute.String("formward.delivery.id", r.DeliveryID),
			attribute.String("formward.event.type", r.Event),
			attribute.Int("formward.attempt", r.Attempt))
	}
	return ctx, span
}

// endSend records the attempt's outcome on its span: the status code and whether the breaker
// refused it, never the error's text.
func endSend(span trace.Span, res Result) {
	if span.IsRecording() {
		if res.StatusCode != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", res.StatusCode))
		}
		span.SetAttributes(attribute.Bool("formward.breaker_open", res.BreakerOpen))
	}
	if res.Err != nil {
		tracing.End(span, errRequestFailed)
		return
	}
	span.End()
}
