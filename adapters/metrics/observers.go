package metrics

import (
	"regexp"
	"sync"
	"time"

	"github.com/formward/formward/application/relay"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// RelayObserver decorates next (the relay's log) with the relay series; the failures of every
// step exist at 0 from the start.
func (m *Metrics) RelayObserver(next relay.RelayObserver, now func() time.Time) relay.RelayObserver {
	if next == nil {
		next = relay.NopRelayObserver{}
	}
	for _, step := range relay.RelaySteps() {
		m.relayFailures.WithLabelValues(step)
	}
	return relayObserver{RelayObserver: next, m: m, now: now}
}

type relayObserver struct {
	relay.RelayObserver
	m   *Metrics
	now func() time.Time
}

func (o relayObserver) Published(evs []event.Event, took time.Duration) {
	now := o.now()
	o.m.relayPublished.Add(float64(len(evs)))
	o.m.relayBatches.Observe(float64(len(evs)))
	for _, e := range evs {
		o.m.relayLag.Observe(max(now.Sub(e.OccurredAt), 0).Seconds())
	}
	o.RelayObserver.Published(evs, took)
}

func (o relayObserver) Failed(step string, err error, attempt int, retryIn time.Duration) {
	o.m.relayFailures.WithLabelValues(step).Inc()
	o.RelayObserver.Failed(step, err, attempt, retryIn)
}

// DeliveryObserver decorates next (the engine's log) with the webhook delivery series; the
// engine's failures of every step exist at 0 from the start.
func (m *Metrics) DeliveryObserver(next webhooks.DeliveryObserver) webhooks.DeliveryObserver {
	if next == nil {
		next = webhooks.NopDeliveryObserver{}
	}
	for _, step := range webhooks.DeliverySteps() {
		m.engineFailures.WithLabelValues(engineDeliveries, step)
	}
	return deliveryObserver{DeliveryObserver: next, m: m}
}

type deliveryObserver struct {
	webhooks.DeliveryObserver
	m *Metrics
}

func (o deliveryObserver) Attempted(d *webhook.Delivery, r ports.OutboundResult) {
	outcome := OutcomeFailed
	switch {
	case r.BreakerOpen:
		outcome = OutcomeBreakerOpen
	case d.Status() == webhook.StatusDelivered:
		outcome = OutcomeDelivered
	case d.Status() == webhook.StatusUndeliverable:
		outcome = OutcomeUndeliverable
	}
	o.m.deliveries.WithLabelValues(outcome).Inc()
	if !r.BreakerOpen {
		o.m.deliveryDuration.WithLabelValues(outcome).Observe(r.Duration.Seconds())
	}
	o.DeliveryObserver.Attempted(d, r)
}

func (o deliveryObserver) Failed(step string, err error) {
	o.m.engineFailures.WithLabelValues(engineDeliveries, step).Inc()
	o.DeliveryObserver.Failed(step, err)
}

// RunObserver decorates next (the run engine's log) with the workflow action series. types are
// the registered action types; any other type is counted as "other". The actions of every type
// and outcome, and the engine's failures of every step, exist at 0 from the start.
func (m *Metrics) RunObserver(next workflows.RunObserver, types []string) workflows.RunObserver {
	if next == nil {
		next = workflows.NopRunObserver{}
	}
	for _, step := range workflows.RunSteps() {
		m.engineFailures.WithLabelValues(engineRuns, step)
	}
	known := make(map[string]bool, len(types))
	for _, t := range types {
		known[t] = true
		for _, o := range []string{OutcomeDelivered, OutcomeFailed, OutcomeUndeliverable, OutcomeBreakerOpen} {
			m.actions.WithLabelValues(t, o)
		}
	}
	return runObserver{RunObserver: next, m: m, types: known}
}

type runObserver struct {
	workflows.RunObserver
	m     *Metrics
	types map[string]bool
}

func (o runObserver) Attempted(r *workflow.Run, a workflow.ActionRun, out ports.ActionOutcome) {
	outcome := OutcomeFailed
	switch {
	case out.BreakerOpen:
		outcome = OutcomeBreakerOpen
	case a.Status == workflow.ActionRunSucceeded:
		outcome = OutcomeDelivered
	case a.Status == workflow.ActionRunFailed:
		outcome = OutcomeUndeliverable
	}
	typ := a.Type
	if !o.types[typ] {
		typ = "other"
	}
	o.m.actions.WithLabelValues(typ, outcome).Inc()
	if !out.BreakerOpen {
		o.m.actionDuration.WithLabelValues(typ, outcome).Observe(out.Duration.Seconds())
	}
	o.RunObserver.Attempted(r, a, out)
}

func (o runObserver) Failed(step string, err error) {
	o.m.engineFailures.WithLabelValues(engineRuns, step).Inc()
	o.RunObserver.Failed(step, err)
}

// maxReasons caps the reason label of formward_capture_refusals_total.
const maxReasons = 64

var reasonShape = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// capped hands out label values from a bounded set: the first n well-formed values seen, then
// "other", so a label never grows without limit.
type capped struct {
	mu   sync.Mutex
	n    int
	seen map[string]bool
}

func newCapped(n int) *capped { return &capped{n: n, seen: map[string]bool{}} }

func (c *capped) value(v string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[v] {
		return v
	}
	if !reasonShape.MatchString(v) || len(c.seen) >= c.n {
		return "other"
	}
	c.seen[v] = true
	return v
}
