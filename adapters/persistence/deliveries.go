package persistence

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// DeliveryRepository stores deliveries. The body of a delivery of a stored event
// (webhook.NewEventDelivery: fan-out, replays) is not stored: the row names the event (its
// body column is empty) and ClaimDue rebuilds the body from the outbox. Any other body (a test
// event's) is sealed with the workspace's data key, as are those stored before.
type DeliveryRepository struct {
	db     *DB
	cipher ports.Cipher
	saves  deliverySaves
}

var _ ports.DeliveryRepository = (*DeliveryRepository)(nil)

// NewDeliveryRepository returns the delivery repository; cipher seals the bodies.
func NewDeliveryRepository(db *DB, cipher ports.Cipher) *DeliveryRepository {
	return &DeliveryRepository{db: db, cipher: cipher}
}

func (r *DeliveryRepository) toRow(ctx context.Context, d *webhook.Delivery) (deliveryRow, error) {
	attempts, err := encodeAttempts(d.Attempts())
	if err != nil {
		return deliveryRow{}, err
	}
	body := []byte{} // a delivery of a stored event: no copy, its body is rebuilt from the event
	if !d.FromEvent() {
		if body, err = r.cipher.Seal(ctx, d.WorkspaceID(), d.Body(), deliveryAAD(d.ID())); err != nil {
			return deliveryRow{}, fmt.Errorf("seal delivery body: %w", err)
		}
	}
	return deliveryRow{ID: d.ID(), WorkspaceID: d.WorkspaceID(), WebhookID: d.WebhookID(), EventID: d.EventID(),
		EventType: string(d.EventType()), FormID: d.FormID(), Body: body, Status: string(d.Status()), Cycle: d.Cycle(),
		Attempts: attempts, NextAttemptAt: toMillisPtr(d.NextAttemptAt()), CreatedAt: toMillis(d.CreatedAt()), UpdatedAt: toMillis(d.UpdatedAt()),
		TraceParent: nullIfEmpty(d.TraceParent()), FormVersion: nullIfZero(d.FormVersion()), ReplayID: nullIfEmpty(d.ReplayID())}, nil
}

// toDomain rebuilds a stored delivery. A delivery of a stored event (an empty body column)
// comes without its body: withBodies rebuilds it when it is to be sent.
func (r *DeliveryRepository) toDomain(ctx context.Context, row deliveryRow) (*webhook.Delivery, error) {
	var body []byte
	if len(row.Body) > 0 {
		var err error
		if body, err = r.cipher.Open(ctx, row.WorkspaceID, row.Body, deliveryAAD(row.ID)); err != nil {
			return nil, fmt.Errorf("open body of delivery %s: %w", row.ID, err)
		}
	}
	attempts, err := decodeAttempts(row.ID, row.Attempts)
	if err != nil {
		return nil, err
	}
	d := webhook.UnmarshalDeliveryFromDatabase(row.ID, row.WorkspaceID, row.WebhookID, row.EventID, event.Type(row.EventType),
		row.FormID, body, webhook.Status(row.Status), row.Cycle, attempts, fromMillisPtr(row.NextAttemptAt),
		fromMillis(row.CreatedAt), fromMillis(row.UpdatedAt))
	d.RestoreTraceParent(emptyIfNull(row.TraceParent))
	d.RestoreFormVersion(zeroIfNull(row.FormVersion))
	d.RestoreReplayID(emptyIfNull(row.ReplayID))
	if len(row.Body) == 0 {
		d.RestoreFromEvent(nil)
	}
	return d, nil
}

// withBodies rebuilds the body of each delivery of a stored event from the event in the
// outbox, with the function that made it (webhook.EventBody): the same bytes at every attempt.
// A delivery whose event is no longer there keeps no body (webhook.Delivery.EventGone).
func (r *DeliveryRepository) withBodies(ctx context.Context, ds []*webhook.Delivery) ([]*webhook.Delivery, error) {
	byWorkspace := map[string][]string{}
	for _, d := range ds {
		if d.EventGone() {
			byWorkspace[d.WorkspaceID()] = append(byWorkspace[d.WorkspaceID()], d.EventID())
		}
	}
	for workspaceID, ids := range byWorkspace {
		events, err := storedEvents(ctx, r.db.read(ctx), r.cipher, workspaceID, ids)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			e, ok := events[d.EventID()]
			if !ok || d.WorkspaceID() != workspaceID || !d.EventGone() {
				continue
			}
			body, err := webhook.EventBody(e)
			if err != nil {
				continue // never encodable: nothing can be sent (it never is with a stored event)
			}
			d.RestoreFromEvent(body)
		}
	}
	return ds, nil
}

// AddAll stores the deliveries in one transaction; a delivery whose (webhook, event) pair is
// already stored is skipped. A webhook deleted meanwhile gives domain.ErrNotFound.
func (r *DeliveryRepository) AddAll(ctx context.Context, ds []*webhook.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	rows := make([]deliveryRow, 0, len(ds))
	for _, d := range ds {
		row, err := r.toRow(ctx, d)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "webhook_id"}, {Name: "event_id"}}, DoNothing: true}).
			Create(&rows).Error
		return mapErr("add deliveries", err)
	})
}

// Get returns one delivery of the workspace's webhook, or domain.ErrNotFound.
func (r *DeliveryRepository) Get(ctx context.Context, workspaceID, webhookID, id string) (*webhook.Delivery, error) {
	var row deliveryRow
	err := r.db.read(ctx).Where("workspace_id = ? AND webhook_id = ? AND id = ?", workspaceID, webhookID, id).Take(&row).Error
	if err != nil {
		return nil, mapErr("get delivery", err)
	}
	return r.toDomain(ctx, row)
}

// List returns up to page.Limit deliveries of the webhook, newest first (created_at, id),
// strictly after page.After.
func (r *DeliveryRepository) List(ctx context.Context, workspaceID, webhookID string, page ports.Page) ([]*webhook.Delivery, error) {
	q := r.db.read(ctx).Where("workspace_id = ? AND webhook_id = ?", workspaceID, webhookID)
	rows, err := newestFirst[deliveryRow](q, page, "created_at", "deliveries")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, r.toDomain)
}

// ClaimDue leases due pending deliveries fairly between workspaces and webhooks (see claimDue).
func (r *DeliveryRepository) ClaimDue(ctx context.Context, c ports.Claim) ([]*webhook.Delivery, error) {
	rows, err := claimDue[deliveryRow](ctx, r.db, dueTable{name: "deliveries", due: "t.status = 'pending'", endpoint: "webhook_id"}, c)
	if err != nil {
		return nil, mapErr("claim due deliveries", err)
	}
	ds, err := allToDomain(ctx, rows, r.toDomain)
	if err != nil {
		return nil, err
	}
	return r.withBodies(ctx, ds)
}

func saveDelivery(db *gorm.DB, d *webhook.Delivery) error {
	attempts, err := encodeAttempts(d.Attempts())
	if err != nil {
		return err
	}
	return changedRow("save delivery", db.Exec("UPDATE deliveries SET status = ?, cycle = ?, attempts = ?, next_attempt_at = ?, updated_at = ? WHERE workspace_id = ? AND id = ?",
		string(d.Status()), d.Cycle(), attempts, toMillisPtr(d.NextAttemptAt()), toMillis(d.UpdatedAt()), d.WorkspaceID(), d.ID()))
}

// Update loads and locks a delivery of the workspace's webhook, runs change and stores the
// result with the effects change returns (see ports.Effects) in one transaction. When change fails nothing is written and its error is returned.
func (r *DeliveryRepository) Update(ctx context.Context, workspaceID, webhookID, id string, change func(*webhook.Delivery) (ports.Effects, error)) (*webhook.Delivery, error) {
	// The workspace's data key exists (it sealed the delivery's body): the effects need no EnsureKey.
	return updateLocked(ctx, r.db, r.cipher, lockUpdate, "delivery", r.toDomain, change, func(tx *gorm.DB, d *webhook.Delivery) error {
		return saveDelivery(tx, d)
	}, "workspace_id = ? AND webhook_id = ? AND id = ?", workspaceID, webhookID, id)
}

func deliveryAAD(id string) []byte { return []byte("deliveries/" + id) }

type deliveryRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	WorkspaceID   string `gorm:"column:workspace_id"`
	WebhookID     string `gorm:"column:webhook_id"`
	EventID       string `gorm:"column:event_id"`
	EventType     string `gorm:"column:event_type"`
	FormID        string `gorm:"column:form_id"`
	Body          []byte `gorm:"column:body"` // sealed; empty for a delivery of a stored event
	Status        string `gorm:"column:status"`
	Cycle         int    `gorm:"column:cycle"`
	Attempts      string `gorm:"column:attempts"`
	NextAttemptAt *int64 `gorm:"column:next_attempt_at"`
	CreatedAt     int64  `gorm:"column:created_at"`
	UpdatedAt     int64  `gorm:"column:updated_at"`

	TraceParent *string `gorm:"column:traceparent"` // W3C trace context, NULL when not traced
	FormVersion *int    `gorm:"column:form_version"`
	ReplayID    *string `gorm:"column:replay_id"` // the replay that last queued it again
}

func (deliveryRow) TableName() string { return "deliveries" }

// attemptJSON is an attempt's stored shape: status codes, durations and error strings only.
type attemptJSON struct {
	Number     int     `json:"n"`
	At         int64   `json:"at"`
	StatusCode *int    `json:"status_code,omitempty"`
	DurationMS int64   `json:"duration_ms"`
	Error      *string `json:"error,omitempty"`
}

func encodeAttempts(as []retry.Attempt) (string, error) {
	out := make([]attemptJSON, len(as))
	for i, a := range as {
		out[i] = attemptJSON{Number: a.Number, At: toMillis(a.At), StatusCode: a.StatusCode, DurationMS: a.Duration.Milliseconds(), Error: a.Error}
	}
	b, err := jsoncodec.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode attempts: %w", err)
	}
	return string(b), nil
}

func decodeAttempts(id, raw string) ([]retry.Attempt, error) {
	var in []attemptJSON
	if err := jsoncodec.Unmarshal([]byte(raw), &in); err != nil {
		return nil, fmt.Errorf("decode attempts of delivery %s: %w", id, err)
	}
	out := make([]retry.Attempt, len(in))
	for i, a := range in {
		out[i] = retry.Attempt{Number: a.Number, At: fromMillis(a.At), StatusCode: a.StatusCode, Duration: time.Duration(a.DurationMS) * time.Millisecond, Error: a.Error}
	}
	return out, nil
}
