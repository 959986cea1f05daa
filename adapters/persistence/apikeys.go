package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

// APIKeyRepository stores API keys; only the hash of a secret is kept.
type APIKeyRepository struct{ db *DB }

var _ ports.APIKeyRepository = (*APIKeyRepository)(nil)

// NewAPIKeyRepository returns the API key repository.
func NewAPIKeyRepository(db *DB) *APIKeyRepository { return &APIKeyRepository{db: db} }

// Create stores k; an existing ID gives domain.ErrConflict, an unknown workspace domain.ErrNotFound.
func (r *APIKeyRepository) Create(ctx context.Context, k *apikey.Key, events ...audit.Event) error {
	row := apiKeyFromDomain(k)
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return mapErr("create api key", err)
		}
		return writeAudit(tx, events)
	})
}

// MarkUsed records when the key last authenticated a request.
func (r *APIKeyRepository) MarkUsed(ctx context.Context, id string, at time.Time) error {
	return r.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("mark api key used", db.Exec("UPDATE api_keys SET last_used_at = ? WHERE id = ?", toMillis(at), id).Error)
	})
}

// Get returns the key, revoked or not, or domain.ErrNotFound.
// List returns the keys of one workspace, or of all when workspaceID is empty, oldest first.
func (r *APIKeyRepository) List(ctx context.Context, workspaceID string) ([]*apikey.Key, error) {
	q := r.db.read(ctx).Order("created_at, id")
	if workspaceID != "" {
		q = q.Where("workspace_id = ?", workspaceID)
	}
	var rows []apiKeyRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, mapErr("list api keys", err)
	}
	out := make([]*apikey.Key, len(rows))
	for i, row := range rows {
		out[i] = row.toDomain()
	}
	return out, nil
}

// Revoke sets revoked_at; a key already revoked keeps its first time. Unknown IDs give
// domain.ErrNotFound.
func (r *APIKeyRepository) Revoke(ctx context.Context, workspaceID, id string, at time.Time, events ...audit.Event) error {
	return r.db.tx(ctx, func(db *gorm.DB) error {
		scope := func(q *gorm.DB) *gorm.DB {
			q = q.Where("id = ?", id)
			if workspaceID != "" {
				q = q.Where("workspace_id = ?", workspaceID)
			}
			return q
		}
		res := scope(db.Table("api_keys")).Where("revoked_at IS NULL").Update("revoked_at", toMillis(at))
		if res.Error != nil {
			return mapErr("revoke api key", res.Error)
		}
		if res.RowsAffected > 0 {
			return writeAudit(db, events)
		}
		var n int64
		if err := scope(db.Table("api_keys")).Count(&n).Error; err != nil {
			return mapErr("revoke api key", err)
		}
		if n == 0 {
			return domain.ErrNotFound
		}
		return nil
	})
}

type apiKeyRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	WorkspaceID   string `gorm:"column:workspace_id"`
	Name          string `gorm:"column:name"`
	Scope         string `gorm:"column:scope"`
	SecretHash    []byte `gorm:"column:secret_hash"`
	CreatedByType string `gorm:"column:created_by_type"`
	CreatedByID   string `gorm:"column:created_by_id"`
	CreatedByName string `gorm:"column:created_by_name"`
	CreatedAt     int64  `gorm:"column:created_at"`
	LastUsedAt    *int64 `gorm:"column:last_used_at"`
	RevokedAt     *int64 `gorm:"column:revoked_at"`
}

func (apiKeyRow) TableName() string { return "api_keys" }

func apiKeyFromDomain(k *apikey.Key) apiKeyRow {
	by := k.CreatedBy()
	if by.Type == "" {
		by = audit.System
	}
	return apiKeyRow{ID: k.ID(), WorkspaceID: k.WorkspaceID(), Name: k.Name(), Scope: string(k.Scope()),
		SecretHash: k.SecretHash(), CreatedByType: by.Type, CreatedByID: by.ID, CreatedByName: by.Name,
		CreatedAt: toMillis(k.CreatedAt()), LastUsedAt: toMillisPtr(k.LastUsedAt()), RevokedAt: toMillisPtr(k.RevokedAt())}
}

func (r apiKeyRow) toDomain() *apikey.Key {
	return apikey.UnmarshalFromDatabase(r.ID, r.WorkspaceID, r.Name, apikey.Scope(r.Scope), r.SecretHash,
		audit.Actor{Type: r.CreatedByType, ID: r.CreatedByID, Name: r.CreatedByName},
		fromMillis(r.CreatedAt), fromMillisPtr(r.LastUsedAt), fromMillisPtr(r.RevokedAt))
}
