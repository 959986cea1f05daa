package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/formward/formward/application/relay"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/application/workflows"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestDueWorkGaugesAreReadOnScrapeAndCachedBriefly(t *testing.T) {
	m := New()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	var due, runs int64
	var oldest time.Time
	var fail error
	reads := 0
	m.WatchDueWork(func(_ context.Context, now time.Time) (int64, time.Time, error) {
		reads++
		if !now.Equal(clock.t) {
			t.Errorf("deliveries read for %v, the clock says %v", now, clock.t)
		}
		return due, oldest, fail
	}, func(_ context.Context, now time.Time) (int64, error) {
		return runs, fail
	}, clock.now)
	names := []string{"formward_deliveries_due", "formward_deliveries_oldest_due_seconds", "formward_workflow_runs_due", "formward_due_work_scrape_ok"}
	check := func(want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), names...); err != nil {
			t.Fatal(err)
		}
	}
	const help = `
# HELP formward_deliveries_due Webhook deliveries due and not yet attempted (pending, their next attempt time reached, claimed by no worker), read from the database.
# TYPE formward_deliveries_due gauge
# HELP formward_deliveries_oldest_due_seconds How long the longest-waiting due delivery has been due (0 when none is).
# TYPE formward_deliveries_oldest_due_seconds gauge
# HELP formward_workflow_runs_due Workflow runs (and form notifications) due and not yet attempted, read from the database.
# TYPE formward_workflow_runs_due gauge
# HELP formward_due_work_scrape_ok 1 when the due deliveries and runs could be read at this scrape, 0 when the query failed.
# TYPE formward_due_work_scrape_ok gauge
`
	check(help + "formward_deliveries_due 0\nformward_deliveries_oldest_due_seconds 0\nformward_workflow_runs_due 0\nformward_due_work_scrape_ok 1\n")

	// The backlog grows while nobody works on it; within the cache's life a scrape reads nothing.
	due, runs, oldest = 7, 2, clock.t.Add(-90*time.Second)
	clock.t = clock.t.Add(backlogCacheFor / 2)
	check(help + "formward_deliveries_due 0\nformward_deliveries_oldest_due_seconds 0\nformward_workflow_runs_due 0\nformward_due_work_scrape_ok 1\n")
	if reads != 1 {
		t.Fatalf("%d reads for two scrapes within %v", reads, backlogCacheFor)
	}
	clock.t = clock.t.Add(backlogCacheFor)
	check(help + "formward_deliveries_due 7\nformward_deliveries_oldest_due_seconds 97.5\nformward_workflow_runs_due 2\nformward_due_work_scrape_ok 1\n")

	// A failed read says so and hides the gauges rather than showing a stale value; the next
	// scrape tries again.
	fail = errors.New("database down")
	clock.t = clock.t.Add(backlogCacheFor)
	check(`
# HELP formward_due_work_scrape_ok 1 when the due deliveries and runs could be read at this scrape, 0 when the query failed.
# TYPE formward_due_work_scrape_ok gauge
formward_due_work_scrape_ok 0
`)
	fail = nil
	check(help + "formward_deliveries_due 7\nformward_deliveries_oldest_due_seconds 102.5\nformward_workflow_runs_due 2\nformward_due_work_scrape_ok 1\n")
}

func TestConsumerLagGaugeByPartition(t *testing.T) {
	m := New()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	lag := map[int]int64{0: 0, 1: 12, 2: 3}
	var fail error
	m.WatchConsumerLag("formward.events.v1", "formward-worker", func(context.Context) (map[int]int64, error) {
		return lag, fail
	}, clock.now)
	const head = `
# HELP formward_kafka_consumer_lag Events on the topic that the consumer group of formward worker has not handled yet (high watermark minus committed offset), by partition; read from the brokers.
# TYPE formward_kafka_consumer_lag gauge
formward_kafka_consumer_lag{group="formward-worker",partition="0",topic="formward.events.v1"} 0
formward_kafka_consumer_lag{group="formward-worker",partition="1",topic="formward.events.v1"} 12
formward_kafka_consumer_lag{group="formward-worker",partition="2",topic="formward.events.v1"} 3
`
	const ok = `
# HELP formward_kafka_consumer_lag_scrape_ok 1 when the consumer group's lag could be read from the brokers at this scrape, 0 when it failed.
# TYPE formward_kafka_consumer_lag_scrape_ok gauge
formward_kafka_consumer_lag_scrape_ok{group="formward-worker",topic="formward.events.v1"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(head+ok), "formward_kafka_consumer_lag", "formward_kafka_consumer_lag_scrape_ok"); err != nil {
		t.Fatal(err)
	}
	fail = errors.New("no broker reachable")
	clock.t = clock.t.Add(backlogCacheFor)
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(strings.Replace(ok, "} 1", "} 0", 1)), "formward_kafka_consumer_lag", "formward_kafka_consumer_lag_scrape_ok"); err != nil {
		t.Fatal(err)
	}
}

// The failure counters alerts and dashboards read are on the first scrape, at 0 for every step
// the relay and the engines may report, before anything failed.
func TestFailureCountersStartAtZero(t *testing.T) {
	m := New()
	m.RelayObserver(nil, time.Now)
	m.DeliveryObserver(nil)
	m.RunObserver(nil, []string{"send_webhook"})
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, f := range families {
		series := map[string]float64{}
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			series[strings.Join(labels, ",")] = s.GetCounter().GetValue()
		}
		got[f.GetName()] = series
	}
	want := map[string][]string{}
	for _, step := range relay.RelaySteps() {
		want["formward_relay_failures_total"] = append(want["formward_relay_failures_total"], "step="+step)
	}
	for _, step := range webhooks.DeliverySteps() {
		want["formward_engine_step_failures_total"] = append(want["formward_engine_step_failures_total"], "engine=deliveries,step="+step)
	}
	for _, step := range workflows.RunSteps() {
		want["formward_engine_step_failures_total"] = append(want["formward_engine_step_failures_total"], "engine=runs,step="+step)
	}
	for _, o := range []string{OutcomeDelivered, OutcomeFailed, OutcomeUndeliverable, OutcomeBreakerOpen} {
		want["formward_webhook_deliveries_total"] = append(want["formward_webhook_deliveries_total"], "outcome="+o)
		want["formward_workflow_actions_total"] = append(want["formward_workflow_actions_total"], "outcome="+o+",type=send_webhook")
	}
	for name, series := range want {
		if len(got[name]) != len(series) {
			t.Errorf("%s: %d series on the first scrape, want %d: %v", name, len(got[name]), len(series), got[name])
		}
		for _, s := range series {
			if v, ok := got[name][s]; !ok || v != 0 {
				t.Errorf("%s{%s}: present %v, value %v; want present at 0", name, s, ok, v)
			}
		}
	}
	if len(relay.RelaySteps()) < 6 || len(webhooks.DeliverySteps()) < 3 || len(workflows.RunSteps()) < 3 {
		t.Fatalf("too few steps listed: %v %v %v", relay.RelaySteps(), webhooks.DeliverySteps(), workflows.RunSteps())
	}
}
