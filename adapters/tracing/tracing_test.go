package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/ports"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSetupIsOffWithoutAnEndpoint(t *testing.T) {
	for _, vars := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "x"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "OTEL_TRACES_EXPORTER": "none"},
	} {
		if tracing.Enabled(env(vars)) {
			t.Errorf("enabled by %v", vars)
		}
	}
	for _, vars := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
	} {
		if !tracing.Enabled(env(vars)) {
			t.Errorf("not enabled by %v", vars)
		}
	}
}

func TestSetupRefusesAnotherProtocol(t *testing.T) {
	_, err := tracing.Setup(context.Background(), env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
	}), "serve", "dev")
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc") {
		t.Fatalf("err = %v, want the protocol named", err)
	}
}

func TestResourceNamesTheServiceUnlessTheEnvironmentDoes(t *testing.T) {
	res, err := tracing.Resource(context.Background(), "worker", "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	want := map[attribute.Key]string{"service.name": "formward", "service.version": "1.2.3", "formward.role": "worker"}
	for k, v := range want {
		if got, _ := res.Set().Value(k); got.AsString() != v {
			t.Errorf("%s = %q, want %q", k, got.AsString(), v)
		}
	}
	t.Setenv("OTEL_SERVICE_NAME", "forms-eu")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=prod")
	res, err = tracing.Resource(context.Background(), "worker", "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := res.Set().Value("service.name"); got.AsString() != "forms-eu" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's", got.AsString())
	}
	if got, _ := res.Set().Value("deployment.environment.name"); got.AsString() != "prod" {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES not applied: %v", res)
	}
}

func TestTraceParentRoundTrip(t *testing.T) {
	if got := tracing.TraceParent(context.Background()); got != "" {
		t.Fatalf("no span: %q", got)
	}
	ctx := tracing.WithTraceParent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if got := tracing.TraceParent(ctx); got != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Fatalf("round trip: %q", got)
	}
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if got := tracing.WithTraceParent(ctx, bad); tracing.TraceParent(got) != tracing.TraceParent(ctx) {
			t.Errorf("%q replaced the context's span", bad)
		}
	}
}

func install(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))))
	return exp
}

// Server spans are named by route template, continue the caller's trace, and record neither
// the client's address nor the query nor headers.
func TestGinNamesSpansByRoute(t *testing.T) {
	exp := install(t)
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(tracing.Gin())
	var inner trace.SpanContext
	r.POST("/f/:form_id", func(c *gin.Context) {
		inner = trace.SpanContextFromContext(c.Request.Context())
		c.Status(http.StatusSeeOther)
	})
	req := httptest.NewRequest("POST", "/f/frm_secretish?sig=abc", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	req.Header.Set("Authorization", "Bearer fw_key")
	req.RemoteAddr = "203.0.113.9:1234"
	r.ServeHTTP(httptest.NewRecorder(), req)
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/nowhere/frm_1", nil))

	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "POST /f/:form_id" || spans[1].Name != "GET" {
		t.Fatalf("spans %v", names(spans))
	}
	s := spans[0]
	if s.SpanKind != trace.SpanKindServer || s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" ||
		s.Parent.SpanID().String() != "00f067aa0ba902b7" || inner.SpanID() != s.SpanContext.SpanID() {
		t.Fatalf("span %+v does not continue the caller's trace into the handler", s)
	}
	for _, a := range s.Attributes {
		v := a.Value.Emit()
		if strings.Contains(v, "203.0.113.9") || strings.Contains(v, "sig=") || strings.Contains(v, "fw_key") || strings.Contains(v, "frm_secretish") {
			t.Errorf("attribute %s=%s leaks the request", a.Key, v)
		}
	}
}

type fakeRunner struct{ out ports.ActionOutcome }

func (fakeRunner) Type() string                                    { return "send_email" }
func (fakeRunner) Validate(map[string]any) []ports.ConfigViolation { return nil }
func (fakeRunner) Integration() string                             { return "" }
func (f fakeRunner) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	return f.out
}

// Each attempt of an action is a span in the run's stored trace; a failure marks it failed
// without its text, which may quote a secret URL.
func TestRunnersTraceEachAttempt(t *testing.T) {
	exp := install(t)
	runners := tracing.Runners(map[string]ports.ActionRunner{"send_email": fakeRunner{out: ports.ActionOutcome{Err: errSecret}}})
	runners["send_email"].Run(context.Background(), ports.ActionInput{RunID: "run_1", Attempt: 2,
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "workflow.action send_email" || spans[0].Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("spans %v", names(spans))
	}
	if spans[0].Status.Description == "" || strings.Contains(spans[0].Status.Description, "hooks.slack.com") {
		t.Fatalf("status %+v", spans[0].Status)
	}
	for _, e := range spans[0].Events {
		for _, a := range e.Attributes {
			if strings.Contains(a.Value.Emit(), "hooks.slack.com") {
				t.Fatalf("error text recorded: %v", a)
			}
		}
	}
}

var errSecret = &secretErr{}

type secretErr struct{}

func (*secretErr) Error() string { return `Post "https://hooks.slack.com/services/T0/B0/XYZ": timeout` }

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
