package webhooks

import (
	"context"
	"fmt"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// deliveryIDPrefix is the prefix of delivery IDs (dlv_…), X-Service-Delivery on the wire.
const deliveryIDPrefix = "dlv"

// FanOut turns one event into one pending delivery per matching webhook. It is the worker's
// event handler (ports.EventHandler), fed by Kafka or by the in-process bus.
type FanOut struct {
	webhooks   ports.WebhookRepository
	deliveries ports.DeliveryRepository
	ids        ports.IDs
	clock      ports.Clock
	// notify, when set, is called after deliveries were stored (wakes a delivery engine).
	notify func()
}

// NewFanOut makes the fan-out; notify may be nil.
func NewFanOut(webhooks ports.WebhookRepository, deliveries ports.DeliveryRepository, ids ports.IDs, clock ports.Clock, notify func()) *FanOut {
	return &FanOut{webhooks: webhooks, deliveries: deliveries, ids: ids, clock: clock, notify: notify}
}

// Handle stores the deliveries of e. It fails only when storage failed, so the transport hands
// the event over again; a redelivered event creates no second delivery (AddAll skips it).
func (f *FanOut) Handle(ctx context.Context, e event.Event) error {
	return f.HandleBatch(ctx, []event.Event{e})
}

// HandleBatch stores the deliveries of several events in one write, so a busy form costs one
// transaction per batch instead of one per event. An error asks for the whole batch again;
// the events already stored are skipped then.
func (f *FanOut) HandleBatch(ctx context.Context, events []event.Event) error {
	type subscription struct {
		workspaceID, formID string
		typ                 event.Type
	}
	matching := map[subscription][]*webhook.Webhook{}
	now := f.clock.Now()
	var ds []*webhook.Delivery
	for _, e := range events {
		key := subscription{e.WorkspaceID, e.FormID, e.Type}
		hooks, known := matching[key]
		if !known {
			var err error
			if hooks, err = f.webhooks.Matching(ctx, e); err != nil {
				return fmt.Errorf("fan out %s: find webhooks: %w", e.ID, err)
			}
			matching[key] = hooks
		}
		if len(hooks) == 0 {
			continue
		}
		body, err := DeliveryBody(e)
		if err != nil {
			// Not a storage failure: the event can never be encoded, and asking for it again
			// would block its form's later events for good.
			continue
		}
		for _, w := range hooks {
			// The webhooks subscribed to this kind of event; one switched back on after the
			// event happened skips it.
			if w.Matches(e) {
				ds = append(ds, webhook.NewEventDelivery(f.ids.New(deliveryIDPrefix), w, e, body, now))
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	if err := f.deliveries.AddAll(ctx, ds); err != nil {
		return fmt.Errorf("fan out %d events from %s: store deliveries: %w", len(events), events[0].ID, err)
	}
	if f.notify != nil {
		f.notify()
	}
	return nil
}

// DeliveryBody encodes the webhook request body (docs/webhooks.md) for e: event, form_id, timestamp (the
// time of the event) and the event-specific data (webhook.EventBody).
func DeliveryBody(e event.Event) ([]byte, error) { return webhook.EventBody(e) }
