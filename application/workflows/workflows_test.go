package workflows_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/apptest"
	workflowsapp "github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// ctx acts as an admin key of workspace wsp_a: the use cases read who acts from the context.
var ctx = apptest.As("wsp_a", apikey.ScopeAdmin)

// newWorkflowHarness is the harness with the workflow fakes and stub runners.
func newWorkflowHarness(s application.Settings) *apptest.Harness {
	return apptest.NewWith(s, apptest.WithWorkflows)
}

func TestCreateWorkflowRules(t *testing.T) {
	h := newWorkflowHarness(application.Settings{MaxWorkflowsPerForm: 2, WorkflowLimits: workflow.Limits{MaxActions: 2, MaxConditions: 1}})
	f := h.CreateForm(t, "wsp_a")
	create := func(ws string, d workflow.Draft) (*workflow.Workflow, error) {
		return h.App.Commands.CreateWorkflow.Handle(apptest.As(ws, apikey.ScopeAdmin), workflowsapp.CreateWorkflow{Draft: d})
	}
	w, err := create("wsp_a", apptest.WorkflowDraft(f.ID()))
	if err != nil || !w.Enabled() || !strings.HasPrefix(w.ID(), "wfl_") || !strings.HasPrefix(w.Actions()[0].ID, "act_") {
		t.Fatalf("create: %v %+v", err, w)
	}

	// Every problem is reported together: runner config rules, unknown types, a foreign form.
	_, err = create("wsp_b", apptest.WorkflowDraft(f.ID(),
		workflow.ActionSpec{Type: "send_email", Config: map[string]any{}},
		workflow.ActionSpec{Type: "fax", Config: map[string]any{}}))
	got := apptest.ViolationCodes(err)
	if !strings.HasPrefix(got["actions[0].config.to"], "required") || !strings.HasPrefix(got["form_id"], "not_found") ||
		!strings.Contains(got["actions[1].type"], "chat_message, send_email, send_webhook") {
		t.Fatalf("violations %v", got)
	}
	// Limits come from the settings.
	d := apptest.WorkflowDraft(f.ID())
	d.Actions = append(d.Actions, d.Actions[0], d.Actions[0])
	if got := apptest.ViolationCodes(mustFail(create("wsp_a", d))); !strings.HasPrefix(got["actions"], "too_many") {
		t.Fatalf("actions limit: %v", got)
	}
	if _, err := create("wsp_a", apptest.WorkflowDraft(f.ID())); err != nil {
		t.Fatal(err)
	}
	if got := apptest.ViolationCodes(mustFail(create("wsp_a", apptest.WorkflowDraft(f.ID())))); !strings.Contains(got["form_id"], "at most 2 workflows") {
		t.Fatalf("per-form limit: %v", got)
	}

	// URLs of signed actions follow the webhook rule; the secret_set of a client is dropped.
	other := h.CreateForm(t, "wsp_a")
	got = apptest.ViolationCodes(mustFail(create("wsp_a", apptest.WorkflowDraft(other.ID(), workflow.ActionSpec{Type: "send_webhook",
		Config: map[string]any{"url": "https://internal.example/x"}}))))
	if !strings.HasPrefix(got["actions[0].config.url"], "invalid_url") {
		t.Fatalf("url: %v", got)
	}
	w, err = create("wsp_a", apptest.WorkflowDraft(other.ID(), workflow.ActionSpec{Type: "send_webhook",
		Config: map[string]any{"url": "https://hooks.example/x", "secret": "s", "secret_set": true}}))
	if err != nil || w.Actions()[0].Config["secret"] != "s" {
		t.Fatalf("secret: %v", err)
	}
}

func TestWorkflowIntegrationCheck(t *testing.T) {
	h := newWorkflowHarness(application.Settings{})
	f := h.CreateForm(t, "wsp_a")
	chat := workflow.ActionSpec{Type: "chat_message", Config: map[string]any{"channel": "#x", "message": "m"}}
	create := func() error {
		_, err := h.App.Commands.CreateWorkflow.Handle(ctx, workflowsapp.CreateWorkflow{Draft: apptest.WorkflowDraft(f.ID(), chat)})
		return err
	}
	if got := apptest.ViolationCodes(create()); !strings.Contains(got["actions[0].type"], "needs a connected slack integration") {
		t.Fatalf("got %v", got)
	}
	// A storage failure is not a validation error.
	boom := errors.New("db down")
	h.Integrations.OfTypeErr = boom
	if err := create(); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	h.Integrations.OfTypeErr = nil
	if _, err := h.App.Commands.CreateIntegration.Handle(ctx, workflowsapp.CreateIntegration{
		Draft: integration.Draft{Type: "slack", Credentials: map[string]string{"bot_token": "xoxb"}}}); err != nil {
		t.Fatal(err)
	}
	if err := create(); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateWorkflow(t *testing.T) {
	h := newWorkflowHarness(application.Settings{})
	f := h.CreateForm(t, "wsp_a")
	w, err := h.App.Commands.CreateWorkflow.Handle(ctx, workflowsapp.CreateWorkflow{Draft: apptest.WorkflowDraft(f.ID())})
	if err != nil {
		t.Fatal(err)
	}
	keep := w.Actions()[0].ID
	acts := []workflow.ActionSpec{{ID: keep, Type: "send_email", Config: map[string]any{"to": "c@d.co"}}, {Type: "send_email", Config: map[string]any{}}}
	_, err = h.App.Commands.UpdateWorkflow.Handle(ctx, workflowsapp.UpdateWorkflow{ID: w.ID(), Patch: workflow.Patch{Actions: &acts}})
	if got := apptest.ViolationCodes(err); !strings.HasPrefix(got["actions[1].config.to"], "required") {
		t.Fatalf("got %v", got)
	}
	acts = acts[:1]
	off := false
	got, err := h.App.Commands.UpdateWorkflow.Handle(ctx, workflowsapp.UpdateWorkflow{ID: w.ID(), Patch: workflow.Patch{Actions: &acts, Enabled: &off}})
	if err != nil || got.Actions()[0].ID != keep || got.Actions()[0].Config["to"] != "c@d.co" || got.Enabled() {
		t.Fatalf("update: %v %+v", err, got)
	}
	if _, err := h.App.Commands.UpdateWorkflow.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), workflowsapp.UpdateWorkflow{ID: w.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
	list, more, err := h.App.Queries.ListWorkflows.Handle(ctx, workflowsapp.ListWorkflows{Page: ports.Page{Limit: 10}})
	if err != nil || len(list) != 1 || more {
		t.Fatalf("list %v %d", err, len(list))
	}
	if err := h.App.Commands.DeleteWorkflow.Handle(ctx, workflowsapp.DeleteWorkflow{ID: w.ID()}); err != nil {
		t.Fatal(err)
	}
}

func mustFail[T any](_ T, err error) error { return err }
