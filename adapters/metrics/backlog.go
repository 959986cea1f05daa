package metrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The worker's backlog is reported by every process that can see it, not by the worker alone:
// a worker that is down reports nothing, so its backlog is read where it is kept (the deliveries
// and runs tables, the consumer group's offsets on the brokers) by serve and the relay too.

// backlogCacheFor is how long one reading of the backlog answers scrapes: several scrapers in a
// row (two Prometheus replicas, a dashboard refresh) cost the database or the brokers one read.
const backlogCacheFor = 5 * time.Second

// DueDeliveries counts the deliveries due at now and not yet attempted, and returns the
// earliest of their due times (zero when there is none).
type DueDeliveries func(ctx context.Context, now time.Time) (due int64, oldest time.Time, err error)

// DueRuns counts the workflow runs due at now and not yet attempted.
type DueRuns func(ctx context.Context, now time.Time) (due int64, err error)

// WatchDueWork adds formward_deliveries_due, formward_deliveries_oldest_due_seconds and
// formward_workflow_runs_due, read from the database on scrape (at most once per
// backlogCacheFor).
func (m *Metrics) WatchDueWork(deliveries DueDeliveries, runs DueRuns, now func() time.Time) {
	c := &dueCollector{}
	c.reading = cached[dueReading]{ttl: backlogCacheFor, now: now, read: func(ctx context.Context) (dueReading, error) {
		at := now()
		n, oldest, err := deliveries(ctx, at)
		if err != nil {
			return dueReading{}, err
		}
		runsDue, err := runs(ctx, at)
		if err != nil {
			return dueReading{}, err
		}
		r := dueReading{deliveries: float64(n), runs: float64(runsDue)}
		if n > 0 && !oldest.IsZero() {
			r.oldestAge = max(at.Sub(oldest).Seconds(), 0)
		}
		return r, nil
	}}
	m.Registry.MustRegister(c)
}

var (
	deliveriesDueDesc = prometheus.NewDesc("formward_deliveries_due",
		"Webhook deliveries due and not yet attempted (pending, their next attempt time reached, claimed by no worker), read from the database.", nil, nil)
	deliveriesOldestDesc = prometheus.NewDesc("formward_deliveries_oldest_due_seconds",
		"How long the longest-waiting due delivery has been due (0 when none is).", nil, nil)
	runsDueDesc = prometheus.NewDesc("formward_workflow_runs_due",
		"Workflow runs (and form notifications) due and not yet attempted, read from the database.", nil, nil)
	dueUpDesc = prometheus.NewDesc("formward_due_work_scrape_ok",
		"1 when the due deliveries and runs could be read at this scrape, 0 when the query failed.", nil, nil)
)

type dueReading struct {
	deliveries, oldestAge, runs float64
}

type dueCollector struct {
	reading cached[dueReading]
}

func (c *dueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- deliveriesDueDesc
	ch <- deliveriesOldestDesc
	ch <- runsDueDesc
	ch <- dueUpDesc
}

func (c *dueCollector) Collect(ch chan<- prometheus.Metric) {
	r, err := c.reading.get()
	if err != nil {
		ch <- prometheus.MustNewConstMetric(dueUpDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(dueUpDesc, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(deliveriesDueDesc, prometheus.GaugeValue, r.deliveries)
	ch <- prometheus.MustNewConstMetric(deliveriesOldestDesc, prometheus.GaugeValue, r.oldestAge)
	ch <- prometheus.MustNewConstMetric(runsDueDesc, prometheus.GaugeValue, r.runs)
}

// ConsumerLag reads a consumer group's lag on its topic: events not yet handled, by partition.
type ConsumerLag func(ctx context.Context) (map[int]int64, error)

// WatchConsumerLag adds formward_kafka_consumer_lag{topic, partition, group}, read from the
// brokers on scrape (at most once per backlogCacheFor).
func (m *Metrics) WatchConsumerLag(topic, group string, lag ConsumerLag, now func() time.Time) {
	labels := prometheus.Labels{"topic": topic, "group": group}
	m.Registry.MustRegister(&lagCollector{
		lag: prometheus.NewDesc("formward_kafka_consumer_lag",
			"Events on the topic that the consumer group of formward worker has not handled yet (high watermark minus committed offset), by partition; read from the brokers.",
			[]string{"partition"}, labels),
		up: prometheus.NewDesc("formward_kafka_consumer_lag_scrape_ok",
			"1 when the consumer group's lag could be read from the brokers at this scrape, 0 when it failed.", nil, labels),
		reading: cached[map[int]int64]{ttl: backlogCacheFor, now: now, read: lag},
	})
}

type lagCollector struct {
	lag, up *prometheus.Desc
	reading cached[map[int]int64]
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.up
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	lags, err := c.reading.get()
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for p, n := range lags {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(n), strconv.Itoa(p))
	}
}

// cached is one reading kept for ttl. A failed read is not kept: the next scrape tries again.
// Scrapes that arrive during a read wait for it instead of starting their own.
type cached[T any] struct {
	ttl  time.Duration
	now  func() time.Time
	read func(ctx context.Context) (T, error)

	mu  sync.Mutex
	at  time.Time
	val T
	ok  bool
}

func (c *cached[T]) get() (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.ok && now.Sub(c.at) < c.ttl && !now.Before(c.at) {
		return c.val, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	v, err := c.read(ctx)
	if err != nil {
		c.ok = false
		var zero T
		return zero, err
	}
	c.at, c.val, c.ok = now, v, true
	return v, nil
}
