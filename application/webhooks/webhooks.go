package webhooks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// DefaultMaxWebhooks is the number of webhooks a workspace may register (docs/api.md, Limits).
const DefaultMaxWebhooks = 100

// CreateWebhook registers an endpoint.
type CreateWebhook struct {
	Draft webhook.Draft
}

// CreateWebhookHandler registers webhooks.
type CreateWebhookHandler struct {
	webhooks    ports.WebhookRepository
	forms       ports.FormRepository
	urls        ports.URLChecker
	ids         ports.IDs
	clock       ports.Clock
	maxWebhooks int
}

// NewCreateWebhookHandler makes the command; maxWebhooks bounds the webhooks of one workspace.
func NewCreateWebhookHandler(webhooks ports.WebhookRepository, forms ports.FormRepository, urls ports.URLChecker, ids ports.IDs,
	clock ports.Clock, maxWebhooks int) CreateWebhookHandler {
	return CreateWebhookHandler{webhooks: webhooks, forms: forms, urls: urls, ids: ids, clock: clock, maxWebhooks: maxWebhooks}
}

// Handle validates the draft, checks that its form exists and its URL resolves only to allowed
// addresses, and stores the webhook, within the workspace's limit.
func (h CreateWebhookHandler) Handle(ctx context.Context, cmd CreateWebhook) (*webhook.Webhook, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return nil, err
	}
	w, err := webhook.New(h.ids.New(ports.PrefixWebhook), p.WorkspaceID, cmd.Draft, h.clock.Now())
	if err != nil {
		return nil, err
	}
	n, err := h.webhooks.Count(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if n >= h.maxWebhooks {
		return nil, domain.Validation("", "too_many", fmt.Sprintf("a workspace may have at most %d webhooks; delete one first", h.maxWebhooks))
	}
	if err := checkDestination(ctx, h.forms, h.urls, p.WorkspaceID, w, true, true); err != nil {
		return nil, err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.WebhookCreated, webhookTarget(w), webhookDetails(w, nil))
	if err != nil {
		return nil, err
	}
	if err := h.webhooks.Create(ctx, w, e); err != nil {
		return nil, err
	}
	return w, nil
}

// checkDestination reports, together, a form_id that names no form of the workspace and a URL
// the URL checker refuses (its message is the detail).
func checkDestination(ctx context.Context, forms ports.FormRepository, urls ports.URLChecker, workspaceID string, w *webhook.Webhook,
	checkURL, checkForm bool) error {
	var vs domain.Violations
	if formID := w.FormID(); checkForm && formID != nil {
		if _, err := forms.Get(ctx, workspaceID, *formID); errors.Is(err, domain.ErrNotFound) {
			vs.Add("form_id", "not_found", "form_id names no form of this workspace")
		} else if err != nil {
			return err
		}
	}
	if checkURL {
		if err := urls.CheckURL(ctx, w.URL()); err != nil {
			vs.Add("url", "invalid_url", err.Error())
		}
	}
	return vs.Err()
}

// GetWebhook reads one webhook.
type GetWebhook struct {
	ID string
}

// GetWebhookHandler reads webhooks.
type GetWebhookHandler struct{ webhooks ports.WebhookRepository }

// NewGetWebhookHandler makes the query.
func NewGetWebhookHandler(webhooks ports.WebhookRepository) GetWebhookHandler {
	return GetWebhookHandler{webhooks: webhooks}
}

// Handle returns the webhook of the workspace, or domain.ErrNotFound.
func (h GetWebhookHandler) Handle(ctx context.Context, q GetWebhook) (*webhook.Webhook, error) {
	_, w, err := auth.Load(ctx, access.Read, h.webhooks, q.ID)
	return w, err
}

// ListWebhooks reads a page of webhooks, newest first.
type ListWebhooks struct {
	Page ports.Page
}

// ListWebhooksHandler lists webhooks.
type ListWebhooksHandler struct{ webhooks ports.WebhookRepository }

// NewListWebhooksHandler makes the query.
func NewListWebhooksHandler(webhooks ports.WebhookRepository) ListWebhooksHandler {
	return ListWebhooksHandler{webhooks: webhooks}
}

// Handle returns up to Page.Limit webhooks and whether more exist.
func (h ListWebhooksHandler) Handle(ctx context.Context, q ListWebhooks) ([]*webhook.Webhook, bool, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*webhook.Webhook, error) {
		return h.webhooks.List(ctx, p.WorkspaceID, page)
	})
}

// UpdateWebhook applies a PATCH to a webhook.
type UpdateWebhook struct {
	ID    string
	Patch webhook.Patch
}

// UpdateWebhookHandler updates webhooks.
type UpdateWebhookHandler struct {
	webhooks ports.WebhookRepository
	forms    ports.FormRepository
	urls     ports.URLChecker
	ids      ports.IDs
	clock    ports.Clock
}

// NewUpdateWebhookHandler makes the command.
func NewUpdateWebhookHandler(webhooks ports.WebhookRepository, forms ports.FormRepository, urls ports.URLChecker, ids ports.IDs, clock ports.Clock) UpdateWebhookHandler {
	return UpdateWebhookHandler{webhooks: webhooks, forms: forms, urls: urls, ids: ids, clock: clock}
}

// Handle validates the patch on a copy first, so that a changed URL or form is checked (which
// may need the network) outside the repository's transaction, then applies it.
func (h UpdateWebhookHandler) Handle(ctx context.Context, cmd UpdateWebhook) (*webhook.Webhook, error) {
	p, current, err := auth.Load(ctx, access.Write, h.webhooks, cmd.ID)
	if err != nil {
		return nil, err
	}
	preview := *current
	next := &preview
	if err := next.Apply(cmd.Patch, h.clock.Now()); err != nil {
		return nil, err
	}
	urlChanged := cmd.Patch.URL != nil && strings.TrimSpace(*cmd.Patch.URL) != current.URL()
	if err := checkDestination(ctx, h.forms, h.urls, p.WorkspaceID, next, urlChanged, cmd.Patch.FormID != nil); err != nil {
		return nil, err
	}
	return h.webhooks.Update(ctx, p.WorkspaceID, cmd.ID, func(w *webhook.Webhook) (ports.Effects, error) {
		now := h.clock.Now()
		before := *w
		if err := w.Apply(cmd.Patch, now); err != nil {
			return ports.Effects{}, err
		}
		changed := webhookChanges(&before, w)
		if len(changed) == 0 { // nothing changed: nothing to record
			return ports.Effects{}, nil
		}
		e, err := p.AuditEvent(h.ids, now, audit.WebhookUpdated, webhookTarget(w), webhookDetails(w, changed))
		return ports.Effects{Audit: []audit.Event{e}}, err
	})
}

// DeleteWebhook removes a webhook.
type DeleteWebhook struct {
	ID string
}

// DeleteWebhookHandler deletes webhooks and records webhook.deleted.
type DeleteWebhookHandler struct {
	webhooks ports.WebhookRepository
	ids      ports.IDs
	clock    ports.Clock
}

// NewDeleteWebhookHandler makes the command.
func NewDeleteWebhookHandler(webhooks ports.WebhookRepository, ids ports.IDs, clock ports.Clock) DeleteWebhookHandler {
	return DeleteWebhookHandler{webhooks: webhooks, ids: ids, clock: clock}
}

// Handle deletes the webhook and its deliveries, so pending retries stop at once.
func (h DeleteWebhookHandler) Handle(ctx context.Context, cmd DeleteWebhook) error {
	p, w, err := auth.Load(ctx, access.Write, h.webhooks, cmd.ID)
	if err != nil {
		return err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.WebhookDeleted, webhookTarget(w), webhookDetails(w, nil))
	if err != nil {
		return err
	}
	return h.webhooks.Delete(ctx, p.WorkspaceID, cmd.ID, e)
}

// ListDeliveries reads a page of a webhook's deliveries, newest first.
type ListDeliveries struct {
	WebhookID string
	Page      ports.Page
}

// ListDeliveriesHandler lists deliveries.
type ListDeliveriesHandler struct {
	webhooks   ports.WebhookRepository
	deliveries ports.DeliveryRepository
}

// NewListDeliveriesHandler makes the query.
func NewListDeliveriesHandler(webhooks ports.WebhookRepository, deliveries ports.DeliveryRepository) ListDeliveriesHandler {
	return ListDeliveriesHandler{webhooks: webhooks, deliveries: deliveries}
}

// Handle returns up to Page.Limit deliveries and whether more exist; domain.ErrNotFound when
// the webhook is not in the workspace.
func (h ListDeliveriesHandler) Handle(ctx context.Context, q ListDeliveries) ([]*webhook.Delivery, bool, error) {
	p, _, err := auth.Load(ctx, access.Read, h.webhooks, q.WebhookID)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*webhook.Delivery, error) {
		return h.deliveries.List(ctx, p.WorkspaceID, q.WebhookID, page)
	})
}

// RetryDelivery replays a delivery: a new cycle of attempts, due at once.
type RetryDelivery struct {
	WebhookID string
	ID        string
}

// RetryDeliveryHandler replays deliveries.
type RetryDeliveryHandler struct {
	deliveries ports.DeliveryRepository
	clock      ports.Clock
}

// NewRetryDeliveryHandler makes the command.
func NewRetryDeliveryHandler(deliveries ports.DeliveryRepository, clock ports.Clock) RetryDeliveryHandler {
	return RetryDeliveryHandler{deliveries: deliveries, clock: clock}
}

// Handle starts a new cycle whatever the delivery's status and returns the delivery.
func (h RetryDeliveryHandler) Handle(ctx context.Context, cmd RetryDelivery) (*webhook.Delivery, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return nil, err
	}
	return h.deliveries.Update(ctx, p.WorkspaceID, cmd.WebhookID, cmd.ID, func(d *webhook.Delivery) (ports.Effects, error) {
		d.Retry(h.clock.Now())
		return ports.Effects{}, nil
	})
}

// SendTestEvent delivers a webhook.test event to one webhook, through the delivery engine like
// any other event (signature, retries, delivery log).
type SendTestEvent struct {
	WebhookID string
}

// SendTestEventHandler sends test events.
type SendTestEventHandler struct {
	webhooks   ports.WebhookRepository
	deliveries ports.DeliveryRepository
	ids        ports.IDs
	clock      ports.Clock
}

// NewSendTestEventHandler makes the command.
func NewSendTestEventHandler(webhooks ports.WebhookRepository, deliveries ports.DeliveryRepository, ids ports.IDs, clock ports.Clock) SendTestEventHandler {
	return SendTestEventHandler{webhooks: webhooks, deliveries: deliveries, ids: ids, clock: clock}
}

// Handle stores a pending delivery of a new webhook.test event to the webhook, due at once, and
// returns it; domain.ErrNotFound when the webhook is not in the workspace.
func (h SendTestEventHandler) Handle(ctx context.Context, cmd SendTestEvent) (*webhook.Delivery, error) {
	p, w, err := auth.Load(ctx, access.Write, h.webhooks, cmd.WebhookID)
	if err != nil {
		return nil, err
	}
	now := h.clock.Now()
	e := event.Event{ID: h.ids.New(ports.PrefixEvent), Type: event.WebhookTest, WorkspaceID: p.WorkspaceID, OccurredAt: now,
		Data: map[string]any{"webhook_id": w.ID(), "message": "This is a test event sent from the Formward dashboard."}}
	if f := w.FormID(); f != nil {
		e.FormID = *f
	}
	body, err := DeliveryBody(e)
	if err != nil {
		return nil, err
	}
	d := webhook.NewDelivery(h.ids.New(deliveryIDPrefix), w, e, body, now)
	if err := h.deliveries.AddAll(ctx, []*webhook.Delivery{d}); err != nil {
		return nil, err
	}
	return d, nil
}
