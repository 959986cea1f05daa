package persistence

import (
	"context"
	"fmt"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/ports"
)

type integrationRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	Type        string `gorm:"column:type"`
	Credentials []byte `gorm:"column:credentials"` // sealed JSON object
	CreatedAt   int64  `gorm:"column:created_at"`
}

func (integrationRow) TableName() string { return "integrations" }

func integrationAAD(id string) []byte { return []byte("integrations/" + id) }

// IntegrationRepository stores integrations; credentials are sealed with the workspace's data key.
type IntegrationRepository struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.IntegrationRepository = (*IntegrationRepository)(nil)

// NewIntegrationRepository returns the integration repository; cipher seals the credentials.
func NewIntegrationRepository(db *DB, cipher ports.Cipher) *IntegrationRepository {
	return &IntegrationRepository{db: db, cipher: cipher}
}

func (r *IntegrationRepository) toDomain(ctx context.Context, row integrationRow) (*integration.Integration, error) {
	plain, err := r.cipher.Open(ctx, row.WorkspaceID, row.Credentials, integrationAAD(row.ID))
	if err != nil {
		return nil, fmt.Errorf("open credentials of integration %s: %w", row.ID, err)
	}
	var creds map[string]string
	if err := jsoncodec.Unmarshal(plain, &creds); err != nil {
		return nil, fmt.Errorf("decode credentials of integration %s: %w", row.ID, err)
	}
	return integration.UnmarshalFromDatabase(row.ID, row.WorkspaceID, row.Type, creds, fromMillis(row.CreatedAt)), nil
}

// Create stores i; an existing ID gives domain.ErrConflict.
func (r *IntegrationRepository) Create(ctx context.Context, i *integration.Integration, events ...audit.Event) error {
	b, err := jsoncodec.Marshal(i.Credentials())
	if err != nil {
		return fmt.Errorf("encode integration credentials: %w", err)
	}
	sealed, err := r.cipher.Seal(ctx, i.WorkspaceID(), b, integrationAAD(i.ID()))
	if err != nil {
		return fmt.Errorf("seal integration credentials: %w", err)
	}
	row := integrationRow{ID: i.ID(), WorkspaceID: i.WorkspaceID(), Type: i.Type(), Credentials: sealed, CreatedAt: toMillis(i.CreatedAt())}
	return r.db.insertWithAudit(ctx, "create integration", &row, events)
}

// Get returns the integration of the workspace, or domain.ErrNotFound.
func (r *IntegrationRepository) Get(ctx context.Context, workspaceID, id string) (*integration.Integration, error) {
	var row integrationRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&row).Error; err != nil {
		return nil, mapErr("get integration", err)
	}
	return r.toDomain(ctx, row)
}

// List returns up to page.Limit integrations of the workspace, newest first, after page.After.
func (r *IntegrationRepository) List(ctx context.Context, workspaceID string, page ports.Page) ([]*integration.Integration, error) {
	q := r.db.read(ctx).Where("workspace_id = ?", workspaceID)
	rows, err := newestFirst[integrationRow](q, page, "created_at", "integrations")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, r.toDomain)
}

// Delete removes the integration, or returns domain.ErrNotFound.
func (r *IntegrationRepository) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	return r.db.deleteWithAudit(ctx, "delete integration", "DELETE FROM integrations WHERE workspace_id = ? AND id = ?", workspaceID, id, events)
}

// OfType returns the workspace's newest integration of the type, or domain.ErrNotFound.
func (r *IntegrationRepository) OfType(ctx context.Context, workspaceID, typ string) (*integration.Integration, error) {
	var row integrationRow
	err := r.db.read(ctx).Where("workspace_id = ? AND type = ?", workspaceID, typ).
		Order("created_at DESC, id DESC").Take(&row).Error
	if err != nil {
		return nil, mapErr("find integration", err)
	}
	return r.toDomain(ctx, row)
}
