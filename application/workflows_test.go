package application_test

import (
	"context"
	"errors"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/domain/apikey"
	"sort"
	"strings"
	"testing"

	"github.com/formward/formward/application"
	workflowsapp "github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

type memWorkflows struct{ items map[string]*workflow.Workflow }

func (r *memWorkflows) Create(_ context.Context, w *workflow.Workflow) error {
	r.items[w.ID()] = w
	return nil
}

func (r *memWorkflows) Get(_ context.Context, ws, id string) (*workflow.Workflow, error) {
	w, ok := r.items[id]
	if !ok || w.WorkspaceID() != ws {
		return nil, domain.ErrNotFound
	}
	c := *w
	return &c, nil
}

func (r *memWorkflows) List(_ context.Context, ws string, formID *string, page ports.Page) ([]*workflow.Workflow, error) {
	var out []*workflow.Workflow
	for _, w := range r.items {
		if w.WorkspaceID() == ws && (formID == nil || *formID == w.FormID()) {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() > out[j].ID() })
	if len(out) > page.Limit {
		out = out[:page.Limit]
	}
	return out, nil
}

func (r *memWorkflows) Update(ctx context.Context, ws, id string, change func(*workflow.Workflow) (ports.Effects, error)) (*workflow.Workflow, error) {
	w, err := r.Get(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if _, err := change(w); err != nil {
		return nil, err
	}
	r.items[id] = w
	return w, nil
}

func (r *memWorkflows) Delete(_ context.Context, ws, id string) error {
	if w, ok := r.items[id]; !ok || w.WorkspaceID() != ws {
		return domain.ErrNotFound
	}
	delete(r.items, id)
	return nil
}

func (r *memWorkflows) CountForForm(_ context.Context, ws, formID string) (int, error) {
	n := 0
	for _, w := range r.items {
		if w.WorkspaceID() == ws && w.FormID() == formID {
			n++
		}
	}
	return n, nil
}

func (r *memWorkflows) Matching(context.Context, event.Event) ([]*workflow.Workflow, error) {
	return nil, nil
}

type memIntegrations struct {
	items []*integration.Integration
	err   error
}

func (r *memIntegrations) Create(_ context.Context, i *integration.Integration) error {
	r.items = append(r.items, i)
	return nil
}

func (r *memIntegrations) Get(_ context.Context, ws, id string) (*integration.Integration, error) {
	for _, i := range r.items {
		if i.ID() == id && i.WorkspaceID() == ws {
			return i, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *memIntegrations) List(_ context.Context, ws string, _ ports.Page) ([]*integration.Integration, error) {
	return r.items, nil
}

func (r *memIntegrations) Delete(context.Context, string, string) error { return nil }

func (r *memIntegrations) OfType(_ context.Context, ws, typ string) (*integration.Integration, error) {
	if r.err != nil {
		return nil, r.err
	}
	for _, i := range r.items {
		if i.Type() == typ && i.WorkspaceID() == ws {
			return i, nil
		}
	}
	return nil, domain.ErrNotFound
}

var (
	_ ports.WorkflowRepository    = (*memWorkflows)(nil)
	_ ports.IntegrationRepository = (*memIntegrations)(nil)
)

type stubRunner struct{ typ, integration string }

func (s stubRunner) Type() string        { return s.typ }
func (s stubRunner) Integration() string { return s.integration }
func (s stubRunner) Run(context.Context, ports.ActionInput) ports.ActionOutcome {
	return ports.ActionOutcome{}
}
func (s stubRunner) Validate(cfg map[string]any) []ports.ConfigViolation {
	if _, ok := cfg["to"]; s.typ == "send_email" && !ok {
		return []ports.ConfigViolation{{Key: "to", Code: "required", Message: "to is required"}}
	}
	if _, ok := cfg[workflow.SecretSetKey]; ok {
		return []ports.ConfigViolation{{Key: workflow.SecretSetKey, Code: "unknown_property", Message: "read-only"}}
	}
	return nil
}

type workflowHarness struct {
	*apptest.Harness
	workflows    *memWorkflows
	integrations *memIntegrations
	urls         *refusingURLs
}

func newWorkflowHarness(s application.Settings) *workflowHarness {
	h := &workflowHarness{Harness: apptest.New(), workflows: &memWorkflows{items: map[string]*workflow.Workflow{}},
		integrations: &memIntegrations{}, urls: &refusingURLs{}}
	runners := map[string]ports.ActionRunner{}
	for _, r := range []stubRunner{{typ: "send_email"}, {typ: "send_webhook"}, {typ: "chat_message", integration: "slack"}} {
		runners[r.typ] = r
	}
	h.App = application.New(application.Deps{
		Workspaces: h.Workspaces, Keys: h.Keys, Forms: h.Forms, Submissions: h.Submissions,
		IDs: h.IDs, Clock: h.Clock, IPHasher: h.IPHasher, URLs: h.urls,
		Workflows: h.workflows, Integrations: h.integrations, Actions: runners,
	}, s)
	return h
}

func wfDraft(formID string, actions ...workflow.ActionSpec) workflow.Draft {
	if actions == nil {
		actions = []workflow.ActionSpec{{Type: "send_email", Config: map[string]any{"to": "a@b.co"}}}
	}
	return workflow.Draft{Name: "W", FormID: formID, Trigger: workflow.TriggerSpec{Type: "submission.created"}, Actions: actions}
}

func TestCreateWorkflowRules(t *testing.T) {
	h := newWorkflowHarness(application.Settings{MaxWorkflowsPerForm: 2, WorkflowLimits: workflow.Limits{MaxActions: 2, MaxConditions: 1}})
	f := h.CreateForm(t, "wsp_a")
	create := func(ws string, d workflow.Draft) (*workflow.Workflow, error) {
		return h.App.Commands.CreateWorkflow.Handle(apptest.As(ws, apikey.ScopeAdmin), workflowsapp.CreateWorkflow{Draft: d})
	}
	w, err := create("wsp_a", wfDraft(f.ID()))
	if err != nil || !w.Enabled() || !strings.HasPrefix(w.ID(), "wfl_") || !strings.HasPrefix(w.Actions()[0].ID, "act_") {
		t.Fatalf("create: %v %+v", err, w)
	}

	// Every problem is reported together: runner config rules, unknown types, a foreign form.
	_, err = create("wsp_b", wfDraft(f.ID(),
		workflow.ActionSpec{Type: "send_email", Config: map[string]any{}},
		workflow.ActionSpec{Type: "fax", Config: map[string]any{}}))
	got := violationCodes(err)
	if !strings.HasPrefix(got["actions[0].config.to"], "required") || !strings.HasPrefix(got["form_id"], "not_found") ||
		!strings.Contains(got["actions[1].type"], "chat_message, send_email, send_webhook") {
		t.Fatalf("violations %v", got)
	}
	// Limits come from the settings.
	d := wfDraft(f.ID())
	d.Actions = append(d.Actions, d.Actions[0], d.Actions[0])
	if got := violationCodes(mustFail(create("wsp_a", d))); !strings.HasPrefix(got["actions"], "too_many") {
		t.Fatalf("actions limit: %v", got)
	}
	if _, err := create("wsp_a", wfDraft(f.ID())); err != nil {
		t.Fatal(err)
	}
	if got := violationCodes(mustFail(create("wsp_a", wfDraft(f.ID())))); !strings.Contains(got["form_id"], "at most 2 workflows") {
		t.Fatalf("per-form limit: %v", got)
	}

	// URLs of signed actions follow the webhook rule; the secret_set of a client is dropped.
	other := h.CreateForm(t, "wsp_a")
	got = violationCodes(mustFail(create("wsp_a", wfDraft(other.ID(), workflow.ActionSpec{Type: "send_webhook",
		Config: map[string]any{"url": "https://internal.example/x"}}))))
	if !strings.HasPrefix(got["actions[0].config.url"], "invalid_url") {
		t.Fatalf("url: %v", got)
	}
	w, err = create("wsp_a", wfDraft(other.ID(), workflow.ActionSpec{Type: "send_webhook",
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
		_, err := h.App.Commands.CreateWorkflow.Handle(ctx, workflowsapp.CreateWorkflow{Draft: wfDraft(f.ID(), chat)})
		return err
	}
	if got := violationCodes(create()); !strings.Contains(got["actions[0].type"], "needs a connected slack integration") {
		t.Fatalf("got %v", got)
	}
	// A storage failure is not a validation error.
	boom := errors.New("db down")
	h.integrations.err = boom
	if err := create(); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	h.integrations.err = nil
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
	w, err := h.App.Commands.CreateWorkflow.Handle(ctx, workflowsapp.CreateWorkflow{Draft: wfDraft(f.ID())})
	if err != nil {
		t.Fatal(err)
	}
	keep := w.Actions()[0].ID
	acts := []workflow.ActionSpec{{ID: keep, Type: "send_email", Config: map[string]any{"to": "c@d.co"}}, {Type: "send_email", Config: map[string]any{}}}
	_, err = h.App.Commands.UpdateWorkflow.Handle(ctx, workflowsapp.UpdateWorkflow{ID: w.ID(), Patch: workflow.Patch{Actions: &acts}})
	if got := violationCodes(err); !strings.HasPrefix(got["actions[1].config.to"], "required") {
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
