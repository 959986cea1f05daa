package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// CreateWorkspace asks for a new workspace; an empty Plan takes the configured default.
type CreateWorkspace struct {
	Name string
	Plan workspace.Plan
}

// CreateWorkspaceHandler creates workspaces.
type CreateWorkspaceHandler struct {
	workspaces  ports.WorkspaceRepository
	ids         ports.IDs
	clock       ports.Clock
	defaultPlan workspace.Plan
}

// NewCreateWorkspaceHandler makes the command; defaultPlan is the plan of a workspace created
// without one.
func NewCreateWorkspaceHandler(workspaces ports.WorkspaceRepository, ids ports.IDs, clock ports.Clock, defaultPlan workspace.Plan) CreateWorkspaceHandler {
	return CreateWorkspaceHandler{workspaces: workspaces, ids: ids, clock: clock, defaultPlan: defaultPlan}
}

// Handle creates the workspace.
func (h CreateWorkspaceHandler) Handle(ctx context.Context, cmd CreateWorkspace) (*workspace.Workspace, error) {
	plan := cmd.Plan
	if plan == "" {
		plan = h.defaultPlan
	}
	w, err := workspace.New(h.ids.New(ports.PrefixWorkspace), cmd.Name, plan, h.clock.Now())
	if err != nil {
		return nil, err
	}
	if err := h.workspaces.Create(ctx, w); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	return w, nil
}

// EnsureDefaultWorkspaceHandler returns the first workspace, creating it on first use.
type EnsureDefaultWorkspaceHandler struct {
	workspaces ports.WorkspaceRepository
	create     CreateWorkspaceHandler
}

// NewEnsureDefaultWorkspaceHandler makes the command; defaultPlan is the plan of the workspace
// it creates.
func NewEnsureDefaultWorkspaceHandler(workspaces ports.WorkspaceRepository, ids ports.IDs, clock ports.Clock, defaultPlan workspace.Plan) EnsureDefaultWorkspaceHandler {
	return EnsureDefaultWorkspaceHandler{workspaces: workspaces, create: NewCreateWorkspaceHandler(workspaces, ids, clock, defaultPlan)}
}

// Handle returns the default (oldest) workspace.
func (h EnsureDefaultWorkspaceHandler) Handle(ctx context.Context) (*workspace.Workspace, error) {
	w, err := h.workspaces.Oldest(ctx)
	if err == nil {
		return w, nil
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return nil, fmt.Errorf("find default workspace: %w", err)
	}
	w, err = h.create.Handle(ctx, CreateWorkspace{Name: workspace.DefaultName})
	if err != nil {
		return nil, err
	}
	// Two processes starting at once may both create one; the oldest wins for everybody.
	return h.workspaces.Oldest(ctx)
}

// ListWorkspacesHandler lists every workspace (an operator's CLI query).
type ListWorkspacesHandler struct{ workspaces ports.WorkspaceRepository }

// NewListWorkspacesHandler makes the query.
func NewListWorkspacesHandler(workspaces ports.WorkspaceRepository) ListWorkspacesHandler {
	return ListWorkspacesHandler{workspaces: workspaces}
}

// Handle lists the workspaces.
func (h ListWorkspacesHandler) Handle(ctx context.Context) ([]*workspace.Workspace, error) {
	return h.workspaces.List(ctx)
}
