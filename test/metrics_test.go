package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/formward/formward/test/testkit"
)

// series is one scrape of /metrics: sample lines by metric name.
type series map[string][]sample

type sample struct {
	labels map[string]string
	value  float64
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)`)
var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// scrape reads the metrics listener's text exposition.
func scrape(t *testing.T, addr string) series {
	t.Helper()
	out, err := tryScrape(addr)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return out
}

// tryScrape is scrape for a listener that may not be up yet.
func tryScrape(addr string) (series, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	out := series{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := sampleLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for _, p := range labelPair.FindAllStringSubmatch(m[3], -1) {
			labels[p[1]] = p[2]
		}
		out[m[1]] = append(out[m[1]], sample{labels: labels, value: v})
	}
	return out, sc.Err()
}

// sum adds the samples of name whose labels include want (name=value pairs).
func (s series) sum(name string, want ...string) float64 {
	total := 0.0
next:
	for _, smp := range s[name] {
		for i := 0; i+1 < len(want); i += 2 {
			if smp.labels[want[i]] != want[i+1] {
				continue next
			}
		}
		total += smp.value
	}
	return total
}

// TestMetricsEmbedded drives captures (API and public form, stored and refused), a webhook
// delivery (HTTPS receiver with a test CA), a failing one and a workflow run through serve in
// embedded mode, and checks the series on the metrics listener moved; then checks that every
// metric the Grafana dashboard and the alert rules name is one the binary exposes.
func TestMetricsEmbedded(t *testing.T) {
	t.Parallel()
	in, rc := newPipelineInstance(t)
	metricsAddr := freeAddr(t)
	in.setEnv("FORMWARD_METRICS_ADDR", metricsAddr)
	key := in.cli("keys", "create", "--name", "metrics", "--scope", "admin")
	in.startServe()

	before := scrape(t, metricsAddr)
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "go_sql_open_connections",
		"formward_outbox_pending_events", "formward_storage_writes_failing", "formward_captures_total",
		"formward_deliveries_due", "formward_deliveries_oldest_due_seconds", "formward_workflow_runs_due"} {
		if len(before[name]) == 0 {
			t.Fatalf("%s missing from the first scrape", name)
		}
	}
	// The failure counters alerts read exist before the first failure, at 0.
	for _, c := range []struct {
		name, label, value string
	}{
		{"formward_relay_failures_total", "step", "publish"},
		{"formward_relay_failures_total", "step", "read outbox"},
		{"formward_engine_step_failures_total", "step", "claim due deliveries"},
		{"formward_engine_step_failures_total", "step", "save run"},
		{"formward_spam_total", "reason", "too_fast"},
	} {
		found := false
		for _, smp := range before[c.name] {
			if smp.labels[c.label] == c.value {
				found = true
				if smp.value != 0 {
					t.Fatalf("%s{%s=%q} = %v on the first scrape, want 0", c.name, c.label, c.value, smp.value)
				}
			}
		}
		if !found {
			t.Fatalf("%s{%s=%q} missing from the first scrape: it would appear only after a first failure", c.name, c.label, c.value)
		}
	}

	formID, fieldID := createForm(t, in, key, "Metrics")
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	registerWebhook(t, in, key, rc.url("/ok"), formID, newSecret(t), "submission.created")
	registerWebhook(t, in, key, rc.url("/down"), formID, newSecret(t), "submission.created")
	createWorkflow(t, in, key, formID, "Notify",
		map[string]any{"type": "send_webhook", "config": map[string]any{"url": rc.url("/wf-hook")}})

	// API: one stored, one refused by a rule.
	submit(t, in, key, formID, fieldID, "via the API")
	in.do("POST", "/v1/forms/"+formID+"/submissions", key, map[string]any{"data": map[string]any{}}).expect(t, http.StatusUnprocessableEntity)
	// Public form: a script's post without the render token is spam; with the token rule off it is stored.
	in.do("POST", "/f/"+formID, "", map[string]any{"data": map[string]any{fieldID: "no token"}}).expect(t, http.StatusForbidden)
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"settings": map[string]any{"spam": map[string]any{"min_fill_seconds": 0}}}).expect(t, http.StatusOK)
	in.do("POST", "/f/"+formID, "", map[string]any{"data": map[string]any{fieldID: "via the form"}}).expect(t, http.StatusCreated)

	eventually(t, 20*time.Second, "deliveries, a failed one and the workflow action", func() bool {
		return len(rc.requests("/ok")) >= 2 && len(rc.requests("/down")) >= 1 && len(rc.requests("/wf-hook")) >= 2
	})
	var after series
	checks := []struct {
		what    string
		name    string
		labels  []string
		atLeast float64
	}{
		{"API capture stored", "formward_captures_total", []string{"source", "api", "outcome", "stored"}, 1},
		{"API capture invalid", "formward_captures_total", []string{"source", "api", "outcome", "invalid"}, 1},
		{"API refusal reason", "formward_capture_refusals_total", []string{"source", "api", "reason", "required"}, 1},
		{"form capture spam", "formward_captures_total", []string{"source", "form", "outcome", "spam"}, 1},
		{"form capture stored", "formward_captures_total", []string{"source", "form", "outcome", "stored"}, 1},
		{"spam reason", "formward_spam_total", []string{"reason", "token_missing"}, 1},
		{"capture latency", "formward_capture_duration_seconds_count", []string{"source", "api", "outcome", "stored"}, 1},
		{"group commits", "formward_group_commit_batch_size_count", nil, 2},
		{"relay published", "formward_relay_published_events_total", nil, 3},
		{"relay lag", "formward_relay_lag_seconds_count", nil, 3},
		{"deliveries delivered", "formward_webhook_deliveries_total", []string{"outcome", "delivered"}, 2},
		{"deliveries failed", "formward_webhook_deliveries_total", []string{"outcome", "failed"}, 1},
		{"delivery latency", "formward_webhook_delivery_duration_seconds_count", []string{"outcome", "delivered"}, 2},
		{"workflow actions", "formward_workflow_actions_total", []string{"type", "send_webhook", "outcome", "delivered"}, 2},
		{"workflow latency", "formward_workflow_action_duration_seconds_count", []string{"type", "send_webhook", "outcome", "delivered"}, 2},
		{"breakers", "formward_circuit_breakers", []string{"client", "webhooks"}, 2},
	}
	var lagging []string
	if !testkit.Wait(20*time.Second, func() bool {
		after = scrape(t, metricsAddr)
		lagging = nil
		for _, c := range checks {
			if moved := after.sum(c.name, c.labels...) - before.sum(c.name, c.labels...); moved < c.atLeast {
				lagging = append(lagging, fmt.Sprintf("%s: %s%v moved by %v, want at least %v", c.what, c.name, c.labels, moved, c.atLeast))
			}
		}
		return len(lagging) == 0
	}) {
		t.Fatalf("series did not move within 20s:\n%s", strings.Join(lagging, "\n"))
	}
	for _, smp := range after["formward_spam_total"] {
		if _, ok := smp.labels["form_id"]; ok {
			t.Fatalf("formward_spam_total has the unbounded form_id label: %v", smp.labels)
		}
	}
	if after.sum("formward_outbox_pending_events") < 0 || len(after["formward_outbox_oldest_pending_age_seconds"]) == 0 {
		t.Fatalf("outbox gauges missing")
	}

	checkDeploymentsNameExposedMetrics(t, after, kafkaOnly...)
}

// kafkaOnly are the series only a relay or a worker with Kafka exposes; the embedded check
// leaves them to TestBacklogVisibleWhileTheWorkerIsDown, which scrapes a relay.
var kafkaOnly = []string{"formward_kafka_consumer_lag", "formward_kafka_consumer_lag_scrape_ok"}

// TestBacklogVisibleWhileTheWorkerIsDown runs serve and the relay with Kafka and no worker: the
// submissions' events wait on the topic, and the relay reports the workers' consumer lag. A
// worker then fans them out into deliveries to an endpoint that fails, and is killed: the
// retries fall due with nobody to send them, and serve and the relay report them from the
// database. While the worker is down more submissions raise the lag again; a worker started
// again brings every gauge back to 0.
func TestBacklogVisibleWhileTheWorkerIsDown(t *testing.T) {
	t.Parallel()
	in, rc := newKafkaPipelineInstance(t)
	in.setEnv("FORMWARD_KAFKA_PARTITIONS", "4")
	in.setEnv("FORMWARD_KAFKA_SESSION_TIMEOUT", "6s")
	// One attempt, then a retry 15s later that the killed worker will not make.
	in.setEnv("FORMWARD_RETRY_DELAYS", "15s,1h")
	in.setEnv("FORMWARD_BREAKER_FAILURES", "100")
	serveMetrics, relayMetrics := freeAddr(t), freeAddr(t)
	in.setEnv("FORMWARD_METRICS_ADDR", serveMetrics)
	in.cli("migrate")
	key := in.cli("keys", "create", "--name", "backlog", "--scope", "admin")
	in.startServe()
	relay := in.startProc("relay", "--metrics-addr", relayMetrics)

	form, field := createForm(t, in, key, "Backlog")
	registerWebhook(t, in, key, rc.url("/down"), form, newSecret(t), "submission.created")

	type gauges struct{ due, oldest, runs, lag, pending float64 }
	read := func(addr string) (gauges, bool) {
		s, err := tryScrape(addr)
		if err != nil || len(s["formward_deliveries_due"]) == 0 || len(s["formward_outbox_pending_events"]) == 0 {
			return gauges{}, false
		}
		return gauges{due: s.sum("formward_deliveries_due"), oldest: s.sum("formward_deliveries_oldest_due_seconds"),
			runs: s.sum("formward_workflow_runs_due"), lag: s.sum("formward_kafka_consumer_lag", "group", "formward-worker"),
			pending: s.sum("formward_outbox_pending_events")}, len(s["formward_kafka_consumer_lag"]) > 0 || addr != relayMetrics
	}
	var at gauges
	waitFor := func(addr, what string, cond func(g gauges) bool) gauges {
		t.Helper()
		eventually(t, 60*time.Second, what, func() bool {
			g, ok := read(addr)
			at = g
			return ok && cond(g)
		})
		return at
	}

	// Before: a draft form and a webhook make no event; nothing is due, nothing waits.
	base := waitFor(relayMetrics, "the relay's first scrape with an empty outbox", func(g gauges) bool { return g.pending == 0 })
	if base.due != 0 || base.oldest != 0 || base.runs != 0 || base.lag != 0 {
		t.Fatalf("before any submission: %+v, want nothing due and no lag", base)
	}
	const n = 6
	for i := range n {
		submit(t, in, key, form, field, fmt.Sprintf("while no worker runs %d", i))
	}
	lagged := waitFor(relayMetrics, "the lag of the submissions' events", func(g gauges) bool { return g.pending == 0 && g.lag == n })
	t.Logf("worker never started, %d submissions: relay reports lag %v (was 0), deliveries due %v (the worker makes them), outbox pending %v",
		n, lagged.lag, lagged.due, lagged.pending)

	// A worker takes the events, makes n deliveries and fails each once; it is killed before
	// the retries.
	worker := in.startProc("worker")
	eventually(t, 60*time.Second, "the first attempt of every delivery", func() bool { return len(rc.requests("/down")) >= n })
	waitFor(relayMetrics, "the worker's commits", func(g gauges) bool { return g.lag == 0 })
	worker.kill(t)
	if got := len(rc.requests("/down")); got != n {
		t.Fatalf("%d attempts before the kill, want %d (the retries came too early for this test)", got, n)
	}
	for _, addr := range []string{serveMetrics, relayMetrics} {
		g := waitFor(addr, "the retries due with no worker", func(g gauges) bool { return g.due == n && g.oldest > 0 })
		t.Logf("worker killed: %s reports %v deliveries due, the oldest for %.1fs, Kafka lag %v, outbox pending %v",
			map[string]string{serveMetrics: "serve", relayMetrics: "relay"}[addr], g.due, g.oldest, g.lag, g.pending)
	}
	// The worker had committed what it fanned out; what comes now waits on the topic.
	for i := range 3 {
		submit(t, in, key, form, field, fmt.Sprintf("while the worker is down %d", i))
	}
	g := waitFor(relayMetrics, "the lag of the events after the kill", func(g gauges) bool { return g.pending == 0 && g.lag == 3 })
	if g.due != n {
		t.Fatalf("deliveries due %v after more submissions, want still %d (no worker makes new ones)", g.due, n)
	}
	t.Logf("worker down, 3 more submissions: relay reports lag %v, deliveries due %v, oldest %.1fs", g.lag, g.due, g.oldest)

	// Back to normal: the endpoint recovers, a worker runs again, and nothing waits.
	rc.healed.Store(true)
	worker = in.startProc("worker")
	waitFor(relayMetrics, "an empty backlog", func(g gauges) bool { return g.due == 0 && g.oldest == 0 && g.lag == 0 })
	waitFor(serveMetrics, "an empty backlog on serve", func(g gauges) bool { return g.due == 0 && g.oldest == 0 })

	after := scrape(t, relayMetrics)
	for _, name := range kafkaOnly {
		if len(after[name]) == 0 {
			t.Fatalf("the relay does not expose %s", name)
		}
	}
	worker.stop(t)
	relay.stop(t)
	in.stopServe()
}

// metricRef finds metric names in PromQL: Formward's own, the Go runtime's and the process's.
var metricRef = regexp.MustCompile(`\b(?:formward|go|process)_[a-zA-Z0-9_]+\b`)

// checkDeploymentsNameExposedMetrics parses the Grafana dashboard and the Prometheus rules and
// fails on any metric name they use that the scrape does not have, but for the names elsewhere
// (exposed by another role, checked by another test).
func checkDeploymentsNameExposedMetrics(t *testing.T, scraped series, elsewhere ...string) {
	t.Helper()
	var exprs []string

	raw, err := os.ReadFile("../deployments/grafana/formward.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana dashboard: %v", err)
	}
	if dash.Title == "" || len(dash.Panels) == 0 {
		t.Fatalf("grafana dashboard without a title or panels")
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}

	raw, err = os.ReadFile("../deployments/prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		t.Fatalf("alert rules: %v", err)
	}
	alerts := 0
	for _, g := range rules.Groups {
		if g.Name == "" {
			t.Fatalf("rule group without a name")
		}
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Fatalf("alert rule %q needs alert, expr, a severity label and a summary", r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Fatalf("alert %s: for %q: %v", r.Alert, r.For, err)
				}
			}
			exprs = append(exprs, r.Expr)
			alerts++
		}
	}
	if alerts < 5 {
		t.Fatalf("%d alert rules, want at least 5", alerts)
	}

	exposed := map[string]bool{}
	for name := range scraped {
		exposed[name] = true
	}
	for _, name := range elsewhere {
		exposed[name] = true
	}
	var missing []string
	for _, e := range exprs {
		for _, name := range metricRef.FindAllString(e, -1) {
			if !exposed[name] {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Fatalf("the dashboard or the alert rules name metrics the binary does not expose: %v", missing)
	}
}
