package webhook

import (
	"time"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
)

// Status is where a delivery stands.
type Status string

// Delivery statuses: pending until a 2xx, delivered, or undeliverable after the last attempt.
const (
	StatusPending       Status = "pending"
	StatusDelivered     Status = "delivered"
	StatusUndeliverable Status = "undeliverable"
)

// Outcome is what one try produced, as the delivery engine saw it.
type Outcome struct {
	StatusCode int // 0 when no answer came
	Duration   time.Duration
	Err        error // nil when the endpoint answered 2xx in time
}

// Delivery is one event to one endpoint. Its body is fixed at creation, so every retry sends
// the same bytes. A delivery of a stored event (NewEventDelivery) is stored without its body,
// which is EventBody of the event, rebuilt from the stored event before each attempt.
type Delivery struct {
	id            string
	workspaceID   string
	webhookID     string
	eventID       string
	eventType     event.Type
	formID        string
	body          []byte
	status        Status
	cycle         int // attempts used since creation or the last manual retry
	attempts      []retry.Attempt
	nextAttemptAt *time.Time
	createdAt     time.Time
	updatedAt     time.Time
	traceParent   string
	formVersion   int
	replayID      string // the replay that queued the delivery again, "" when never replayed
	fromEvent     bool   // the body is EventBody of the stored event, not stored with the delivery
}

// NewDelivery schedules the first attempt of e to w at once.
func NewDelivery(id string, w *Webhook, e event.Event, body []byte, now time.Time) *Delivery {
	now = now.UTC()
	return &Delivery{id: id, workspaceID: w.workspaceID, webhookID: w.id, eventID: e.ID, eventType: e.Type, formID: e.FormID,
		body: body, status: StatusPending, nextAttemptAt: &now, createdAt: now, updatedAt: now, traceParent: e.TraceParent, formVersion: e.FormVersion}
}

// NewEventDelivery is NewDelivery for an event kept in the outbox, whose body is EventBody(e):
// the delivery is stored without it (FromEvent) and its body is rebuilt from the event.
func NewEventDelivery(id string, w *Webhook, e event.Event, body []byte, now time.Time) *Delivery {
	d := NewDelivery(id, w, e, body, now)
	d.fromEvent = true
	return d
}

// FromEvent reports whether the body is EventBody of the delivery's stored event, stored
// with the event rather than with the delivery.
func (d *Delivery) FromEvent() bool { return d.fromEvent }

// RestoreFromEvent marks a delivery rebuilt from the database as one of a stored event, with
// the body rebuilt from it: nil when the event is no longer there (EventGone).
func (d *Delivery) RestoreFromEvent(body []byte) {
	d.fromEvent, d.body = true, body
}

// EventGone reports whether the delivery's body came from its stored event and that event is
// no longer there (its submission was deleted, or the outbox row was purged): nothing of it
// can be sent.
func (d *Delivery) EventGone() bool { return d.fromEvent && d.body == nil }

// ErrEventGone is why a delivery stopped unsent: its event is no longer stored.
const ErrEventGone = "not sent: the event is no longer available"

// TraceParent is the W3C trace context of the event the delivery was made for ("" when not traced).
func (d *Delivery) TraceParent() string { return d.traceParent }

// FormVersion is the form version of the submission the delivery's event is about; 0 for
// other events. It goes out as X-Service-Form-Version.
func (d *Delivery) FormVersion() int { return d.formVersion }

// RestoreFormVersion sets the stored form version on a delivery rebuilt from the database.
func (d *Delivery) RestoreFormVersion(v int) { d.formVersion = v }

// ReplayID is the replay job that last queued the delivery again ("" when none did): its
// attempts carry X-Service-Replay.
func (d *Delivery) ReplayID() string { return d.replayID }

// RestoreReplayID sets the stored replay job on a delivery rebuilt from the database.
func (d *Delivery) RestoreReplayID(id string) { d.replayID = id }

// RestoreTraceParent sets the stored trace context on a delivery rebuilt from the database.
func (d *Delivery) RestoreTraceParent(traceParent string) { d.traceParent = traceParent }

// UnmarshalDeliveryFromDatabase rebuilds a stored delivery without re-checking it.
func UnmarshalDeliveryFromDatabase(id, workspaceID, webhookID, eventID string, eventType event.Type, formID string, body []byte,
	status Status, cycle int, attempts []retry.Attempt, nextAttemptAt *time.Time, createdAt, updatedAt time.Time) *Delivery {
	return &Delivery{id: id, workspaceID: workspaceID, webhookID: webhookID, eventID: eventID, eventType: eventType, formID: formID,
		body: body, status: status, cycle: cycle, attempts: attempts, nextAttemptAt: nextAttemptAt, createdAt: createdAt.UTC(), updatedAt: updatedAt.UTC()}
}

// Record adds the attempt just made. Success delivers; a failure schedules the next attempt per
// the schedule, and the failure after its last wait makes the delivery undeliverable.
func (d *Delivery) Record(o Outcome, now time.Time, schedule retry.Schedule) {
	now = now.UTC()
	d.cycle++
	a := retry.Attempt{Number: d.cycle, At: now, Duration: o.Duration}
	if o.StatusCode != 0 {
		code := o.StatusCode
		a.StatusCode = &code
	}
	if o.Err != nil {
		msg := o.Err.Error()
		a.Error = &msg
	}
	d.attempts = append(d.attempts, a)
	d.updatedAt = now
	switch {
	case o.Err == nil:
		d.status, d.nextAttemptAt = StatusDelivered, nil
	default:
		wait, ok := schedule.After(d.cycle)
		if !ok {
			d.status, d.nextAttemptAt = StatusUndeliverable, nil
			break
		}
		next := now.Add(wait)
		d.nextAttemptAt = &next
	}
}

// Postpone moves the next attempt without using one (an open circuit breaker refused it).
func (d *Delivery) Postpone(until time.Time) {
	if d.status != StatusPending {
		return
	}
	u := until.UTC()
	d.nextAttemptAt = &u
}

// ErrWebhookDisabled is why a pending delivery stopped: its webhook was switched off.
const ErrWebhookDisabled = "not sent: the webhook is disabled"

// Halt ends a pending delivery without sending it (its webhook was switched off between two
// attempts, or its event is gone): it becomes undeliverable, with an entry saying why in place of the attempt that was
// due. Retry sends it again on demand.
func (d *Delivery) Halt(reason string, now time.Time) {
	if d.status != StatusPending {
		return
	}
	now = now.UTC()
	d.cycle++
	msg := reason
	d.attempts = append(d.attempts, retry.Attempt{Number: d.cycle, At: now, Error: &msg})
	d.status, d.nextAttemptAt, d.updatedAt = StatusUndeliverable, nil, now
}

// Retry starts a new cycle of attempts at once, whatever the status (a manual replay).
func (d *Delivery) Retry(now time.Time) {
	now = now.UTC()
	d.status, d.cycle, d.nextAttemptAt, d.updatedAt = StatusPending, 0, &now, now
}

// NextAttemptNumber is the number the next attempt carries in X-Service-Attempt (1–5).
func (d *Delivery) NextAttemptNumber() int { return d.cycle + 1 }

// ID returns the delivery ID; it is stable across retries (X-Service-Delivery).
func (d *Delivery) ID() string { return d.id }

// WorkspaceID returns the owning workspace.
func (d *Delivery) WorkspaceID() string { return d.workspaceID }

// WebhookID returns the endpoint.
func (d *Delivery) WebhookID() string { return d.webhookID }

// EventID returns the event delivered.
func (d *Delivery) EventID() string { return d.eventID }

// EventType returns the event's type.
func (d *Delivery) EventType() event.Type { return d.eventType }

// FormID returns the event's form.
func (d *Delivery) FormID() string { return d.formID }

// Body returns the exact request body.
func (d *Delivery) Body() []byte { return d.body }

// Status returns the delivery status.
func (d *Delivery) Status() Status { return d.status }

// Cycle returns the attempts used in the current cycle.
func (d *Delivery) Cycle() int { return d.cycle }

// Attempts returns every attempt made, oldest first.
func (d *Delivery) Attempts() []retry.Attempt { return append([]retry.Attempt(nil), d.attempts...) }

// NextAttemptAt returns when the next attempt is due, or nil.
func (d *Delivery) NextAttemptAt() *time.Time { return d.nextAttemptAt }

// CreatedAt returns the creation time.
func (d *Delivery) CreatedAt() time.Time { return d.createdAt }

// UpdatedAt returns the time of the last change.
func (d *Delivery) UpdatedAt() time.Time { return d.updatedAt }
