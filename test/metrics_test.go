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
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %d %s", resp.StatusCode, b)
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
	return out
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
	rc := newReceiver(t)
	in := newInstance(t, "", "")
	pipelineEnv(in, rc)
	metricsAddr := freeAddr(t)
	in.setEnv("FORMWARD_METRICS_ADDR", metricsAddr)
	key := in.cli("keys", "create", "--name", "metrics", "--scope", "admin")
	in.startServe()

	before := scrape(t, metricsAddr)
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "go_sql_open_connections",
		"formward_outbox_pending_events", "formward_storage_writes_failing", "formward_captures_total"} {
		if len(before[name]) == 0 {
			t.Fatalf("%s missing from the first scrape", name)
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		after = scrape(t, metricsAddr)
		var lagging []string
		for _, c := range checks {
			if moved := after.sum(c.name, c.labels...) - before.sum(c.name, c.labels...); moved < c.atLeast {
				lagging = append(lagging, fmt.Sprintf("%s: %s%v moved by %v, want at least %v", c.what, c.name, c.labels, moved, c.atLeast))
			}
		}
		if len(lagging) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("series did not move within 20s:\n%s", strings.Join(lagging, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, smp := range after["formward_spam_total"] {
		if _, ok := smp.labels["form_id"]; ok {
			t.Fatalf("formward_spam_total has the unbounded form_id label: %v", smp.labels)
		}
	}
	if after.sum("formward_outbox_pending_events") < 0 || len(after["formward_outbox_oldest_pending_age_seconds"]) == 0 {
		t.Fatalf("outbox gauges missing")
	}

	checkDeploymentsNameExposedMetrics(t, after)
}

// metricRef finds metric names in PromQL: Formward's own, the Go runtime's and the process's.
var metricRef = regexp.MustCompile(`\b(?:formward|go|process)_[a-zA-Z0-9_]+\b`)

// checkDeploymentsNameExposedMetrics parses the Grafana dashboard and the Prometheus rules and
// fails on any metric name they use that the scrape does not have.
func checkDeploymentsNameExposedMetrics(t *testing.T, scraped series) {
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
