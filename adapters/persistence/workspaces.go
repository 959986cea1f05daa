package persistence

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// WorkspaceRepository stores workspaces.
type WorkspaceRepository struct{ db *DB }

var _ ports.WorkspaceRepository = (*WorkspaceRepository)(nil)

// NewWorkspaceRepository returns the workspace repository.
func NewWorkspaceRepository(db *DB) *WorkspaceRepository { return &WorkspaceRepository{db: db} }

// Create stores w; an existing ID gives domain.ErrConflict.
func (r *WorkspaceRepository) Create(ctx context.Context, w *workspace.Workspace) error {
	row := workspaceFromDomain(w)
	return r.db.insert(ctx, "create workspace", &row)
}

// Get returns the workspace or domain.ErrNotFound.
func (r *WorkspaceRepository) Get(ctx context.Context, id string) (*workspace.Workspace, error) {
	var row workspaceRow
	if err := r.db.read(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, mapErr("get workspace", err)
	}
	return row.toDomain(), nil
}

// List returns every workspace, oldest first.
func (r *WorkspaceRepository) List(ctx context.Context) ([]*workspace.Workspace, error) {
	var rows []workspaceRow
	if err := r.db.read(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, mapErr("list workspaces", err)
	}
	out := make([]*workspace.Workspace, len(rows))
	for i, row := range rows {
		out[i] = row.toDomain()
	}
	return out, nil
}

// Oldest returns the first workspace created, or domain.ErrNotFound.
func (r *WorkspaceRepository) Oldest(ctx context.Context) (*workspace.Workspace, error) {
	var row workspaceRow
	err := r.db.read(ctx).Order("created_at, id").Limit(1).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, mapErr("oldest workspace", err)
	}
	return row.toDomain(), nil
}

// Update locks the workspace row, lets change modify it, and stores it with the effects change
// returns (audit events only).
func (r *WorkspaceRepository) Update(ctx context.Context, id string, change func(*workspace.Workspace) (ports.Effects, error)) (*workspace.Workspace, error) {
	var out *workspace.Workspace
	err := lockedUpdate(ctx, r.db, lockUpdate, "workspace", func(tx *gorm.DB, row workspaceRow) error {
		w := row.toDomain()
		fx, err := change(w)
		if err != nil {
			return err
		}
		next := workspaceFromDomain(w)
		if err := tx.Model(&workspaceRow{}).Where("id = ?", id).Select("*").Updates(&next).Error; err != nil {
			return mapErr("update workspace", err)
		}
		out = w
		return writeEffects(ctx, tx, nil, "workspace", fx)
	}, "id = ?", id)
	return out, err
}

type workspaceRow struct {
	ID             string `gorm:"column:id;primaryKey"`
	Name           string `gorm:"column:name"`
	Plan           string `gorm:"column:plan"`
	BillingEmail   string `gorm:"column:billing_email"`
	Status         string `gorm:"column:status"`
	CancelledAt    *int64 `gorm:"column:cancelled_at"`
	DataDeletionAt *int64 `gorm:"column:data_deletion_at"`
	RetainedPlan   string `gorm:"column:retained_plan"`
	TimeZone       string `gorm:"column:time_zone"`
	CreatedAt      int64  `gorm:"column:created_at"`
	UpdatedAt      int64  `gorm:"column:updated_at"`
}

func (workspaceRow) TableName() string { return "workspaces" }

func workspaceFromDomain(w *workspace.Workspace) workspaceRow {
	r := w.Record()
	return workspaceRow{ID: r.ID, Name: r.Name, Plan: string(r.Plan), BillingEmail: r.BillingEmail, Status: string(r.Status),
		CancelledAt: toMillisPtr(r.CancelledAt), DataDeletionAt: toMillisPtr(r.DataDeletionAt), RetainedPlan: string(r.RetainedPlan),
		TimeZone: r.TimeZone, CreatedAt: toMillis(r.CreatedAt), UpdatedAt: toMillis(r.UpdatedAt)}
}

func (r workspaceRow) toDomain() *workspace.Workspace {
	return workspace.UnmarshalFromDatabase(workspace.Record{ID: r.ID, Name: r.Name, Plan: workspace.Plan(r.Plan),
		BillingEmail: r.BillingEmail, Status: workspace.Status(r.Status), CancelledAt: fromMillisPtr(r.CancelledAt),
		DataDeletionAt: fromMillisPtr(r.DataDeletionAt), RetainedPlan: workspace.Plan(r.RetainedPlan),
		TimeZone: r.TimeZone, CreatedAt: fromMillis(r.CreatedAt), UpdatedAt: fromMillis(r.UpdatedAt)})
}
