package bootstrap

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/persistence"
)

// probeTimeout bounds the checks behind one /readyz; the chart's probes wait a little longer.
const probeTimeout = 2 * time.Second

// roleProbes answer /healthz and /readyz on the metrics listener of relay and worker, which have
// no HTTP API of their own: the Kubernetes probes and compose healthchecks call them.
//
// /healthz (liveness) answers 200 while the role's loops run: from the moment they start until
// they return at shutdown. /readyz (readiness) answers 200 when the database answers a ping and
// a Kafka broker answers a metadata request, within probeTimeout; 503 otherwise, the reason
// logged.
type roleProbes struct {
	running atomic.Bool
	ready   func(ctx context.Context) error
	log     *zap.Logger
}

// newRoleProbes checks the role's database and Kafka brokers.
func newRoleProbes(db *persistence.DB, brokers []string, log *zap.Logger) *roleProbes {
	return &roleProbes{log: log, ready: func(ctx context.Context) error {
		if err := db.Ping(ctx); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		return kafka.Reachable(ctx, brokers)
	}}
}

// watchRole serves a Kafka role's metrics, its consumer lag among them, with probes of its
// database and brokers.
func (c *cli) watchRole(m *metrics.Metrics, db *persistence.DB, log *zap.Logger) *roleProbes {
	watchConsumerLag(m, c.cfg)
	probes := newRoleProbes(db, c.cfg.Brokers(), log)
	startMetrics(c.cfg, m, probes, log)
	return probes
}

// run marks the role live while fn runs.
func (p *roleProbes) run(fn func()) {
	p.running.Store(true)
	defer p.running.Store(false)
	fn()
}

func (p *roleProbes) mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if !p.running.Load() {
			writeStatus(w, http.StatusServiceUnavailable, "stopped")
			return
		}
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
		defer cancel()
		if err := p.ready(ctx); err != nil {
			p.log.Warn("not ready", zap.Error(err))
			w.Header().Set("Retry-After", "5")
			writeStatus(w, http.StatusServiceUnavailable, "unavailable")
			return
		}
		writeStatus(w, http.StatusOK, "ok")
	})
}

// writeStatus answers as serve's /healthz and /readyz do: {"status": …}.
func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, "{\"status\":%q}\n", status)
}
