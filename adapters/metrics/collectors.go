package metrics

import (
	"context"
	"database/sql"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// scrapeTimeout bounds the queries a scrape runs.
const scrapeTimeout = 5 * time.Second

// Backlog reads the outbox's unpublished events: how many, and when the oldest occurred (zero
// when there is none).
type Backlog func(ctx context.Context) (pending int64, oldest time.Time, err error)

// WatchDatabase adds the connection pool series (go_sql_*{db_name="formward"}) and, when backlog
// is set, the outbox gauges, read with one cheap query per scrape.
func (m *Metrics) WatchDatabase(db *sql.DB, backlog Backlog, now func() time.Time) {
	m.Registry.MustRegister(collectors.NewDBStatsCollector(db, "formward"))
	if backlog != nil {
		m.Registry.MustRegister(&outboxCollector{backlog: backlog, now: now})
	}
}

var (
	outboxPendingDesc = prometheus.NewDesc("formward_outbox_pending_events",
		"Events in the outbox not yet published by the relay.", nil, nil)
	outboxAgeDesc = prometheus.NewDesc("formward_outbox_oldest_pending_age_seconds",
		"Age of the oldest unpublished outbox event (0 when none is pending).", nil, nil)
	outboxUpDesc = prometheus.NewDesc("formward_outbox_scrape_ok",
		"1 when the outbox gauges could be read at this scrape, 0 when the query failed.", nil, nil)
)

type outboxCollector struct {
	backlog Backlog
	now     func() time.Time
}

func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- outboxPendingDesc
	ch <- outboxAgeDesc
	ch <- outboxUpDesc
}

func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	n, oldest, err := c.backlog(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(outboxUpDesc, prometheus.GaugeValue, 0)
		return
	}
	age := 0.0
	if n > 0 && !oldest.IsZero() {
		age = max(c.now().Sub(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(outboxUpDesc, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(outboxPendingDesc, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(outboxAgeDesc, prometheus.GaugeValue, age)
}

// BreakerCounts says how many circuit breakers are closed, half-open and open.
type BreakerCounts func() (closed, halfOpen, open int)

// WatchBreakers adds formward_circuit_breakers{client, state} read from counts on scrape; each
// client (webhooks, actions) is watched once.
func (m *Metrics) WatchBreakers(client string, counts BreakerCounts) {
	desc := prometheus.NewDesc("formward_circuit_breakers",
		"Circuit breakers of outbound endpoints (one per webhook or workflow action that sent), by client and state; counts, never endpoint IDs.",
		[]string{"state"}, prometheus.Labels{"client": client})
	m.Registry.MustRegister(&breakerCollector{desc: desc, counts: counts})
}

type breakerCollector struct {
	desc   *prometheus.Desc
	counts BreakerCounts
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	closed, half, open := c.counts()
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(closed), "closed")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(half), "half_open")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(open), "open")
}

// WatchStorage adds formward_storage_writes_failing, 1 while the process refuses writes because
// storage failed (the state /readyz answers 503 in), read from failing on scrape.
func (m *Metrics) WatchStorage(failing func() bool) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "formward_storage_writes_failing",
		Help: "1 while storage refuses writes (disk full, database or object store failing) and /readyz answers 503; 0 otherwise.",
	}, func() float64 {
		if failing() {
			return 1
		}
		return 0
	}))
}
