package metrics

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

func TestCaptureRoutesOutcomesAndReasons(t *testing.T) {
	m := New()
	answer := func(status int, contentType, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		})
	}
	const problem = "application/json; charset=utf-8"
	cases := []struct {
		method, path      string
		status            int
		contentType, body string
		source, outcome   string
		reasons           []string
	}{
		{"POST", "/v1/forms/frm_1/submissions", 201, "application/json", `{"id":"sub_1"}`, SourceAPI, OutcomeStored, nil},
		{"POST", "/v1/forms/frm_1/submissions", 422, problem,
			`{"error":{"code":"validation_failed","details":[{"field":"a","code":"required"},{"field":"b","code":"required"},{"field":"c","code":"invalid_email"}]}}`,
			SourceAPI, OutcomeInvalid, []string{"required", "invalid_email"}},
		{"POST", "/v1/forms/frm_1/submissions", 409, problem, `{"error":{"code":"form_closed"}}`, SourceAPI, OutcomeClosed, nil},
		{"POST", "/v1/forms/frm_1/submissions", 429, problem, `{"error":{"code":"rate_limited"}}`, SourceAPI, OutcomeRateLimited, nil},
		{"POST", "/v1/forms/frm_1/submissions", 503, problem, `{"error":{"code":"unavailable"}}`, SourceAPI, OutcomeUnavailable, nil},
		{"POST", "/v1/forms/frm_1/submissions", 500, problem, `{"error":{"code":"internal_error"}}`, SourceAPI, OutcomeError, nil},
		{"POST", "/f/frm_1", 403, problem, `{"error":{"code":"rejected"}}`, SourceForm, OutcomeSpam, nil},
		{"POST", "/f/frm_1", 403, "text/html", `<p>not accepted</p>`, SourceForm, OutcomeSpam, nil},
		{"POST", "/f/frm_1", 422, "text/html", `<form>`, SourceForm, OutcomeInvalid, []string{"validation_failed"}},
		{"POST", "/f/frm_1", 303, "", ``, SourceForm, OutcomeStored, nil},
		{"POST", "/f/frm_1", 413, problem, `{"error":{"code":"payload_too_large"}}`, SourceForm, OutcomeInvalid, []string{"payload_too_large"}},
	}
	for _, c := range cases {
		before := testutil.ToFloat64(m.captures.WithLabelValues(c.source, c.outcome))
		reasonsBefore := map[string]float64{}
		for _, r := range c.reasons {
			reasonsBefore[r] = testutil.ToFloat64(m.refusals.WithLabelValues(c.source, r))
		}
		rec := httptest.NewRecorder()
		m.CaptureRoutes(answer(c.status, c.contentType, c.body)).ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || rec.Body.String() != c.body {
			t.Fatalf("%s %s: the answer changed: %d %q", c.method, c.path, rec.Code, rec.Body.String())
		}
		if got := testutil.ToFloat64(m.captures.WithLabelValues(c.source, c.outcome)) - before; got != 1 {
			t.Errorf("%d %s: captures{%s,%s} moved by %v, want 1", c.status, c.body, c.source, c.outcome, got)
		}
		for _, r := range c.reasons {
			if got := testutil.ToFloat64(m.refusals.WithLabelValues(c.source, r)) - reasonsBefore[r]; got != 1 {
				t.Errorf("%d %s: refusals{%s,%s} moved by %v, want 1 (each reason once per post)", c.status, c.body, c.source, r, got)
			}
		}
	}
	// Other routes pass through uncounted.
	total := testutil.CollectAndCount(m.captureDuration)
	for _, p := range []string{"/v1/forms", "/v1/forms/frm_1/submissions/sub_1", "/f/frm_1/challenge", "/f/"} {
		m.CaptureRoutes(answer(200, "", "")).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", p, nil))
	}
	m.CaptureRoutes(answer(200, "", "")).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/f/frm_1", nil))
	if got := testutil.CollectAndCount(m.captureDuration); got != total {
		t.Fatalf("non-capture requests were measured: %d series, had %d", got, total)
	}
}

func TestRefusalReasonsAreCapped(t *testing.T) {
	c := newCapped(3)
	for _, v := range []string{"a", "b", "c"} {
		if got := c.value(v); got != v {
			t.Fatalf("%s became %s", v, got)
		}
	}
	if got := c.value("d"); got != "other" {
		t.Fatalf("a fourth reason got its own value %q", got)
	}
	if got := c.value("a"); got != "a" {
		t.Fatalf("a known reason became %q", got)
	}
	if got := newCapped(10).value(`Bad "label"` + strings.Repeat("x", 50)); got != "other" {
		t.Fatalf("a malformed reason became %q", got)
	}
}

func TestRelayObserverLag(t *testing.T) {
	m := New()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	o := m.RelayObserver(nil, func() time.Time { return now })
	o.Published([]event.Event{{ID: "e1", OccurredAt: now.Add(-2 * time.Second)}, {ID: "e2", OccurredAt: now.Add(-30 * time.Second)}}, time.Millisecond)
	if got := testutil.ToFloat64(m.relayPublished); got != 2 {
		t.Fatalf("published %v, want 2", got)
	}
	if got := testutil.CollectAndCount(m.relayLag); got != 1 {
		t.Fatalf("lag histogram: %d series", got)
	}
	const want = `
# HELP formward_relay_lag_seconds Time from an event's occurrence (its outbox row) to its publication.
# TYPE formward_relay_lag_seconds histogram
formward_relay_lag_seconds_bucket{le="0.005"} 0
formward_relay_lag_seconds_bucket{le="0.01"} 0
formward_relay_lag_seconds_bucket{le="0.025"} 0
formward_relay_lag_seconds_bucket{le="0.05"} 0
formward_relay_lag_seconds_bucket{le="0.1"} 0
formward_relay_lag_seconds_bucket{le="0.25"} 0
formward_relay_lag_seconds_bucket{le="0.5"} 0
formward_relay_lag_seconds_bucket{le="1"} 0
formward_relay_lag_seconds_bucket{le="2.5"} 1
formward_relay_lag_seconds_bucket{le="5"} 1
formward_relay_lag_seconds_bucket{le="10"} 1
formward_relay_lag_seconds_bucket{le="30"} 2
formward_relay_lag_seconds_bucket{le="60"} 2
formward_relay_lag_seconds_bucket{le="300"} 2
formward_relay_lag_seconds_bucket{le="900"} 2
formward_relay_lag_seconds_bucket{le="+Inf"} 2
formward_relay_lag_seconds_sum 32
formward_relay_lag_seconds_count 2
`
	if err := testutil.CollectAndCompare(m.relayLag, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestRunObserverOutcomesAndUnknownTypes(t *testing.T) {
	m := New()
	o := m.RunObserver(nil, []string{"send_webhook"})
	o.Attempted(nil, workflow.ActionRun{Type: "send_webhook", Status: workflow.ActionRunSucceeded}, ports.ActionOutcome{Duration: time.Millisecond})
	o.Attempted(nil, workflow.ActionRun{Type: "send_webhook", Status: workflow.ActionRunPending}, ports.ActionOutcome{BreakerOpen: true})
	o.Attempted(nil, workflow.ActionRun{Type: "made_up", Status: workflow.ActionRunFailed}, ports.ActionOutcome{})
	for _, c := range []struct{ typ, outcome string }{
		{"send_webhook", OutcomeDelivered}, {"send_webhook", OutcomeBreakerOpen}, {"other", OutcomeUndeliverable},
	} {
		if got := testutil.ToFloat64(m.actions.WithLabelValues(c.typ, c.outcome)); got != 1 {
			t.Errorf("actions{%s,%s} = %v, want 1", c.typ, c.outcome, got)
		}
	}
	o.Failed("save run", errors.New("database down"))
	if got := testutil.ToFloat64(m.engineFailures.WithLabelValues("runs", "save run")); got != 1 {
		t.Errorf("engine failures = %v, want 1", got)
	}
	// A breaker-open attempt made no request: no latency recorded for it.
	if got := testutil.CollectAndCount(m.actionDuration); got != 2 {
		t.Fatalf("action latency series: %d, want 2", got)
	}
}

func TestBreakerAndStorageGauges(t *testing.T) {
	m := New()
	m.WatchBreakers("webhooks", func() (int, int, int) { return 3, 1, 2 })
	m.WatchBreakers("actions", func() (int, int, int) { return 1, 0, 0 })
	failing := false
	m.WatchStorage(func() bool { return failing })
	check := func(want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "formward_circuit_breakers", "formward_storage_writes_failing"); err != nil {
			t.Fatal(err)
		}
	}
	const breakers = `
# HELP formward_circuit_breakers Circuit breakers of outbound endpoints (one per webhook or workflow action that sent), by client and state; counts, never endpoint IDs.
# TYPE formward_circuit_breakers gauge
formward_circuit_breakers{client="actions",state="closed"} 1
formward_circuit_breakers{client="actions",state="half_open"} 0
formward_circuit_breakers{client="actions",state="open"} 0
formward_circuit_breakers{client="webhooks",state="closed"} 3
formward_circuit_breakers{client="webhooks",state="half_open"} 1
formward_circuit_breakers{client="webhooks",state="open"} 2
# HELP formward_storage_writes_failing 1 while storage refuses writes (disk full, database or object store failing) and /readyz answers 503; 0 otherwise.
# TYPE formward_storage_writes_failing gauge
`
	check(breakers + "formward_storage_writes_failing 0\n")
	failing = true
	check(breakers + "formward_storage_writes_failing 1\n")
}

// BenchmarkCaptureRoutes is the decorator's cost per stored capture (compare with the capture
// path's milliseconds in docs/performance.md).
func BenchmarkCaptureRoutes(b *testing.B) {
	m := New()
	h := m.CaptureRoutes(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }))
	req := httptest.NewRequest("POST", "/v1/forms/frm_1/submissions", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}
