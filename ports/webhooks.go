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
	// ReplayOf, when set, is the ID of the event a replay sends again (X-Service-Replay: true,
	// X-Service-Event-Id).
	ReplayOf string
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

// ReplayJob is a replay with the state of its walk through the outbox.
type ReplayJob struct {
	Replay *webhook.Replay
	// SeqTo is the last outbox seq of the range; Cursor the last one already walked.
	SeqTo, Cursor int64
	// FormID is the webhook's form filter ("" for every form).
	FormID string
}

// ReplayRepository stores webhook replay jobs and queues their deliveries. Jobs are bounded to
// a workspace for clients; the worker's methods (Claim, Events, Queue, Settle) take any.
type ReplayRepository interface {
	// Create stores a queued job with its audit events in one transaction; another job of the
	// same webhook still queued or running gives a *domain.ConflictError.
	Create(ctx context.Context, r *webhook.Replay, events ...audit.Event) error
	// Get returns the job as it stands, its counts up to date while it runs.
	Get(ctx context.Context, workspaceID, webhookID, id string) (*webhook.Replay, error)
	// List returns up to page.Limit jobs of the webhook, newest first.
	List(ctx context.Context, workspaceID, webhookID string, page Page) ([]*webhook.Replay, error)
	// Claim takes a job with events left to queue (queued, or running with an expired claim)
	// and hides it from other workers for lease; nil when there is none. A job taken for the
	// first time gets its range of outbox rows and its total; a job whose range starts before
	// retainedFrom (it waited past the outbox retention) fails instead.
	Claim(ctx context.Context, now time.Time, lease time.Duration, retainedFrom time.Time) (*ReplayJob, error)
	// Events returns, in seq order, up to limit events after the job's cursor that the job
	// re-delivers (its workspace, form filter, types and time range; never an event whose
	// submission was deleted), and the last seq walked (the next cursor).
	Events(ctx context.Context, job *ReplayJob, limit int) ([]OutboxRecord, int64, error)
	// Queue stores, in one transaction, the job's deliveries and its new cursor. An event of
	// which the webhook already has a delivery queues that delivery again (same ID, so
	// receivers dedupe), unless it is due or being attempted now (inFlight: the delivery
	// engine's claim lease), when it is only counted; an event whose submission was deleted
	// meanwhile is dropped. It extends the job's claim by lease.
	Queue(ctx context.Context, job *ReplayJob, ds []*webhook.Delivery, cursor int64, now time.Time, lease, inFlight time.Duration) error
	// Settle brings the counts of the running jobs whose events are all queued up to date, and
	// ends those of which no delivery is pending any more.
	Settle(ctx context.Context, now time.Time) error
}
