package bootstrap

import (
	"context"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/ports"
)

// provideMetrics is the process's registry: Go runtime and process, the database pool, group
// commits, the outbox backlog and the work due (every process reports the worker's backlog, so a
// worker that is down cannot hide it). The observers of the relay and the engines, the capture
// routes and the circuit breakers add theirs where they are wired (see docs/metrics.md).
func provideMetrics(db *persistence.DB, clock ports.Clock) *metrics.Metrics {
	m := metrics.New()
	db.ObserveGroupCommits(m.ObserveGroupCommit)
	m.WatchDatabase(db.SQL(), db.OutboxBacklog, clock.Now)
	m.WatchDueWork(db.DeliveriesDue, db.RunsDue, clock.Now)
	return m
}

// watchConsumerLag adds the lag of the workers' consumer group, read from the brokers: the relay
// reports it while no worker runs, and each worker reports it too.
func watchConsumerLag(m *metrics.Metrics, cfg Config) {
	r := kafka.NewLagReader(cfg.Brokers(), cfg.KafkaTopic, cfg.KafkaGroup)
	m.WatchConsumerLag(r.Topic(), r.Group(), func(ctx context.Context) (map[int]int64, error) {
		lags, err := r.Lag(ctx)
		if err != nil {
			return nil, err
		}
		out := make(map[int]int64, len(lags))
		for _, l := range lags {
			out[l.Partition] = l.Lag
		}
		return out, nil
	}, system.Clock{}.Now)
}

// watchBreakers adds the webhook client's circuit breaker counts to the registry.
func watchBreakers(m *metrics.Metrics, c *delivery.Client) {
	if m != nil {
		m.WatchBreakers("webhooks", c.BreakerCounts)
	}
}

// bindMetrics registers the metrics listener of every long-running role (serve, relay, worker).
func bindMetrics(b *binder, c *Config) {
	b.String(&c.MetricsAddr, "metrics-addr", "127.0.0.1:9464", "address of the Prometheus /metrics listener (never the public one), where relay and worker also answer /healthz and /readyz; empty turns it off")
}

// startMetrics serves the registry and the role's probes on FORMWARD_METRICS_ADDR unless it is
// empty (relay and worker).
func startMetrics(cfg Config, m *metrics.Metrics, probes *roleProbes, log *zap.Logger) {
	if cfg.MetricsAddr != "" && m != nil {
		go serveMetrics(cfg.MetricsAddr, m.Registry, probes, log)
	}
}

// watchReadiness exports the readiness tracker's storage state.
func watchReadiness(m *metrics.Metrics, rd *readiness) {
	m.WatchStorage(func() bool {
		rd.mu.Lock()
		failing := rd.failing
		rd.mu.Unlock()
		return failing || rd.writesFailing()
	})
}

// watchActionBreakers counts the breakers of the actions with their own clients (send_email,
// chat_message, spreadsheet_append) as formward_circuit_breakers{client="actions"}.
func watchActionBreakers(m *metrics.Metrics) func(*actionkit.Breakers) {
	if m == nil {
		return nil
	}
	sets := &actionkit.BreakerSets{}
	m.WatchBreakers("actions", sets.Counts)
	return sets.Add
}
