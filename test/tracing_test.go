package e2e_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// ---- an OTLP/HTTP collector in the test process ----

// gotSpan is one span an OTLP exporter sent, with the resource it came from.
type gotSpan struct {
	traceID, spanID, parentID string
	name                      string
	kind                      tracepb.Span_SpanKind
	service, role             string
	attrs                     map[string]string
	links                     []string // span IDs
}

// collector receives OTLP/HTTP protobuf trace exports, as a real collector would.
type collector struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []gotSpan
}

func newCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(c.handle))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces of application/x-protobuf", http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				g := gotSpan{traceID: hex.EncodeToString(s.TraceId), spanID: hex.EncodeToString(s.SpanId),
					parentID: hex.EncodeToString(s.ParentSpanId), name: s.Name, kind: s.Kind,
					service: res["service.name"], role: res["formward.role"], attrs: attrMap(s.Attributes)}
				for _, l := range s.Links {
					g.links = append(g.links, hex.EncodeToString(l.SpanId))
				}
				c.spans = append(c.spans, g)
			}
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = strconv.FormatBool(v.BoolValue)
		default:
			m[kv.Key] = fmt.Sprint(v)
		}
	}
	return m
}

func (c *collector) all() []gotSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]gotSpan(nil), c.spans...)
}

// find returns the spans named name that match.
func (c *collector) find(name string, match func(gotSpan) bool) []gotSpan {
	var out []gotSpan
	for _, s := range c.all() {
		if s.name == name && (match == nil || match(s)) {
			out = append(out, s)
		}
	}
	return out
}

// one waits for exactly one span named name that matches, and returns it.
func (c *collector) one(t *testing.T, name string, match func(gotSpan) bool) gotSpan {
	t.Helper()
	eventually(t, 20*time.Second, "span "+name, func() bool { return len(c.find(name, match)) > 0 })
	got := c.find(name, match)
	if len(got) != 1 {
		t.Fatalf("%d spans %q, want 1: %+v", len(got), name, got)
	}
	return got[0]
}

func childOf(parent gotSpan) func(gotSpan) bool {
	return func(s gotSpan) bool { return s.traceID == parent.traceID && s.parentID == parent.spanID }
}

// tracingEnv turns tracing on as an operator would, with the standard OTEL_ variables.
func tracingEnv(in *instance, c *collector) {
	in.setEnv("OTEL_EXPORTER_OTLP_ENDPOINT", c.srv.URL)
	in.setEnv("OTEL_BSP_SCHEDULE_DELAY", "50")
	in.setEnv("OTEL_TRACES_SAMPLER", "parentbased_always_on")
	in.setEnv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=e2e")
}

// submissionTrace is the trace of one API capture, as far as it goes in both modes.
type submissionTrace struct {
	server, consumer gotSpan
	deliveryClient   gotSpan
}

// checkSubmissionTrace posts one submission to a form with a webhook and a workflow, and
// checks that its trace runs from the API request through the group commit to the webhook
// delivery and the workflow action, with every span continuing the one before. consumerName
// and consumerRole say where the event is handled; publishRole, when set, is the relay's role
// (Kafka mode), whose producer span must sit between the request and the consumer.
func checkSubmissionTrace(t *testing.T, in *instance, c *collector, rc *receiver, key, consumerName, consumerRole, publishRole string) (submissionTrace, gotSpan) {
	t.Helper()
	form, field := createForm(t, in, key, "Traced")
	hook := registerWebhook(t, in, key, rc.url("/traced-hook"), form, newSecret(t), "submission.created")
	in.do("PATCH", "/v1/forms/"+form, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	createWorkflow(t, in, key, form, "Traced flow",
		map[string]any{"type": "send_webhook", "config": map[string]any{"url": rc.url("/traced-action")}})
	sub := submit(t, in, key, form, field, "follow me")
	eventually(t, 30*time.Second, "the delivery and the action", func() bool {
		return len(rc.requests("/traced-hook")) == 1 && len(rc.requests("/traced-action")) == 1
	})

	server := c.one(t, "POST /v1/forms/:id/submissions", nil)
	if server.kind != tracepb.Span_SPAN_KIND_SERVER || server.role != "serve" || server.service != "formward" {
		t.Fatalf("request span: %+v, want a server span of service formward, role serve", server)
	}
	if server.attrs["http.route"] != "/v1/forms/:id/submissions" || server.attrs["http.response.status_code"] != "201" {
		t.Fatalf("request span attributes: %v", server.attrs)
	}
	wait := c.one(t, "submission.commit.wait", childOf(server))
	commit := c.one(t, "submission.commit", func(s gotSpan) bool { return containsStr(s.links, wait.spanID) })
	if commit.traceID == server.traceID {
		t.Fatalf("the commit span belongs to one request's trace; it serves many and should only link to them")
	}

	parent := server
	if publishRole != "" {
		publish := c.one(t, "formward.events.v1 publish", childOf(server))
		if publish.kind != tracepb.Span_SPAN_KIND_PRODUCER || publish.role != publishRole {
			t.Fatalf("publish span: %+v", publish)
		}
		parent = publish
	}
	consumer := c.one(t, consumerName, childOf(parent))
	if consumer.kind != tracepb.Span_SPAN_KIND_CONSUMER || consumer.role != consumerRole {
		t.Fatalf("consumer span: %+v, want a consumer span of role %s", consumer, consumerRole)
	}

	// The delivery: stored, claimed later, and still in the trace.
	sends := c.find("webhook.send", childOf(consumer))
	eventually(t, 20*time.Second, "the delivery's send span", func() bool {
		sends = c.find("webhook.send", childOf(consumer))
		return len(sends) == 1
	})
	send := sends[0]
	if send.attrs["formward.endpoint.id"] != hook || send.role != consumerRole {
		t.Fatalf("delivery span: %+v, want endpoint %s", send, hook)
	}
	client := c.one(t, "POST", childOf(send))
	if client.kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("outbound span: %+v", client)
	}
	got := rc.requests("/traced-hook")[0].header.Get("traceparent")
	if want := "00-" + server.traceID + "-" + client.spanID + "-01"; got != want {
		t.Fatalf("the webhook request's traceparent is %q, want %q", got, want)
	}

	// The workflow action: a run row, claimed later, also in the trace.
	action := c.one(t, "workflow.action send_webhook", childOf(consumer))
	actionSend := c.one(t, "webhook.send", childOf(action))
	c.one(t, "POST", childOf(actionSend))

	// Low-cardinality names, and nothing secret or personal in any span.
	for _, s := range c.all() {
		for _, id := range []string{form, sub, hook, "follow me"} {
			if strings.Contains(s.name, id) {
				t.Errorf("span name %q contains %q", s.name, id)
			}
		}
		for k, v := range s.attrs {
			if k == "client.address" || strings.HasPrefix(k, "http.request.header.") {
				t.Errorf("span %q records %s", s.name, k)
			}
			for _, secret := range []string{key, "/traced-hook", "/traced-action", "follow me"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %q attribute %s=%q contains %q", s.name, k, v, secret)
				}
			}
		}
	}
	return submissionTrace{server: server, consumer: consumer, deliveryClient: client}, parent
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestTracingEmbedded follows one submission through serve alone: request, group commit, the
// in-process bus, the delivery and the workflow action.
func TestTracingEmbedded(t *testing.T) {
	t.Parallel()
	c := newCollector(t)
	rc := newReceiver(t)
	in := newInstance(t, "", randomMasterKey(t))
	pipelineEnv(in, rc)
	tracingEnv(in, c)
	key := in.cli("keys", "create", "--name", "traced", "--scope", "admin")
	in.startServe()
	tr, _ := checkSubmissionTrace(t, in, c, rc, key, "formward.events process", "serve", "")
	if tr.server.traceID != tr.deliveryClient.traceID {
		t.Fatal("the delivery left the request's trace")
	}
}

// TestTracingKafkaThreeProcesses follows one submission across serve, relay and worker over a
// Kafka-protocol broker: the relay's producer span continues the trace stored in the outbox row,
// the message carries it in a W3C traceparent header, and the worker's consumer span continues
// it to the delivery and the action.
func TestTracingKafkaThreeProcesses(t *testing.T) {
	t.Parallel()
	c := newCollector(t)
	rc := newReceiver(t)
	in, brokers := newKafkaInstance(t)
	pipelineEnv(in, rc)
	tracingEnv(in, c)
	in.setEnv("FORMWARD_KAFKA_PARTITIONS", "2")
	in.setEnv("FORMWARD_KAFKA_SESSION_TIMEOUT", "6s")
	in.cli("migrate")
	key := in.cli("keys", "create", "--name", "traced", "--scope", "admin")
	in.startServe()
	in.startProc("relay")
	in.startProc("worker")

	tr, publish := checkSubmissionTrace(t, in, c, rc, key, "formward.events.v1 process", "worker", "relay")

	// The message itself carries the producer span's context.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("formward.events.v1"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := "00-" + tr.server.traceID + "-" + publish.spanID + "-01"
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for len(got) == 0 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var v struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(r.Value, &v) != nil || v.Type != "submission.created" {
				return
			}
			for _, h := range r.Headers {
				if h.Key == "traceparent" {
					got = append(got, string(h.Value))
				}
			}
		})
	}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("traceparent headers of submission.created: %q, want [%q]", got, want)
	}
}
