package persistence

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// WebhookRepository stores webhooks; the signing secret is sealed with the workspace's data key.
type WebhookRepository struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.WebhookRepository = (*WebhookRepository)(nil)

// NewWebhookRepository returns the webhook repository; cipher seals the signing secrets.
func NewWebhookRepository(db *DB, cipher ports.Cipher) *WebhookRepository {
	return &WebhookRepository{db: db, cipher: cipher}
}

func (r *WebhookRepository) toRow(ctx context.Context, w *webhook.Webhook) (webhookRow, error) {
	events := make([]string, 0, len(w.Events()))
	for _, t := range w.Events() {
		events = append(events, string(t))
	}
	b, err := jsoncodec.Marshal(events)
	if err != nil {
		return webhookRow{}, fmt.Errorf("encode webhook events: %w", err)
	}
	row := webhookRow{ID: w.ID(), WorkspaceID: w.WorkspaceID(), URL: w.URL(), Events: string(b), FormID: w.FormID(),
		CreatedAt: toMillis(w.CreatedAt()), UpdatedAt: toMillis(w.UpdatedAt())}
	if w.Enabled() {
		row.Enabled = 1
	}
	if since := w.EnabledSince(); !since.IsZero() {
		row.EnabledAt = toMillis(since)
	}
	if w.SecretSet() {
		row.Secret, err = r.cipher.Seal(ctx, w.WorkspaceID(), []byte(w.Secret()), webhookAAD(w.ID()))
		if err != nil {
			return webhookRow{}, fmt.Errorf("seal webhook secret: %w", err)
		}
	}
	return row, nil
}

func (r *WebhookRepository) toDomain(ctx context.Context, row webhookRow) (*webhook.Webhook, error) {
	var names []string
	if err := jsoncodec.Unmarshal([]byte(row.Events), &names); err != nil {
		return nil, fmt.Errorf("decode events of webhook %s: %w", row.ID, err)
	}
	events := make([]event.Type, len(names))
	for i, n := range names {
		events[i] = event.Type(n)
	}
	var secret string
	if row.Secret != nil {
		plain, err := r.cipher.Open(ctx, row.WorkspaceID, row.Secret, webhookAAD(row.ID))
		if err != nil {
			return nil, fmt.Errorf("open secret of webhook %s: %w", row.ID, err)
		}
		secret = string(plain)
	}
	var since time.Time
	if row.EnabledAt != 0 {
		since = fromMillis(row.EnabledAt)
	}
	return webhook.UnmarshalFromDatabase(row.ID, row.WorkspaceID, row.URL, events, row.FormID, secret, row.Enabled == 1, since,
		fromMillis(row.CreatedAt), fromMillis(row.UpdatedAt)), nil
}

// Create stores w; an existing ID gives domain.ErrConflict, a form_id that names no form of
// the workspace domain.ErrNotFound.
func (r *WebhookRepository) Create(ctx context.Context, w *webhook.Webhook, events ...audit.Event) error {
	row, err := r.toRow(ctx, w)
	if err != nil {
		return err
	}
	return r.db.insertWithAudit(ctx, "create webhook", &row, events)
}

// Get returns the webhook of the workspace, or domain.ErrNotFound.
func (r *WebhookRepository) Get(ctx context.Context, workspaceID, id string) (*webhook.Webhook, error) {
	var row webhookRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&row).Error; err != nil {
		return nil, mapErr("get webhook", err)
	}
	return r.toDomain(ctx, row)
}

// List returns up to page.Limit webhooks of the workspace, newest first (created_at, id),
// strictly after page.After.
func (r *WebhookRepository) List(ctx context.Context, workspaceID string, page ports.Page) ([]*webhook.Webhook, error) {
	q := r.db.read(ctx).Where("workspace_id = ?", workspaceID)
	rows, err := newestFirst[webhookRow](q, page, "created_at", "webhooks")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, r.toDomain)
}

// Update loads and locks the webhook, runs change and stores the result with the
// effects change returns in one transaction.
// When change fails nothing is written and its error is returned as is.
func (r *WebhookRepository) Update(ctx context.Context, workspaceID, id string, change func(*webhook.Webhook) (ports.Effects, error)) (*webhook.Webhook, error) {
	// The data key is created before the lock: inside the transaction it would need a second
	// writer on SQLite.
	if err := r.cipher.EnsureKey(ctx, workspaceID); err != nil {
		return nil, fmt.Errorf("update webhook: %w", err)
	}
	return updateLocked(ctx, r.db, r.cipher, lockUpdate, "webhook", r.toDomain, change, func(tx *gorm.DB, w *webhook.Webhook) error {
		next, err := r.toRow(ctx, w)
		if err != nil {
			return err
		}
		return mapErr("update webhook", tx.Exec("UPDATE webhooks SET url = ?, events = ?, form_id = ?, secret = ?, enabled = ?, enabled_since = ?, updated_at = ? WHERE workspace_id = ? AND id = ?",
			next.URL, next.Events, next.FormID, next.Secret, next.Enabled, next.EnabledAt, next.UpdatedAt, workspaceID, id).Error)
	}, "workspace_id = ? AND id = ?", workspaceID, id)
}

// Delete removes the webhook and its deliveries, pending retries included, or returns
// domain.ErrNotFound.
func (r *WebhookRepository) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		// The foreign key cascades; this makes it explicit and independent of that.
		if err := tx.Exec("DELETE FROM deliveries WHERE workspace_id = ? AND webhook_id = ?", workspaceID, id).Error; err != nil {
			return mapErr("delete webhook deliveries", err)
		}
		if err := changedRow("delete webhook", tx.Exec("DELETE FROM webhooks WHERE workspace_id = ? AND id = ?", workspaceID, id)); err != nil {
			return err
		}
		return writeAudit(tx, events)
	})
}

// Count returns the number of webhooks of the workspace.
func (r *WebhookRepository) Count(ctx context.Context, workspaceID string) (int, error) {
	var n int64
	if err := r.db.read(ctx).Model(&webhookRow{}).Where("workspace_id = ?", workspaceID).Count(&n).Error; err != nil {
		return 0, mapErr("count webhooks", err)
	}
	return int(n), nil
}

// Matching returns the enabled webhooks of e's workspace bound to no form or to e's form whose
// events include e's type, oldest first (whether each was enabled already when e happened is
// the caller's check).
func (r *WebhookRepository) Matching(ctx context.Context, e event.Event) ([]*webhook.Webhook, error) {
	var rows []webhookRow
	err := r.db.read(ctx).Where("workspace_id = ? AND enabled = 1 AND (form_id IS NULL OR form_id = ?)", e.WorkspaceID, e.FormID).
		Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, mapErr("match webhooks", err)
	}
	all, err := allToDomain(ctx, rows, r.toDomain)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, w := range all {
		if w.Subscribes(e) {
			out = append(out, w)
		}
	}
	return out, nil
}

func webhookAAD(id string) []byte { return []byte("webhooks/" + id) }

type webhookRow struct {
	ID          string  `gorm:"column:id;primaryKey"`
	WorkspaceID string  `gorm:"column:workspace_id"`
	URL         string  `gorm:"column:url"`
	Events      string  `gorm:"column:events"`
	FormID      *string `gorm:"column:form_id"`
	Secret      []byte  `gorm:"column:secret"` // sealed; nil when no secret is set
	Enabled     int     `gorm:"column:enabled"`
	EnabledAt   int64   `gorm:"column:enabled_since"` // 0: never switched off
	CreatedAt   int64   `gorm:"column:created_at"`
	UpdatedAt   int64   `gorm:"column:updated_at"`
}

func (webhookRow) TableName() string { return "webhooks" }
