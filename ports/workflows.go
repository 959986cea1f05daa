package ports

import (
	"context"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/workflow"
)

// WorkflowRepository stores workflows (action configs sealed at rest, since they hold secrets);
// every method is bounded to one workspace except Matching, which takes the event's.
type WorkflowRepository interface {
	// Create stores the workflow with its audit events in one transaction.
	Create(ctx context.Context, w *workflow.Workflow, events ...audit.Event) error
	Get(ctx context.Context, workspaceID, id string) (*workflow.Workflow, error)
	// List returns up to page.Limit workflows, newest first, optionally of one form.
	List(ctx context.Context, workspaceID string, formID *string, page Page) ([]*workflow.Workflow, error)
	// Update loads the workflow, lets change modify it and stores it with the effects change
	// returns, in one transaction.
	Update(ctx context.Context, workspaceID, id string, change func(*workflow.Workflow) (Effects, error)) (*workflow.Workflow, error)
	// Delete removes the workflow with the audit events, in one transaction.
	Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error
	// CountForForm returns the number of workflows attached to a form.
	CountForForm(ctx context.Context, workspaceID, formID string) (int, error)
	// Matching returns the enabled workflows of e's form whose trigger type is e's type, oldest
	// first; their conditions are checked by the caller (workflow.Matches).
	Matching(ctx context.Context, e event.Event) ([]*workflow.Workflow, error)
}

// IntegrationRepository stores integrations (credentials sealed at rest).
type IntegrationRepository interface {
	// Create stores the integration with its audit events in one transaction.
	Create(ctx context.Context, i *integration.Integration, events ...audit.Event) error
	Get(ctx context.Context, workspaceID, id string) (*integration.Integration, error)
	// List returns up to page.Limit integrations, newest first.
	List(ctx context.Context, workspaceID string, page Page) ([]*integration.Integration, error)
	// Delete removes the integration with the audit events, in one transaction.
	Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error
	// OfType returns the workspace's newest integration of a type, or domain.ErrNotFound.
	OfType(ctx context.Context, workspaceID, typ string) (*integration.Integration, error)
}
