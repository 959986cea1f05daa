// Package tracing sets up OpenTelemetry tracing and carries W3C trace context across the places
// a submission waits: the outbox row, the Kafka message, the delivery and run rows.
//
// Tracing is off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Off, OpenTelemetry's global tracer provider stays the
// no-op one: spans cost a few nanoseconds, record nothing, and no trace context is written to
// rows or messages. The OpenTelemetry instrumentation libraries (otelgin) read the global
// provider and propagator, so Setup installs them there rather than passing them around.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ServiceName is the service.name of Formward's spans unless OTEL_SERVICE_NAME (or
// service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "formward"

// instrumentation names Formward's own tracer.
const instrumentation = "github.com/formward/formward"

// Tracer is the tracer of Formward's own spans, read from the global provider at each call so
// that Setup (or a test's Install) takes effect everywhere.
func Tracer() trace.Tracer { return otel.Tracer(instrumentation) }

// Enabled reports whether the environment asks for tracing: an OTLP endpoint is set, the SDK is
// not disabled (OTEL_SDK_DISABLED=true) and the traces exporter is not "none".
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs an OTLP/HTTP exporting tracer provider and the W3C trace-context propagator
// when Enabled, and returns the function that flushes and stops it (a no-op when tracing is
// off). The exporter reads the standard OTEL_EXPORTER_OTLP_* variables (endpoint, headers,
// timeout, compression, certificates), the SDK reads OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_*,
// and the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. role (serve, relay, worker)
// becomes the resource attribute formward.role.
func Setup(ctx context.Context, getenv func(string) string, role, version string) (shutdown func(context.Context) error, err error) {
	nop := func(context.Context) error { return nil }
	if !Enabled(getenv) {
		return nop, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(v)); p != "" {
			if p != "http/protobuf" {
				return nop, fmt.Errorf("%s=%s: only http/protobuf is supported", v, p)
			}
			break
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nop, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := Resource(ctx, role, version)
	if err != nil {
		return nop, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Install(tp)
	return tp.Shutdown, nil
}

// Resource describes this process: service.name formward (unless the environment names it),
// service.version, formward.role, then OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func Resource(ctx context.Context, role, version string) (*resource.Resource, error) {
	attrs := []resource.Option{resource.WithAttributes(semconv.ServiceName(ServiceName))}
	if version != "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceVersion(version)))
	}
	if role != "" {
		attrs = append(attrs, resource.WithAttributes(roleKey.String(role)))
	}
	// Later options win: the environment overrides the defaults above.
	attrs = append(attrs, resource.WithTelemetrySDK(), resource.WithFromEnv())
	res, err := resource.New(ctx, attrs...)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	return res, nil
}

// Install makes tp the global tracer provider and W3C trace context the global propagator, and
// returns what puts the previous ones back. Tests install a provider with an in-memory
// exporter this way, and restore the untraced state when they end.
func Install(tp trace.TracerProvider) (restore func()) {
	prevTP, prevProp, prevActive := otel.GetTracerProvider(), otel.GetTextMapPropagator(), active.Load()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	active.Store(true)
	return func() {
		if !prevActive {
			// OpenTelemetry's default global provider delegates for good to the first one set,
			// so "untraced" is restored as explicit no-ops.
			prevTP, prevProp = noop.NewTracerProvider(), propagation.NewCompositeTextMapPropagator()
		}
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		active.Store(prevActive)
	}
}

// active is set once a provider was installed; Active reads it.
var active atomic.Bool

// Active reports whether this process traces (Setup found an endpoint, or a test installed a
// provider), so that instrumentation that costs something per request is only added then.
func Active() bool { return active.Load() }
