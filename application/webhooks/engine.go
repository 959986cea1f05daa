package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/formward/formward/application/dispatch"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// DeliveryEngineConfig tunes the delivery engine. Zero fields take the defaults.
type DeliveryEngineConfig struct {
	// Retry is the wait after each failed attempt (default retry.Default); the
	// failure after the last one makes the delivery undeliverable.
	Retry retry.Schedule
	// Concurrency is how many attempts run at once (default 16).
	Concurrency int
	// PerWorkspace is how many of them may belong to one workspace (default 4), so endpoints
	// that hang in one workspace leave the other slots to the other workspaces.
	PerWorkspace int
	// PerEndpoint is how many may go to one webhook at first (default 2, at most PerWorkspace),
	// so one hanging endpoint leaves its workspace's other endpoints a slot.
	PerEndpoint int
	// PerEndpointMax is how far a webhook's own limit may grow while it answers fast (default
	// 16, at most Concurrency; PerEndpoint or less: it never grows). Attempts beyond PerEndpoint
	// may go over the workspace's share while the engine has spare slots (see dispatch.Dispatcher).
	PerEndpointMax int
	// ClaimBatch is the most deliveries claimed at once (default Concurrency).
	ClaimBatch int
	// Timeout is the sender's per-attempt timeout (default 10s); it only sets ClaimLease's default.
	Timeout time.Duration
	// ClaimLease is how long a claimed delivery is hidden from other engines (default
	// 2×Timeout+5s). It must outlast an attempt, or another engine sends the same attempt again.
	ClaimLease time.Duration
	// PollInterval is how long an idle engine waits before claiming again (default 100ms);
	// Notify shortens the wait for deliveries created in this process.
	PollInterval time.Duration
}

// DefaultConcurrencyPerEndpoint is how many attempts to one webhook an engine makes at once
// unless configured otherwise.
const DefaultConcurrencyPerEndpoint = 2

// DefaultConcurrencyPerEndpointMax is how far a webhook's limit may grow unless configured otherwise.
const DefaultConcurrencyPerEndpointMax = 16

func (c DeliveryEngineConfig) withDefaults() DeliveryEngineConfig {
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.ClaimLease <= 0 {
		c.ClaimLease = 2*c.Timeout + 5*time.Second
	}
	if c.PerEndpoint <= 0 {
		c.PerEndpoint = DefaultConcurrencyPerEndpoint
	}
	if c.PerEndpointMax <= 0 {
		c.PerEndpointMax = DefaultConcurrencyPerEndpointMax
	}
	return c
}

// DeliveryObserver hears what the engine does, for logs and metrics. It never sees bodies or secrets.
type DeliveryObserver interface {
	// Attempted is called after an attempt was made (or refused by a breaker) and recorded.
	Attempted(d *webhook.Delivery, r ports.OutboundResult)
	// Failed is called when a step failed; the engine retries it by itself.
	Failed(step string, err error)
}

// The steps a delivery engine reports to DeliveryObserver.Failed.
const (
	DeliveryStepClaim       = "claim due deliveries"
	DeliveryStepLoadWebhook = "load webhook"
	DeliveryStepSave        = "save delivery"
)

// DeliverySteps lists every step a delivery engine may report as failed.
func DeliverySteps() []string {
	return []string{DeliveryStepClaim, DeliveryStepLoadWebhook, DeliveryStepSave}
}

// NopDeliveryObserver ignores everything.
type NopDeliveryObserver struct{}

func (NopDeliveryObserver) Attempted(*webhook.Delivery, ports.OutboundResult) {}
func (NopDeliveryObserver) Failed(string, error)                              {}

// DeliveryEngine sends due deliveries and records each attempt on the delivery: delivered on a
// 2xx, rescheduled per the retry schedule on a failure, undeliverable after the last one.
// Schedules live in the database, so they survive restarts, and several engines may run at once:
// ClaimDue hides a claimed delivery from the others for ClaimLease. Workspaces and endpoints
// share the engine fairly (see dispatcher).
type DeliveryEngine struct {
	deliveries ports.DeliveryRepository
	webhooks   ports.WebhookRepository
	sender     ports.Sender
	clock      ports.Clock
	retry      retry.Schedule
	observer   DeliveryObserver
	loop       *dispatch.Dispatcher[*webhook.Delivery]
	lease      time.Duration
}

// NewDeliveryEngine makes an engine; observer may be nil.
func NewDeliveryEngine(deliveries ports.DeliveryRepository, webhooks ports.WebhookRepository, sender ports.Sender, clock ports.Clock,
	cfg DeliveryEngineConfig, observer DeliveryObserver) *DeliveryEngine {
	if observer == nil {
		observer = NopDeliveryObserver{}
	}
	cfg = cfg.withDefaults()
	e := &DeliveryEngine{deliveries: deliveries, webhooks: webhooks, sender: sender, clock: clock, retry: cfg.Retry, observer: observer, lease: cfg.ClaimLease}
	e.loop = dispatch.NewDispatcher(dispatch.DispatchConfig{Concurrency: cfg.Concurrency, PerWorkspace: cfg.PerWorkspace, PerEndpoint: cfg.PerEndpoint,
		PerEndpointMax: cfg.PerEndpointMax, Timeout: cfg.Timeout, ClaimBatch: cfg.ClaimBatch, Lease: cfg.ClaimLease, PollInterval: cfg.PollInterval}, clock,
		deliveries.ClaimDue,
		func(d *webhook.Delivery) (string, string) { return d.WorkspaceID(), d.WebhookID() },
		e.attempt,
		func(err error) { observer.Failed(DeliveryStepClaim, err) })
	return e
}

// ClaimLease is how long a claimed delivery stays hidden from other engines: a delivery due
// within it may be being attempted.
func (e *DeliveryEngine) ClaimLease() time.Duration { return e.lease }

// Notify wakes an idle engine at once, e.g. after the fan-out stored deliveries. It never blocks.
func (e *DeliveryEngine) Notify() { e.loop.Notify() }

// Run claims and sends due deliveries until ctx ends, then waits for the attempts in flight and
// returns nil. Storage failures are reported to the observer and retried after a poll interval.
func (e *DeliveryEngine) Run(ctx context.Context) error {
	e.loop.Run(ctx)
	return nil
}

// attempt sends one claimed delivery and records the outcome.
func (e *DeliveryEngine) attempt(ctx context.Context, d *webhook.Delivery) {
	w, err := e.webhooks.Get(ctx, d.WorkspaceID(), d.WebhookID())
	if errors.Is(err, domain.ErrNotFound) {
		return // deleted meanwhile, its deliveries with it
	}
	if err != nil {
		if ctx.Err() == nil {
			e.observer.Failed(DeliveryStepLoadWebhook, err)
		}
		return // the claim's lease runs out and the delivery is claimed again
	}
	if !w.Enabled() && d.Cycle() > 0 {
		// Switched off between two attempts: the retries stop. A first attempt (a delivery
		// queued just before, a manual Retry, a test event) is still sent.
		d.Halt(webhook.ErrWebhookDisabled, e.clock.Now())
		e.save(ctx, d) // no attempt was made: nothing for the observer
		return
	}
	if d.EventGone() {
		// The event went with its submission (deleted, erased, past retention) or the outbox
		// row was purged: nothing of it is sent. The delivery ends undeliverable, saying why.
		d.Halt(webhook.ErrEventGone, e.clock.Now())
		e.save(ctx, d)
		return
	}
	res := e.sender.Send(ctx, ports.OutboundRequest{
		EndpointID: w.ID(), URL: w.URL(), Body: d.Body(), Event: string(d.EventType()),
		DeliveryID: d.ID(), Attempt: d.NextAttemptNumber(), Secret: w.Secret(), TraceParent: d.TraceParent(),
		FormVersion: d.FormVersion(), ReplayOf: replayOf(d),
	})
	if res.Err != nil && ctx.Err() != nil {
		return // stopped mid-attempt: not the endpoint's fault; the lease runs out and it is sent again
	}
	e.loop.Observe(w.ID(), outcome(res), res.Duration)
	if res.BreakerOpen {
		d.Postpone(res.RetryAt)
	} else {
		d.Record(webhook.Outcome{StatusCode: res.StatusCode, Duration: res.Duration, Err: res.Err}, e.clock.Now(), e.retry)
	}
	if e.save(ctx, d) {
		e.observer.Attempted(d, res)
	}
}

// outcome judges an attempt for the endpoint's adaptive limit: an open breaker, an error without
// an answer (a timeout, a refused connection), a 429 or a 5xx say the endpoint is overloaded; any
// other answer outside 2xx says nothing about its load.
func outcome(res ports.OutboundResult) dispatch.Outcome {
	switch {
	case res.BreakerOpen, res.StatusCode == 0 && res.Err != nil, res.StatusCode == 429, res.StatusCode >= 500:
		return dispatch.Overloaded
	case res.Err == nil && res.StatusCode >= 200 && res.StatusCode < 300:
		return dispatch.Answered
	}
	return dispatch.Refused
}

// EndpointLimit is how many attempts to the webhook the engine makes at once now.
func (e *DeliveryEngine) EndpointLimit(webhookID string) int { return e.loop.EndpointLimit(webhookID) }

// save stores the delivery after an attempt or a halt, even while stopping: the attempt
// happened and must not be made twice needlessly. It reports whether the delivery was saved.
func (e *DeliveryEngine) save(ctx context.Context, d *webhook.Delivery) bool {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := e.deliveries.Save(sctx, d); err != nil {
		if !errors.Is(err, domain.ErrNotFound) { // not found: the webhook was deleted meanwhile
			e.observer.Failed(DeliveryStepSave, err)
		}
		return false
	}
	return true
}

// replayOf is the event of a delivery a replay queued again, "" for any other: its attempts
// tell the receiver it is a replay, and which event it is, beside the delivery's usual identity
// (X-Service-Delivery, the same as when it was first sent), so the receiver dedupes as usual.
func replayOf(d *webhook.Delivery) string {
	if d.ReplayID() == "" {
		return ""
	}
	return d.EventID()
}
