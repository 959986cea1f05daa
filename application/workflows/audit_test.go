package workflows_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	workflowsapp "github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/workflow"
)

var ada = auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: "wsp_a", Role: member.RoleEditor,
	Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_ada", Name: "Ada Lovelace"}})

// one returns the only event of the action, failing when there is not exactly one.
func one(t *testing.T, h *apptest.Harness, action audit.Action) audit.Event {
	t.Helper()
	evs := h.Audit.Of(action)
	if len(evs) != 1 {
		t.Fatalf("%s: %d events, want 1", action, len(evs))
	}
	if evs[0].Actor.ID != "usr_ada" || evs[0].Actor.Type != audit.ActorUser || evs[0].WorkspaceID != "wsp_a" {
		t.Fatalf("%s: actor %+v in %s", action, evs[0].Actor, evs[0].WorkspaceID)
	}
	return evs[0]
}

func TestWorkflowChangesAreAudited(t *testing.T) {
	h := newWorkflowHarness(application.Settings{})
	f := h.CreateForm(t, "wsp_a")
	w, err := h.App.Commands.CreateWorkflow.Handle(ada, workflowsapp.CreateWorkflow{Draft: apptest.WorkflowDraft(f.ID())})
	if err != nil {
		t.Fatal(err)
	}
	target := audit.Target{Type: "workflow", ID: w.ID()}
	created := one(t, h, audit.WorkflowCreated)
	want := map[string]any{"name": "W", "form_id": f.ID(), "trigger": "submission.created", "enabled": true, "actions": 1}
	if *created.Target != target || !reflect.DeepEqual(created.Details, want) {
		t.Fatalf("workflow.created = %+v, want details %v", created, want)
	}

	off := false
	if _, err := h.App.Commands.UpdateWorkflow.Handle(ada, workflowsapp.UpdateWorkflow{ID: w.ID(), Patch: workflow.Patch{Name: apptest.Ptr("Notify"), Enabled: &off}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Commands.UpdateWorkflow.Handle(ada, workflowsapp.UpdateWorkflow{ID: w.ID()}); err != nil {
		t.Fatal(err)
	}
	updated := one(t, h, audit.WorkflowUpdated) // the empty patch recorded nothing
	if *updated.Target != target || updated.Details["name"] != "Notify" || updated.Details["enabled"] != false ||
		!reflect.DeepEqual(updated.Details["changed"], []string{"name", "enabled"}) {
		t.Fatalf("workflow.updated = %+v", updated)
	}

	if err := h.App.Commands.DeleteWorkflow.Handle(ada, workflowsapp.DeleteWorkflow{ID: "wfl_nope"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown workflow: %v", err)
	}
	if err := h.App.Commands.DeleteWorkflow.Handle(ada, workflowsapp.DeleteWorkflow{ID: w.ID()}); err != nil {
		t.Fatal(err)
	}
	if deleted := one(t, h, audit.WorkflowDeleted); *deleted.Target != target || deleted.Details["name"] != "Notify" {
		t.Fatalf("workflow.deleted = %+v", deleted)
	}
}

func TestIntegrationChangesAreAudited(t *testing.T) {
	h := newWorkflowHarness(application.Settings{})
	i, err := h.App.Commands.CreateIntegration.Handle(ada, workflowsapp.CreateIntegration{
		Draft: integration.Draft{Type: "slack", Credentials: map[string]string{"bot_token": "xoxb-secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	target := audit.Target{Type: "integration", ID: i.ID()}
	connected := one(t, h, audit.IntegrationConnected)
	if *connected.Target != target || !reflect.DeepEqual(connected.Details, map[string]any{"type": "slack"}) {
		t.Fatalf("integration.connected = %+v", connected)
	}
	if err := h.App.Commands.DeleteIntegration.Handle(ada, workflowsapp.DeleteIntegration{ID: i.ID()}); err != nil {
		t.Fatal(err)
	}
	if gone := one(t, h, audit.IntegrationDisconnected); *gone.Target != target || gone.Details["type"] != "slack" {
		t.Fatalf("integration.disconnected = %+v", gone)
	}
}
