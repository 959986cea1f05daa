package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
)

// CreateWorkspace asks for a new workspace; an empty Plan takes the configured default.
type CreateWorkspace struct {
	Name string
	Plan workspace.Plan
}

// CreateWorkspaceHandler creates workspaces.
type CreateWorkspaceHandler struct {
	d Deps
	s Settings
}

// Handle creates the workspace.
func (h CreateWorkspaceHandler) Handle(ctx context.Context, cmd CreateWorkspace) (*workspace.Workspace, error) {
	plan := cmd.Plan
	if plan == "" {
		plan = h.s.DefaultPlan
	}
	w, err := workspace.New(h.d.IDs.New(PrefixWorkspace), cmd.Name, plan, h.d.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := h.d.Workspaces.Create(ctx, w); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	return w, nil
}

// EnsureDefaultWorkspaceHandler returns the first workspace, creating it on first use.
type EnsureDefaultWorkspaceHandler struct {
	d Deps
	s Settings
}

// Handle returns the default (oldest) workspace.
func (h EnsureDefaultWorkspaceHandler) Handle(ctx context.Context) (*workspace.Workspace, error) {
	w, err := h.d.Workspaces.Oldest(ctx)
	if err == nil {
		return w, nil
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return nil, fmt.Errorf("find default workspace: %w", err)
	}
	w, err = CreateWorkspaceHandler(h).Handle(ctx, CreateWorkspace{Name: workspace.DefaultName})
	if err != nil {
		return nil, err
	}
	// Two processes starting at once may both create one; the oldest wins for everybody.
	return h.d.Workspaces.Oldest(ctx)
}

// ListWorkspacesHandler lists every workspace (an operator's CLI query).
type ListWorkspacesHandler struct{ d Deps }

// Handle lists the workspaces.
func (h ListWorkspacesHandler) Handle(ctx context.Context) ([]*workspace.Workspace, error) {
	return h.d.Workspaces.List(ctx)
}
