// Package metrics is Formward's Prometheus instrumentation. It only translates: decorators of
// the observers the use cases already call (relay, delivery engine, run engine), an HTTP
// decorator of the capture routes, and collectors that read state on scrape. The application
// and domain never import Prometheus. docs/metrics.md lists every series.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Capture sources, the source label.
const (
	SourceAPI  = "api"
	SourceForm = "form"
)

// Capture outcomes, the outcome label of formward_captures_total.
const (
	OutcomeStored      = "stored"
	OutcomeInvalid     = "invalid"
	OutcomeSpam        = "spam"
	OutcomeClosed      = "closed"
	OutcomeRateLimited = "rate_limited"
	OutcomeUnavailable = "unavailable"
	OutcomeError       = "error"
)

// Delivery and action outcomes, the outcome label of the webhook and workflow series.
const (
	OutcomeDelivered     = "delivered"
	OutcomeFailed        = "failed"
	OutcomeUndeliverable = "undeliverable"
	OutcomeBreakerOpen   = "breaker_open"
)

// Backup outcomes, the outcome label of formward_backups_total.
const (
	OutcomeBackupOK    = "ok"
	OutcomeBackupError = "error"
)

// Engines, the engine label of formward_engine_step_failures_total.
const (
	engineDeliveries = "deliveries"
	engineRuns       = "runs"
)

// Metrics holds one process's registry and Formward's own collectors in it.
type Metrics struct {
	// Registry is what /metrics on FORMWARD_METRICS_ADDR serves.
	Registry *prometheus.Registry

	captures        *prometheus.CounterVec
	captureDuration *prometheus.HistogramVec
	refusals        *prometheus.CounterVec
	refusalReasons  *capped

	groupCommit prometheus.Histogram

	relayPublished prometheus.Counter
	relayLag       prometheus.Histogram
	relayFailures  *prometheus.CounterVec
	relayBatches   prometheus.Histogram

	deliveries       *prometheus.CounterVec
	deliveryDuration *prometheus.HistogramVec
	actions          *prometheus.CounterVec
	actionDuration   *prometheus.HistogramVec
	engineFailures   *prometheus.CounterVec

	backups *prometheus.CounterVec
}

// latencyBuckets cover a fast capture (about a millisecond) to a slow endpoint (tens of seconds).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New makes a registry with the Go runtime and process collectors and Formward's series.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		Registry: reg,
		captures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "formward_captures_total",
			Help: "Submission posts answered, by source (api, form) and outcome (stored, invalid, spam, closed, rate_limited, unavailable, error).",
		}, []string{"source", "outcome"}),
		captureDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "formward_capture_duration_seconds",
			Help:    "Time to answer a submission post, by source and outcome.",
			Buckets: latencyBuckets,
		}, []string{"source", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "formward_capture_refusals_total",
			Help: "Submission posts refused for their content or request, by source and reason (a validation rule code or an error code; at most 64 reasons, then other).",
		}, []string{"source", "reason"}),
		refusalReasons: newCapped(maxReasons),
		groupCommit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "formward_group_commit_batch_size",
			Help:    "Submissions written by one group-commit transaction.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
		}),
		relayPublished: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "formward_relay_published_events_total",
			Help: "Outbox events published by the relay (to Kafka, or to the in-process bus in embedded mode).",
		}),
		relayLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "formward_relay_lag_seconds",
			Help:    "Time from an event's occurrence (its outbox row) to its publication.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900},
		}),
		relayFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "formward_relay_failures_total",
			Help: "Relay steps that failed and will be retried, by step.",
		}, []string{"step"}),
		relayBatches: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "formward_relay_batch_size",
			Help:    "Events published by one relay batch.",
			Buckets: []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000},
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "formward_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by outcome (delivered, failed: will retry, undeliverable: gave up, breaker_open: not attempted).",
		}, []string{"outcome"}),
		deliveryDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "formward_webhook_delivery_duration_seconds",
			Help:    "Duration of a webhook delivery attempt, by outcome.",
			Buckets: latencyBuckets,
		}, []string{"outcome"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "formward_workflow_actions_total",
			Help: "Workflow action attempts, by action type and outcome (delivered, failed: will retry, undeliverable: gave up, breaker_open: not attempted).",
		}, []string{"type", "outcome"}),
		actionDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "formward_workflow_action_duration_seconds",
			Help:    "Duration of a workflow action attempt, by action type and outcome.",
			Buckets: latencyBuckets,
		}, []string{"type", "outcome"}),
		engineFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "formward_engine_step_failures_total",
			Help: "Steps of the delivery and run engines that failed (database errors) and are retried, by engine (deliveries, runs) and step.",
		}, []string{"engine", "step"}),
		backups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "formward_backups_total",
			Help: "Scheduled backups serve attempted, by outcome (ok, error: logged with the reason and retried).",
		}, []string{"outcome"}),
	}
	reg.MustRegister(m.engineFailures, m.backups)
	reg.MustRegister(m.captures, m.captureDuration, m.refusals, m.groupCommit, m.relayPublished, m.relayLag,
		m.relayFailures, m.relayBatches, m.deliveries, m.deliveryDuration, m.actions, m.actionDuration)
	// Every series of a bounded label set exists from the start at 0, so rate() and ratios
	// work before the first event of a kind.
	for _, s := range []string{SourceAPI, SourceForm} {
		for _, o := range []string{OutcomeStored, OutcomeInvalid, OutcomeSpam, OutcomeClosed, OutcomeRateLimited, OutcomeUnavailable, OutcomeError} {
			m.captures.WithLabelValues(s, o)
		}
	}
	for _, o := range []string{OutcomeDelivered, OutcomeFailed, OutcomeUndeliverable, OutcomeBreakerOpen} {
		m.deliveries.WithLabelValues(o)
	}
	for _, o := range []string{OutcomeBackupOK, OutcomeBackupError} {
		m.backups.WithLabelValues(o)
	}
	return m
}

// ObserveGroupCommit records the size of one group-commit batch.
func (m *Metrics) ObserveGroupCommit(size int) {
	m.groupCommit.Observe(float64(size))
}

// ObserveBackup counts one scheduled backup: taken when err is nil, failed otherwise.
func (m *Metrics) ObserveBackup(err error) {
	outcome := OutcomeBackupOK
	if err != nil {
		outcome = OutcomeBackupError
	}
	m.backups.WithLabelValues(outcome).Inc()
}
