package bootstrap

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"
)

// roleConfig parses the flags of one role like the CLI does.
func roleConfig(t *testing.T, role string, args ...string) Config {
	t.Helper()
	return roleCLI(t, role, args...).cfg
}

func gatheredNames(t *testing.T, reg *prometheus.Registry) map[string]bool {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return names
}

func wantNames(t *testing.T, role string, got map[string]bool, names ...string) {
	t.Helper()
	for _, n := range names {
		if !got[n] {
			t.Errorf("%s: %s is not registered", role, n)
		}
	}
}

// Every role that does the work exposes its series: serve (with the embedded pipeline), relay
// and worker, each on its own --metrics-addr.
func TestMetricsRegisteredInEveryRole(t *testing.T) {
	ctx := context.Background()
	common := []string{"go_goroutines", "process_cpu_seconds_total", "go_sql_open_connections",
		"formward_outbox_pending_events", "formward_outbox_oldest_pending_age_seconds",
		"formward_deliveries_due", "formward_deliveries_oldest_due_seconds", "formward_workflow_runs_due"}

	serveCfg := roleConfig(t, "serve", "--metrics-addr", "127.0.0.1:19464")
	if serveCfg.MetricsAddr != "127.0.0.1:19464" {
		t.Fatalf("serve --metrics-addr = %q", serveCfg.MetricsAddr)
	}
	sp, cleanup, err := newServeProcess(ctx, serveCfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if _, _, err := newServeHandler(serveCfg, sp.Runtime); err != nil {
		t.Fatal(err)
	}
	wantNames(t, "serve", gatheredNames(t, sp.Runtime.Metrics.Registry), append(common, "formward_captures_total",
		"formward_webhook_deliveries_total", "formward_workflow_actions_total", "formward_relay_published_events_total",
		"formward_relay_failures_total", "formward_engine_step_failures_total",
		"formward_circuit_breakers", "formward_storage_writes_failing")...)

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()[0]

	relayCfg := roleConfig(t, "relay", "--kafka-brokers", brokers, "--metrics-addr", "127.0.0.1:19465")
	if relayCfg.MetricsAddr != "127.0.0.1:19465" {
		t.Fatalf("relay --metrics-addr = %q", relayCfg.MetricsAddr)
	}
	rp, cleanupRelay, err := newRelayProcess(ctx, relayCfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanupRelay()
	if relayCfg.KafkaGroup != "formward-worker" {
		t.Fatalf("relay --kafka-group = %q, want the workers' default", relayCfg.KafkaGroup)
	}
	watchConsumerLag(rp.Metrics, relayCfg)
	wantNames(t, "relay", gatheredNames(t, rp.Metrics.Registry), append(common, "formward_relay_published_events_total",
		"formward_relay_failures_total", "formward_kafka_consumer_lag")...)

	workerCfg := roleConfig(t, "worker", "--kafka-brokers", brokers, "--metrics-addr", "127.0.0.1:19466")
	if workerCfg.MetricsAddr != "127.0.0.1:19466" {
		t.Fatalf("worker --metrics-addr = %q", workerCfg.MetricsAddr)
	}
	wp, cleanupWorker, err := newWorkerProcess(ctx, workerCfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanupWorker()
	watchConsumerLag(wp.Metrics, workerCfg)
	wantNames(t, "worker", gatheredNames(t, wp.Metrics.Registry), append(common, "formward_webhook_deliveries_total",
		"formward_workflow_actions_total", "formward_engine_step_failures_total", "formward_circuit_breakers", "formward_kafka_consumer_lag")...)
}
