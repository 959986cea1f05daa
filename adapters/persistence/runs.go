package persistence

import (
	"context"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// RunRepository stores workflow runs; their actions (configs hold secrets) and the submitted
// values they carry are sealed with the workspace's data key.
type RunRepository struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.RunRepository = (*RunRepository)(nil)

// NewRunRepository returns the run repository; cipher seals actions and values.
func NewRunRepository(db *DB, cipher ports.Cipher) *RunRepository {
	return &RunRepository{db: db, cipher: cipher}
}

type runRow struct {
	ID            string  `gorm:"column:id;primaryKey"`
	WorkspaceID   string  `gorm:"column:workspace_id"`
	Kind          string  `gorm:"column:kind"`
	WorkflowID    *string `gorm:"column:workflow_id"` // NULL for a notification run
	FormID        string  `gorm:"column:form_id"`
	SubmissionID  string  `gorm:"column:submission_id"`
	EventID       string  `gorm:"column:event_id"`
	EventType     string  `gorm:"column:event_type"`
	OccurredAt    int64   `gorm:"column:occurred_at"`
	Status        string  `gorm:"column:status"`
	Actions       []byte  `gorm:"column:actions"` // sealed JSON of []actionRunJSON
	Fields        []byte  `gorm:"column:fields"`  // sealed JSON of the event's values
	NextAttemptAt *int64  `gorm:"column:next_attempt_at"`
	CreatedAt     int64   `gorm:"column:created_at"`
	UpdatedAt     int64   `gorm:"column:updated_at"`
	FinishedAt    *int64  `gorm:"column:finished_at"`

	TraceParent *string `gorm:"column:traceparent"` // W3C trace context, NULL when not traced
}

func (runRow) TableName() string { return "runs" }

// actionRunJSON is an action of a run as stored (inside the sealed column).
type actionRunJSON struct {
	ActionID      string          `json:"action_id"`
	Type          string          `json:"type"`
	Config        map[string]any  `json:"config"`
	Status        string          `json:"status"`
	Cycle         int             `json:"cycle"`
	Attempts      json.RawMessage `json:"attempts"`
	NextAttemptAt *int64          `json:"next_attempt_at,omitempty"`
}

func runActionsAAD(id string) []byte { return []byte("runs/" + id + "/actions") }

func runFieldsAAD(id string) []byte { return []byte("runs/" + id + "/fields") }

func (r *RunRepository) seal(ctx context.Context, run *workflow.Run) (actions, fields []byte, err error) {
	as := run.Actions()
	out := make([]actionRunJSON, len(as))
	for i, a := range as {
		attempts, err := encodeAttempts(a.Attempts)
		if err != nil {
			return nil, nil, err
		}
		out[i] = actionRunJSON{ActionID: a.ActionID, Type: a.Type, Config: a.Config, Status: string(a.Status), Cycle: a.Cycle,
			Attempts: json.RawMessage(attempts), NextAttemptAt: toMillisPtr(a.NextAttemptAt)}
	}
	plainActions, err := jsoncodec.Marshal(out)
	if err != nil {
		return nil, nil, fmt.Errorf("encode run actions: %w", err)
	}
	plainFields, err := jsoncodec.Marshal(run.Fields())
	if err != nil {
		return nil, nil, fmt.Errorf("encode run fields: %w", err)
	}
	if actions, err = r.cipher.Seal(ctx, run.WorkspaceID(), plainActions, runActionsAAD(run.ID())); err != nil {
		return nil, nil, fmt.Errorf("seal run actions: %w", err)
	}
	if fields, err = r.cipher.Seal(ctx, run.WorkspaceID(), plainFields, runFieldsAAD(run.ID())); err != nil {
		return nil, nil, fmt.Errorf("seal run fields: %w", err)
	}
	return actions, fields, nil
}

func (r *RunRepository) toRow(ctx context.Context, run *workflow.Run) (runRow, error) {
	actions, fields, err := r.seal(ctx, run)
	if err != nil {
		return runRow{}, err
	}
	var workflowID *string
	if !run.Kind().IsNotification() {
		id := run.WorkflowID()
		workflowID = &id
	}
	return runRow{ID: run.ID(), WorkspaceID: run.WorkspaceID(), Kind: string(run.Kind()), WorkflowID: workflowID, FormID: run.FormID(),
		SubmissionID: run.SubmissionID(), EventID: run.EventID(), EventType: string(run.EventType()), OccurredAt: toMillis(run.OccurredAt()),
		Status: string(run.Status()), Actions: actions, Fields: fields, NextAttemptAt: toMillisPtr(run.NextAttemptAt()),
		CreatedAt: toMillis(run.CreatedAt()), UpdatedAt: toMillis(run.UpdatedAt()), FinishedAt: toMillisPtr(run.FinishedAt()),
		TraceParent: nullIfEmpty(run.TraceParent())}, nil
}

func (r *RunRepository) toDomain(ctx context.Context, row runRow) (*workflow.Run, error) {
	plainActions, err := r.cipher.Open(ctx, row.WorkspaceID, row.Actions, runActionsAAD(row.ID))
	if err != nil {
		return nil, fmt.Errorf("open actions of run %s: %w", row.ID, err)
	}
	plainFields, err := r.cipher.Open(ctx, row.WorkspaceID, row.Fields, runFieldsAAD(row.ID))
	if err != nil {
		return nil, fmt.Errorf("open fields of run %s: %w", row.ID, err)
	}
	var in []actionRunJSON
	if err := jsoncodec.Unmarshal(plainActions, &in); err != nil {
		return nil, fmt.Errorf("decode actions of run %s: %w", row.ID, err)
	}
	actions := make([]workflow.ActionRun, len(in))
	for i, a := range in {
		attempts := []retry.Attempt{}
		if len(a.Attempts) > 0 {
			if attempts, err = decodeAttempts(row.ID, string(a.Attempts)); err != nil {
				return nil, err
			}
		}
		if a.Config == nil {
			a.Config = map[string]any{}
		}
		actions[i] = workflow.ActionRun{ActionID: a.ActionID, Type: a.Type, Config: a.Config, Status: workflow.ActionRunStatus(a.Status),
			Cycle: a.Cycle, Attempts: attempts, NextAttemptAt: fromMillisPtr(a.NextAttemptAt)}
	}
	var raw map[string]any
	if err := jsoncodec.Unmarshal(plainFields, &raw); err != nil {
		return nil, fmt.Errorf("decode fields of run %s: %w", row.ID, err)
	}
	fields := workflow.EventFields(event.Event{Data: map[string]any{"fields": raw}})
	kind, ok := workflow.ParseRunKind(row.Kind)
	if !ok {
		return nil, fmt.Errorf("run %s has an unknown kind %q", row.ID, row.Kind)
	}
	workflowID := ""
	if row.WorkflowID != nil {
		workflowID = *row.WorkflowID
	}
	run := workflow.UnmarshalRunFromDatabase(row.ID, row.WorkspaceID, kind, workflowID, row.FormID, row.SubmissionID, row.EventID,
		event.Type(row.EventType), fromMillis(row.OccurredAt), fields, workflow.RunStatus(row.Status), actions,
		fromMillisPtr(row.NextAttemptAt), fromMillis(row.CreatedAt), fromMillis(row.UpdatedAt), fromMillisPtr(row.FinishedAt))
	run.RestoreTraceParent(emptyIfNull(row.TraceParent))
	return run, nil
}

// AddAll stores the runs in one transaction; a workflow run whose (workflow, event) pair, or a
// notification run whose (form, event, kind) is already stored is skipped.
func (r *RunRepository) AddAll(ctx context.Context, rs []*workflow.Run) error {
	if len(rs) == 0 {
		return nil
	}
	var workflowRows, notificationRows []runRow
	for _, run := range rs {
		row, err := r.toRow(ctx, run)
		if err != nil {
			return err
		}
		if row.WorkflowID == nil {
			notificationRows = append(notificationRows, row)
		} else {
			workflowRows = append(workflowRows, row)
		}
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if len(workflowRows) > 0 {
			err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "workflow_id"}, {Name: "event_id"}}, DoNothing: true}).
				Create(&workflowRows).Error
			if err != nil {
				return mapErr("add runs", err)
			}
		}
		if len(notificationRows) > 0 {
			// The conflict target is the partial unique index of notification runs.
			err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "form_id"}, {Name: "event_id"}, {Name: "kind"}},
				TargetWhere: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "workflow_id IS NULL"}}}, DoNothing: true}).
				Create(&notificationRows).Error
			if err != nil {
				return mapErr("add notification runs", err)
			}
		}
		return nil
	})
}

// Get returns one run of the workspace, or domain.ErrNotFound.
func (r *RunRepository) Get(ctx context.Context, workspaceID, id string) (*workflow.Run, error) {
	var row runRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&row).Error; err != nil {
		return nil, mapErr("get run", err)
	}
	return r.toDomain(ctx, row)
}

// List returns up to page.Limit runs of the workflow, newest first (created_at, id), strictly
// after page.After.
func (r *RunRepository) List(ctx context.Context, workspaceID, workflowID string, page ports.Page) ([]*workflow.Run, error) {
	q := r.db.read(ctx).Where("workspace_id = ? AND workflow_id = ?", workspaceID, workflowID)
	rows, err := newestFirst[runRow](q, page, "created_at", "runs")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, r.toDomain)
}

// ListNotifications returns up to page.Limit notification runs of the form, newest first
// (created_at, id), strictly after page.After.
func (r *RunRepository) ListNotifications(ctx context.Context, workspaceID, formID string, page ports.Page) ([]*workflow.Run, error) {
	q := r.db.read(ctx).Where("workspace_id = ? AND form_id = ? AND workflow_id IS NULL", workspaceID, formID)
	rows, err := newestFirst[runRow](q, page, "created_at", "notification runs")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, r.toDomain)
}

// ClaimDue leases due unfinished runs fairly between workspaces (see claimDue).
func (r *RunRepository) ClaimDue(ctx context.Context, c ports.Claim) ([]*workflow.Run, error) {
	rows, err := claimDue[runRow](ctx, r.db, dueTable{name: "runs", due: "t.status IN ('queued', 'running')"}, c)
	if err != nil {
		return nil, mapErr("claim due runs", err)
	}
	return allToDomain(ctx, rows, r.toDomain)
}

// Save stores the run's state after an attempt. It never recreates a deleted run: when the row
// is gone (its workspace was deleted) it returns domain.ErrNotFound.
func (r *RunRepository) Save(ctx context.Context, run *workflow.Run) error {
	actions, fields, err := r.seal(ctx, run)
	if err != nil {
		return err
	}
	return r.db.write(ctx, func(db *gorm.DB) error { return saveRun(db, run, actions, fields) })
}

// saveRun writes the run's state (its sealed actions and fields given) over its row.
func saveRun(db *gorm.DB, run *workflow.Run, actions, fields []byte) error {
	return changedRow("save run", db.Exec("UPDATE runs SET status = ?, actions = ?, fields = ?, next_attempt_at = ?, updated_at = ?, finished_at = ? WHERE workspace_id = ? AND id = ?",
		string(run.Status()), actions, fields, toMillisPtr(run.NextAttemptAt()), toMillis(run.UpdatedAt()), toMillisPtr(run.FinishedAt()),
		run.WorkspaceID(), run.ID()))
}

// Update loads and locks a run of the workspace, runs change and stores the result with
// the effects change returns in one transaction (a manual retry). When change fails nothing is written and its error is
// returned as is.
func (r *RunRepository) Update(ctx context.Context, workspaceID, id string, change func(*workflow.Run) (ports.Effects, error)) (*workflow.Run, error) {
	// The data key is created before the lock: inside the transaction it would need a second
	// writer on SQLite.
	if err := r.cipher.EnsureKey(ctx, workspaceID); err != nil {
		return nil, fmt.Errorf("update run: %w", err)
	}
	return updateLocked(ctx, r.db, r.cipher, lockUpdate, "run", r.toDomain, change, func(tx *gorm.DB, run *workflow.Run) error {
		actions, fields, err := r.seal(ctx, run)
		if err != nil {
			return err
		}
		return saveRun(tx, run, actions, fields)
	}, "workspace_id = ? AND id = ?", workspaceID, id)
}
