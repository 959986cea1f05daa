package ports

import (
	"context"

	"github.com/formward/formward/domain/workflow"
)

// RunRepository stores workflow runs (their action configs, attempts and submitted values
// sealed at rest). Runs outlive their workflow: deleting one lets its runs in progress finish.
type RunRepository interface {
	// AddAll stores new runs; a run of an event for a workflow that already has one, or a
	// notification run of an event whose form already has one of that kind, is skipped, so a
	// redelivered event never starts a second run.
	AddAll(ctx context.Context, rs []*workflow.Run) error
	// Get returns one run of the workspace, or domain.ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (*workflow.Run, error)
	// List returns up to page.Limit runs of a workflow, newest first.
	List(ctx context.Context, workspaceID, workflowID string, page Page) ([]*workflow.Run, error)
	// ListNotifications returns up to page.Limit notification runs of a form (runs without a
	// workflow), newest first.
	ListNotifications(ctx context.Context, workspaceID, formID string, page Page) ([]*workflow.Run, error)
	// ClaimDue returns up to c.Limit unfinished runs due at c.Now, within c's per-workspace share
	// and taking workspaces in turn, and moves their next attempt to c.Now+c.Lease, so that other
	// engines skip them meanwhile (FOR UPDATE SKIP LOCKED on PostgreSQL).
	ClaimDue(ctx context.Context, c Claim) ([]*workflow.Run, error)
	// Save stores the run after an attempt; domain.ErrNotFound when it is gone.
	Save(ctx context.Context, r *workflow.Run) error
	// Update loads and locks a run of the workspace, lets change modify it and stores it with
	// the effects change returns, in one transaction; domain.ErrNotFound when there is no such
	// run. When change fails nothing is written and its error is returned as is.
	Update(ctx context.Context, workspaceID, id string, change func(*workflow.Run) (Effects, error)) (*workflow.Run, error)
}
