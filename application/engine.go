package application

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// DeliveryEngineConfig tunes the delivery engine. Zero fields take the defaults.
type DeliveryEngineConfig struct {
	// RetryDelays is the wait after each failed attempt (default webhook.DefaultRetryDelays);
	// the failure after the last one makes the delivery undeliverable.
	RetryDelays []time.Duration
	// Concurrency is how many attempts run at once (default 16).
	Concurrency int
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

func (c DeliveryEngineConfig) withDefaults() DeliveryEngineConfig {
	if len(c.RetryDelays) == 0 {
		c.RetryDelays = webhook.DefaultRetryDelays
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.ClaimBatch <= 0 {
		c.ClaimBatch = c.Concurrency
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.ClaimLease <= 0 {
		c.ClaimLease = 2*c.Timeout + 5*time.Second
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 100 * time.Millisecond
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

// NopDeliveryObserver ignores everything.
type NopDeliveryObserver struct{}

func (NopDeliveryObserver) Attempted(*webhook.Delivery, ports.OutboundResult) {}
func (NopDeliveryObserver) Failed(string, error)                              {}

// DeliveryEngine sends due deliveries and records each attempt on the delivery: delivered on a
// 2xx, rescheduled per RetryDelays on a failure, undeliverable after the last one. Schedules live
// in the database, so they survive restarts, and several engines may run at once: ClaimDue hides
// a claimed delivery from the others for ClaimLease.
type DeliveryEngine struct {
	deliveries ports.DeliveryRepository
	webhooks   ports.WebhookRepository
	sender     ports.Sender
	clock      ports.Clock
	cfg        DeliveryEngineConfig
	observer   DeliveryObserver
	wake       chan struct{}
}

// NewDeliveryEngine makes an engine; observer may be nil.
func NewDeliveryEngine(deliveries ports.DeliveryRepository, webhooks ports.WebhookRepository, sender ports.Sender, clock ports.Clock,
	cfg DeliveryEngineConfig, observer DeliveryObserver) *DeliveryEngine {
	if observer == nil {
		observer = NopDeliveryObserver{}
	}
	return &DeliveryEngine{deliveries: deliveries, webhooks: webhooks, sender: sender, clock: clock,
		cfg: cfg.withDefaults(), observer: observer, wake: make(chan struct{}, 1)}
}

// Notify wakes an idle engine at once, e.g. after the fan-out stored deliveries. It never blocks.
func (e *DeliveryEngine) Notify() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run claims and sends due deliveries until ctx ends, then waits for the attempts in flight and
// returns nil. Storage failures are reported to the observer and retried after a poll interval.
func (e *DeliveryEngine) Run(ctx context.Context) error {
	slots := make(chan struct{}, e.cfg.Concurrency)
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		free := e.cfg.Concurrency - len(slots)
		if free == 0 {
			// Claim only what can start now, so no claimed delivery waits out its lease here.
			select {
			case <-freed:
			case <-ctx.Done():
			}
			continue
		}
		limit := min(free, e.cfg.ClaimBatch)
		ds, err := e.deliveries.ClaimDue(ctx, e.clock.Now(), limit, e.cfg.ClaimLease)
		if err != nil {
			if ctx.Err() == nil {
				e.observer.Failed("claim due deliveries", err)
				e.idle(ctx, e.cfg.PollInterval)
			}
			continue
		}
		for _, d := range ds {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.attempt(ctx, d)
				<-slots
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		if len(ds) < limit {
			e.idle(ctx, e.cfg.PollInterval)
		}
		// A full claim: more are probably due, so claim again as soon as a slot is free.
	}
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
			e.observer.Failed("load webhook", err)
		}
		return // the claim's lease runs out and the delivery is claimed again
	}
	res := e.sender.Send(ctx, ports.OutboundRequest{
		EndpointID: w.ID(), URL: w.URL(), Body: d.Body(), Event: string(d.EventType()),
		DeliveryID: d.ID(), Attempt: d.NextAttemptNumber(), Secret: w.Secret(),
	})
	if res.Err != nil && ctx.Err() != nil {
		return // stopped mid-attempt: not the endpoint's fault; the lease runs out and it is sent again
	}
	if res.BreakerOpen {
		d.Postpone(res.RetryAt)
	} else {
		d.Record(webhook.Outcome{StatusCode: res.StatusCode, Duration: res.Duration, Err: res.Err}, e.clock.Now(), e.cfg.RetryDelays)
	}
	// Saved even while stopping: the attempt happened and must not be made twice needlessly.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := e.deliveries.Save(sctx, d); err != nil {
		if !errors.Is(err, domain.ErrNotFound) { // not found: the webhook was deleted meanwhile
			e.observer.Failed("save delivery", err)
		}
		return
	}
	e.observer.Attempted(d, res)
}

// idle waits for d, a Notify, or the end of ctx.
func (e *DeliveryEngine) idle(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.wake:
	case <-ctx.Done():
	}
}
