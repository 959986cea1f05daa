package workspace_test

import (
	"testing"

	"github.com/formward/formward/application/apptest"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/workspace"
)

// ctx acts as an admin key of workspace wsp_a: the use cases read who acts from the context.
var ctx = apptest.As("wsp_a", apikey.ScopeAdmin)

func TestWorkspaces(t *testing.T) {
	h := apptest.New()
	w, err := h.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != workspace.DefaultName || w.Plan() != workspace.PlanBusiness {
		t.Fatalf("default workspace = %q %q", w.Name(), w.Plan())
	}
	again, err := h.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
	if err != nil || again.ID() != w.ID() || len(h.Workspaces.Items) != 1 {
		t.Fatalf("second call = %v, %v (%d workspaces)", again, err, len(h.Workspaces.Items))
	}
	free, err := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "Hosted", Plan: workspace.PlanFree})
	if err != nil || free.Plan() != workspace.PlanFree {
		t.Fatalf("CreateWorkspace = %v, %v", free, err)
	}
	if _, err := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "X", Plan: "gold"}); err == nil {
		t.Fatal("bad plan accepted")
	}
}
