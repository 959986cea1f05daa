package persistence

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

type workflowRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	FormID      string `gorm:"column:form_id"`
	Name        string `gorm:"column:name"`
	Enabled     int    `gorm:"column:enabled"`
	EnabledAt   int64  `gorm:"column:enabled_since"`
	TriggerType string `gorm:"column:trigger_type"`
	Conditions  string `gorm:"column:conditions"` // JSON, or "null" when none were given
	Actions     []byte `gorm:"column:actions"`    // sealed JSON: configs hold secrets
	CreatedAt   int64  `gorm:"column:created_at"`
	UpdatedAt   int64  `gorm:"column:updated_at"`
}

func (workflowRow) TableName() string { return "workflows" }

type conditionJSON struct {
	FieldID  string `json:"field_id"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Kind     string `json:"kind"`
}

type actionJSON struct {
	ID     string         `json:"id"`
	Type   string         `json:"type"`
	Config map[string]any `json:"config"`
}

func workflowAAD(id string) []byte { return []byte("workflows/" + id) }

// WorkflowRepository stores workflows; the actions are sealed with the workspace's data key.
type WorkflowRepository struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.WorkflowRepository = (*WorkflowRepository)(nil)

// NewWorkflowRepository returns the workflow repository; cipher seals the action configs.
func NewWorkflowRepository(db *DB, cipher ports.Cipher) *WorkflowRepository {
	return &WorkflowRepository{db: db, cipher: cipher}
}

func (r *WorkflowRepository) toRow(ctx context.Context, w *workflow.Workflow) (workflowRow, error) {
	t := w.Trigger()
	var conds []conditionJSON
	if t.Conditions != nil {
		conds = make([]conditionJSON, len(t.Conditions))
		for i, c := range t.Conditions {
			conds[i] = conditionJSON{FieldID: c.FieldID, Operator: string(c.Operator), Value: c.Value, Kind: string(c.Kind)}
		}
	}
	cb, err := jsoncodec.Marshal(conds)
	if err != nil {
		return workflowRow{}, fmt.Errorf("encode workflow conditions: %w", err)
	}
	acts := make([]actionJSON, 0, len(w.Actions()))
	for _, a := range w.Actions() {
		acts = append(acts, actionJSON{ID: a.ID, Type: a.Type, Config: a.Config})
	}
	ab, err := jsoncodec.Marshal(acts)
	if err != nil {
		return workflowRow{}, fmt.Errorf("encode workflow actions: %w", err)
	}
	sealed, err := r.cipher.Seal(ctx, w.WorkspaceID(), ab, workflowAAD(w.ID()))
	if err != nil {
		return workflowRow{}, fmt.Errorf("seal workflow actions: %w", err)
	}
	row := workflowRow{ID: w.ID(), WorkspaceID: w.WorkspaceID(), FormID: w.FormID(), Name: w.Name(),
		TriggerType: string(t.Type), Conditions: string(cb), Actions: sealed, EnabledAt: toMillis(w.EnabledSince()),
		CreatedAt: toMillis(w.CreatedAt()), UpdatedAt: toMillis(w.UpdatedAt())}
	if w.Enabled() {
		row.Enabled = 1
	}
	return row, nil
}

func (r *WorkflowRepository) toDomain(ctx context.Context, row workflowRow) (*workflow.Workflow, error) {
	var conds []conditionJSON
	if err := jsoncodec.Unmarshal([]byte(row.Conditions), &conds); err != nil {
		return nil, fmt.Errorf("decode conditions of workflow %s: %w", row.ID, err)
	}
	t := workflow.Trigger{Type: event.Type(row.TriggerType)}
	if conds != nil {
		t.Conditions = make([]workflow.Condition, len(conds))
		for i, c := range conds {
			t.Conditions[i] = workflow.Condition{FieldID: c.FieldID, Operator: workflow.Operator(c.Operator),
				Value: c.Value, Kind: workflow.ValueKind(c.Kind)}
		}
	}
	plain, err := r.cipher.Open(ctx, row.WorkspaceID, row.Actions, workflowAAD(row.ID))
	if err != nil {
		return nil, fmt.Errorf("open actions of workflow %s: %w", row.ID, err)
	}
	var acts []actionJSON
	if err := jsoncodec.Unmarshal(plain, &acts); err != nil {
		return nil, fmt.Errorf("decode actions of workflow %s: %w", row.ID, err)
	}
	actions := make([]workflow.Action, len(acts))
	for i, a := range acts {
		if a.Config == nil {
			a.Config = map[string]any{}
		}
		actions[i] = workflow.Action{ID: a.ID, Type: a.Type, Config: a.Config}
	}
	return workflow.UnmarshalFromDatabase(row.ID, row.WorkspaceID, row.FormID, row.Name, row.Enabled != 0, fromMillis(row.EnabledAt), t, actions,
		fromMillis(row.CreatedAt), fromMillis(row.UpdatedAt)), nil
}

// Create stores w; an existing ID gives domain.ErrConflict, a form_id that names no form of the
// workspace domain.ErrNotFound.
func (r *WorkflowRepository) Create(ctx context.Context, w *workflow.Workflow, events ...audit.Event) error {
	row, err := r.toRow(ctx, w)
	if err != nil {
		return err
	}
	return r.db.insertWithAudit(ctx, "create workflow", &row, events)
}

// Get returns the workflow of the workspace, or domain.ErrNotFound.
func (r *WorkflowRepository) Get(ctx context.Context, workspaceID, id string) (*workflow.Workflow, error) {
	var row workflowRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&row).Error; err != nil {
		return nil, mapErr("get workflow", err)
	}
	return r.toDomain(ctx, row)
}

// List returns up to page.Limit workflows of the workspace (of one form when formID is set),
// newest first (created_at, id), strictly after page.After.
func (r *WorkflowRepository) List(ctx context.Context, workspaceID string, formID *string, page ports.Page) ([]*workflow.Workflow, error) {
	q := r.db.read(ctx).Where("workspace_id = ?", workspaceID)
	if formID != nil {
		q = q.Where("form_id = ?", *formID)
	}
	rows, err := newestFirst[workflowRow](q, page, "created_at", "workflows")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, r.toDomain)
}

// Update loads and locks the workflow, runs change and stores the result with the
// effects change returns in one transaction.
// When change fails nothing is written and its error is returned as is.
func (r *WorkflowRepository) Update(ctx context.Context, workspaceID, id string, change func(*workflow.Workflow) (ports.Effects, error)) (*workflow.Workflow, error) {
	// The data key is created before the lock: inside the transaction it would need a second
	// writer on SQLite.
	if err := r.cipher.EnsureKey(ctx, workspaceID); err != nil {
		return nil, fmt.Errorf("update workflow: %w", err)
	}
	return updateLocked(ctx, r.db, r.cipher, lockUpdate, "workflow", r.toDomain, change, func(tx *gorm.DB, w *workflow.Workflow) error {
		next, err := r.toRow(ctx, w)
		if err != nil {
			return err
		}
		return mapErr("update workflow", tx.Exec("UPDATE workflows SET name = ?, enabled = ?, enabled_since = ?, trigger_type = ?, conditions = ?, actions = ?, updated_at = ? WHERE workspace_id = ? AND id = ?",
			next.Name, next.Enabled, next.EnabledAt, next.TriggerType, next.Conditions, next.Actions, next.UpdatedAt, workspaceID, id).Error)
	}, "workspace_id = ? AND id = ?", workspaceID, id)
}

// Delete removes the workflow, or returns domain.ErrNotFound. Its runs stay and finish.
func (r *WorkflowRepository) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	return r.db.deleteWithAudit(ctx, "delete workflow", "DELETE FROM workflows WHERE workspace_id = ? AND id = ?", workspaceID, id, events)
}

// CountForForm returns the number of workflows attached to the form.
func (r *WorkflowRepository) CountForForm(ctx context.Context, workspaceID, formID string) (int, error) {
	var n int64
	err := r.db.read(ctx).Model(&workflowRow{}).Where("workspace_id = ? AND form_id = ?", workspaceID, formID).Count(&n).Error
	if err != nil {
		return 0, mapErr("count workflows", err)
	}
	return int(n), nil
}

// Matching returns the enabled workflows of e's form whose trigger type is e's type, oldest
// first; conditions are left to the caller.
func (r *WorkflowRepository) Matching(ctx context.Context, e event.Event) ([]*workflow.Workflow, error) {
	var rows []workflowRow
	err := r.db.read(ctx).Where("workspace_id = ? AND form_id = ? AND enabled = 1 AND trigger_type = ?", e.WorkspaceID, e.FormID, string(e.Type)).
		Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, mapErr("match workflows", err)
	}
	return allToDomain(ctx, rows, r.toDomain)
}
