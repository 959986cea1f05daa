package ports

import (
	"context"
	"time"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
)

// WebhookRepository stores webhooks (the signing secret sealed at rest); every method is
// bounded to one workspace except Matching, which takes the event's.
type WebhookRepository interface {
	// Create stores the webhook with its audit events in one transaction.
	Create(ctx context.Context, w *webhook.Webhook, events ...audit.Event) error
	Get(ctx context.Context, workspaceID, id string) (*webhook.Webhook, error)
	// List returns up to page.Limit webhooks, newest first.
	List(ctx context.Context, workspaceID string, page Page) ([]*webhook.Webhook, error)
	// Update loads the webhook, lets change modify it and stores it with the effects change
	// returns, in one transaction.
	Update(ctx context.Context, workspaceID, id string, change func(*webhook.Webhook) (Effects, error)) (*webhook.Webhook, error)
	// Delete removes the webhook and its deliveries, pending retries included, with the audit
	// events, in one transaction.
	Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error
	Count(ctx context.Context, workspaceID string) (int, error)
	// Matching returns the enabled webhooks of e's workspace subscribed to e's type and form
	// (webhook.Webhook.Subscribes), whenever e happened: the caller checks, per event, that a
	// webhook was already enabled then (Matches), so one answer serves the events of a batch.
	Matching(ctx context.Context, e event.Event) ([]*webhook.Webhook, error)
}

// DeliveryRepository stores deliveries (their bodies sealed at rest).
type DeliveryRepository interface {
	// AddAll stores new deliveries; a delivery of an event to a webhook that already has one is
	// skipped, so a redelivered event creates no second delivery.
	AddAll(ctx context.Context, ds []*webhook.Delivery) error
	Get(ctx context.Context, workspaceID, webhookID, id string) (*webhook.Delivery, error)
	// List returns up to page.Limit deliveries of a webhook, newest first.
	List(ctx context.Context, workspaceID, webhookID string, page Page) ([]*webhook.Delivery, error)
	// ClaimDue returns up to c.Limit pending deliveries due at c.Now, within c's per-workspace
	// and per-endpoint shares and taking workspaces in turn, and moves their next attempt to
	// c.Now+c.Lease, so that other engines skip them meanwhile (FOR UPDATE SKIP LOCKED on PostgreSQL).
	ClaimDue(ctx context.Context, c Claim) ([]*webhook.Delivery, error)
	// Save stores the delivery after an attempt; domain.ErrNotFound when it was deleted meanwhile.
	Save(ctx context.Context, d *webhook.Delivery) error
	// Update loads a delivery of the webhook, lets change modify it and stores it with the
	// effects change returns, in one transaction.
	Update(ctx context.Context, workspaceID, webhookID, id string, change func(*webhook.Delivery) (Effects, error)) (*webhook.Delivery, error)
}

// URLChecker tells whether an endpoint URL may be registered: HTTPS, and resolving only to
// public addresses unless private destinations are allowed. The error's message is shown to the
// client.
type URLChecker interface {
	CheckURL(ctx context.Context, rawURL string) error
}

// OutboundRequest is one signed POST to an endpoint.
type OutboundRequest struct {
	EndpointID string // the circuit breaker's key: a webhook or an action, never a host
	URL        string
	Body       []byte
	Event      string
	DeliveryID string
	Attempt    int
	Secret     string
	Headers    map[string]string
	// TraceParent is the W3C trace context stored with the delivery ("" when not traced), so
	// the attempt's span joins the trace of the submission that caused it.
	TraceParent string
	// FormVersion, when above 0, goes out as X-Service-Form-Version.
	FormVersion int
}

// OutboundResult is what the endpoint did. BreakerOpen means no request was made; retry at RetryAt.
type OutboundResult struct {
	StatusCode  int
	Duration    time.Duration
	Err         error
	BreakerOpen bool
	RetryAt     time.Time
	// RetryAfter is the endpoint's Retry-After on a 429 or 503 answer (0 when it sent none), for
	// a caller that honours it (a workflow action).
	RetryAfter time.Duration
	// Answer is the start of the endpoint's answer body (at most 1 KiB), for error messages.
	Answer []byte
}

// Sender posts signed requests to endpoints (SSRF-safe, behind per-endpoint circuit breakers).
type Sender interface {
	Send(ctx context.Context, r OutboundRequest) OutboundResult
}
