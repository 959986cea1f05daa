package workspace

import (
	"context"
	"fmt"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// WorkspaceView is the principal's workspace with what it holds, shown against its plan.
type WorkspaceView struct {
	Workspace *workspace.Workspace
	Usage     workspace.Usage
}

// GetWorkspace reads the principal's workspace and its usage.
type GetWorkspace struct{}

// GetWorkspaceHandler reads the workspace's billing settings and usage.
type GetWorkspaceHandler struct {
	workspaces ports.WorkspaceRepository
	usage      usageOf
}

// NewGetWorkspaceHandler makes the query; usage may be nil (no counts), files may be nil (no
// object store: no stored bytes).
func NewGetWorkspaceHandler(workspaces ports.WorkspaceRepository, usage ports.UsageReader, files ports.ObjectStore) GetWorkspaceHandler {
	return GetWorkspaceHandler{workspaces: workspaces, usage: usageOf{reader: usage, files: files}}
}

// Handle returns the workspace with its usage.
func (h GetWorkspaceHandler) Handle(ctx context.Context, _ GetWorkspace) (WorkspaceView, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return WorkspaceView{}, err
	}
	w, err := h.workspaces.Get(ctx, p.WorkspaceID)
	if err != nil {
		return WorkspaceView{}, err
	}
	return h.usage.view(ctx, w)
}

// UpdateWorkspace changes the principal's workspace's name and billing settings.
type UpdateWorkspace struct{ Settings workspace.Settings }

// UpdateWorkspaceHandler changes billing settings and records workspace.updated.
type UpdateWorkspaceHandler struct {
	workspaces ports.WorkspaceRepository
	ids        ports.IDs
	clock      ports.Clock
	usage      usageOf
}

// NewUpdateWorkspaceHandler makes the command; usage and files may be nil as for GetWorkspace.
func NewUpdateWorkspaceHandler(workspaces ports.WorkspaceRepository, ids ports.IDs, clock ports.Clock, usage ports.UsageReader, files ports.ObjectStore) UpdateWorkspaceHandler {
	return UpdateWorkspaceHandler{workspaces: workspaces, ids: ids, clock: clock, usage: usageOf{reader: usage, files: files}}
}

// Handle applies the settings (the workspace decides what a plan or status change means for
// retention and deletion) and records the changed fields; a change that changes nothing records
// nothing.
func (h UpdateWorkspaceHandler) Handle(ctx context.Context, cmd UpdateWorkspace) (WorkspaceView, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return WorkspaceView{}, err
	}
	w, err := h.workspaces.Update(ctx, p.WorkspaceID, func(w *workspace.Workspace) (ports.Effects, error) {
		now := h.clock.Now()
		changed, err := w.Change(cmd.Settings, now)
		if err != nil || len(changed) == 0 {
			return ports.Effects{}, err
		}
		e, err := p.AuditEvent(h.ids, now, audit.WorkspaceUpdated, &audit.Target{Type: "workspace", ID: w.ID()}, changed)
		if err != nil {
			return ports.Effects{}, err
		}
		return ports.Effects{Audit: []audit.Event{e}}, nil
	})
	if err != nil {
		return WorkspaceView{}, err
	}
	return h.usage.view(ctx, w)
}

// usageOf measures a workspace: counts from the database, stored bytes from the object store.
type usageOf struct {
	reader ports.UsageReader
	files  ports.ObjectStore
}

func (u usageOf) view(ctx context.Context, w *workspace.Workspace) (WorkspaceView, error) {
	v := WorkspaceView{Workspace: w}
	if u.reader != nil {
		usage, err := u.reader.Usage(ctx, w.ID())
		if err != nil {
			return WorkspaceView{}, fmt.Errorf("read usage: %w", err)
		}
		v.Usage = usage
	}
	if u.files != nil {
		n, err := u.files.Usage(ctx, ports.WorkspaceFilesPrefix(w.ID()))
		if err != nil {
			return WorkspaceView{}, fmt.Errorf("read storage usage: %w", err)
		}
		v.Usage.StorageBytes = n
	}
	return v, nil
}
