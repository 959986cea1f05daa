package workflows

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/text"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// DefaultMaxWorkflowsPerForm is the number of workflows one form may have (docs/api.md, "Counts").
const DefaultMaxWorkflowsPerForm = 50

// signedActionTypes post to a URL through the delivery engine; their URL is checked like a
// webhook's when the workflow is saved.
var signedActionTypes = map[string]bool{"send_webhook": true, "automation_trigger": true}

// actionChecker validates action configs through the registered runners and checks that the
// workspace has the integration each action needs. A storage error is kept in err, since the
// domain's validator returns violations only.
type actionChecker struct {
	ctx          context.Context
	actions      map[string]ports.ActionRunner
	integrations ports.IntegrationRepository
	urls         ports.URLChecker
	workspaceID  string
	has          map[string]bool
	err          error
}

func newActionChecker(ctx context.Context, actions map[string]ports.ActionRunner, integrations ports.IntegrationRepository,
	urls ports.URLChecker, workspaceID string) *actionChecker {
	return &actionChecker{ctx: ctx, actions: actions, integrations: integrations, urls: urls, workspaceID: workspaceID, has: map[string]bool{}}
}

func (c *actionChecker) validate(actionType string, config map[string]any) []domain.Violation {
	runner, ok := c.actions[actionType]
	if !ok {
		return []domain.Violation{{Field: "type", Code: "invalid_value", Message: "type must be one of " + strings.Join(c.types(), ", ")}}
	}
	var out []domain.Violation
	for _, v := range runner.Validate(config) {
		path := "config"
		if v.Key != "" {
			path += "." + v.Key
		}
		out = append(out, domain.Violation{Field: path, Code: v.Code, Message: v.Message})
	}
	if need := runner.Integration(); need != "" && !c.hasIntegration(need) {
		out = append(out, domain.Violation{Field: "type", Code: "integration_required",
			Message: fmt.Sprintf("%s needs a connected %s integration; connect one with POST /v1/integrations first", actionType, need)})
	}
	return out
}

func (c *actionChecker) hasIntegration(typ string) bool {
	if has, ok := c.has[typ]; ok {
		return has
	}
	_, err := c.integrations.OfType(c.ctx, c.workspaceID, typ)
	switch {
	case err == nil:
		c.has[typ] = true
	case errors.Is(err, domain.ErrNotFound):
		c.has[typ] = false
	default:
		if c.err == nil {
			c.err = err
		}
		return true
	}
	return c.has[typ]
}

func (c *actionChecker) types() []string {
	out := make([]string, 0, len(c.actions))
	for t := range c.actions {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// checkActionURLs applies the webhook URL rule (HTTPS, public addresses unless allowed) to the
// URLs of actions that post through the delivery engine.
func (c *actionChecker) checkActionURLs(vs *domain.Violations, actions []workflow.Action) {
	if c.urls == nil {
		return
	}
	for i, a := range actions {
		u, ok := a.Config["url"].(string)
		if !signedActionTypes[a.Type] || !ok || u == "" {
			continue
		}
		if err := c.urls.CheckURL(c.ctx, u); err != nil {
			vs.Add(fmt.Sprintf("actions[%d].config.url", i), "invalid_url", err.Error())
		}
	}
}

// conditionFieldViolations refuses trigger conditions on fields that the workflow's form does
// not have (a field ID of another form, or of another workspace).
func conditionFieldViolations(w *workflow.Workflow, f *form.Form) domain.Violations {
	vs, _ := domain.ViolationsOf(w.CheckConditionFields(func(id string) bool {
		_, ok := f.Field(id)
		return ok
	}))
	return vs
}

// CreateWorkflow creates a workflow attached to a form.
type CreateWorkflow struct {
	Draft workflow.Draft
}

// workflowEditor is what creating and updating a workflow both need to check it and store it.
type workflowEditor struct {
	workflows    ports.WorkflowRepository
	forms        ports.FormRepository
	integrations ports.IntegrationRepository
	urls         ports.URLChecker
	actions      map[string]ports.ActionRunner
	ids          ports.IDs
	clock        ports.Clock
	limits       workflow.Limits
}

// checker starts the checks of one workflow's actions in the workspace.
func (e workflowEditor) checker(ctx context.Context, workspaceID string) *actionChecker {
	return newActionChecker(ctx, e.actions, e.integrations, e.urls, workspaceID)
}

// CreateWorkflowHandler creates workflows.
type CreateWorkflowHandler struct {
	workflowEditor
	maxPerForm int
}

// NewCreateWorkflowHandler makes the command. actions are the registered action runners by
// type; urls may be nil (action URLs are then not checked); limits bound actions and
// conditions, maxPerForm the workflows of one form.
func NewCreateWorkflowHandler(workflows ports.WorkflowRepository, forms ports.FormRepository, integrations ports.IntegrationRepository,
	urls ports.URLChecker, actions map[string]ports.ActionRunner, ids ports.IDs, clock ports.Clock, limits workflow.Limits, maxPerForm int) CreateWorkflowHandler {
	return CreateWorkflowHandler{workflowEditor{workflows: workflows, forms: forms, integrations: integrations, urls: urls,
		actions: actions, ids: ids, clock: clock, limits: limits}, maxPerForm}
}

// Handle validates the draft and every action config (through the registered action runners),
// checks the form, the integrations the actions need and the per-form limit, and stores the
// workflow, enabled.
func (h CreateWorkflowHandler) Handle(ctx context.Context, cmd CreateWorkflow) (*workflow.Workflow, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return nil, err
	}
	chk := h.checker(ctx, p.WorkspaceID)
	w, err := workflow.New(h.ids.New(ports.PrefixWorkflow), p.WorkspaceID, cmd.Draft,
		func() string { return h.ids.New(ports.PrefixAction) }, chk.validate, h.limits, h.clock.Now())
	if chk.err != nil {
		return nil, chk.err
	}
	vs, err := domain.ViolationsOf(err)
	if err != nil {
		return nil, err
	}
	if formID := strings.TrimSpace(cmd.Draft.FormID); formID != "" && text.Valid(formID) {
		if f, err := h.forms.Get(ctx, p.WorkspaceID, formID); errors.Is(err, domain.ErrNotFound) {
			vs.Add("form_id", "not_found", "form_id names no form of this workspace")
		} else if err != nil {
			return nil, err
		} else {
			if w != nil {
				vs = append(vs, conditionFieldViolations(w, f)...)
			}
			n, err := h.workflows.CountForForm(ctx, p.WorkspaceID, formID)
			if err != nil {
				return nil, err
			}
			if n >= h.maxPerForm {
				vs.Add("form_id", "too_many", fmt.Sprintf("a form may have at most %d workflows; delete one first", h.maxPerForm))
			}
		}
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	chk.checkActionURLs(&vs, w.Actions())
	if err := vs.Err(); err != nil {
		return nil, err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.WorkflowCreated, workflowTarget(w), workflowDetails(w, nil))
	if err != nil {
		return nil, err
	}
	if err := h.workflows.Create(ctx, w, e); err != nil {
		if errors.Is(err, domain.ErrNotFound) { // the form was deleted meanwhile
			return nil, domain.Validation("form_id", "not_found", "form_id names no form of this workspace")
		}
		return nil, err
	}
	return w, nil
}

// GetWorkflow reads one workflow.
type GetWorkflow struct {
	ID string
}

// GetWorkflowHandler reads workflows.
type GetWorkflowHandler struct{ workflows ports.WorkflowRepository }

// NewGetWorkflowHandler makes the query.
func NewGetWorkflowHandler(workflows ports.WorkflowRepository) GetWorkflowHandler {
	return GetWorkflowHandler{workflows: workflows}
}

// Handle returns the workflow of the workspace, or domain.ErrNotFound.
func (h GetWorkflowHandler) Handle(ctx context.Context, q GetWorkflow) (*workflow.Workflow, error) {
	_, w, err := auth.Load(ctx, access.Read, h.workflows, q.ID)
	return w, err
}

// ListWorkflows reads a page of workflows, newest first, optionally of one form.
type ListWorkflows struct {
	FormID *string
	Page   ports.Page
}

// ListWorkflowsHandler lists workflows.
type ListWorkflowsHandler struct{ workflows ports.WorkflowRepository }

// NewListWorkflowsHandler makes the query.
func NewListWorkflowsHandler(workflows ports.WorkflowRepository) ListWorkflowsHandler {
	return ListWorkflowsHandler{workflows: workflows}
}

// Handle returns up to Page.Limit workflows and whether more exist.
func (h ListWorkflowsHandler) Handle(ctx context.Context, q ListWorkflows) ([]*workflow.Workflow, bool, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*workflow.Workflow, error) {
		return h.workflows.List(ctx, p.WorkspaceID, q.FormID, page)
	})
}

// UpdateWorkflow applies a PATCH to a workflow.
type UpdateWorkflow struct {
	ID    string
	Patch workflow.Patch
}

// UpdateWorkflowHandler updates workflows.
type UpdateWorkflowHandler struct{ workflowEditor }

// NewUpdateWorkflowHandler makes the command. actions are the registered action runners by
// type; urls may be nil (action URLs are then not checked); limits bound actions and conditions.
func NewUpdateWorkflowHandler(workflows ports.WorkflowRepository, forms ports.FormRepository, integrations ports.IntegrationRepository,
	urls ports.URLChecker, actions map[string]ports.ActionRunner, ids ports.IDs, clock ports.Clock, limits workflow.Limits) UpdateWorkflowHandler {
	return UpdateWorkflowHandler{workflowEditor{workflows: workflows, forms: forms, integrations: integrations, urls: urls,
		actions: actions, ids: ids, clock: clock, limits: limits}}
}

// Handle validates the patch on a copy first (action configs, integrations and URLs need reads
// and the network, which stay outside the repository's transaction), then applies it.
func (h UpdateWorkflowHandler) Handle(ctx context.Context, cmd UpdateWorkflow) (*workflow.Workflow, error) {
	p, current, err := auth.Load(ctx, access.Write, h.workflows, cmd.ID)
	if err != nil {
		return nil, err
	}
	chk := h.checker(ctx, p.WorkspaceID)
	preview := *current
	next := &preview
	newID := func() string { return h.ids.New(ports.PrefixAction) }
	err = next.Apply(cmd.Patch, newID, chk.validate, h.limits, h.clock.Now())
	if chk.err != nil {
		return nil, chk.err
	}
	if err != nil {
		return nil, err
	}
	var vs domain.Violations
	if cmd.Patch.Trigger != nil {
		f, err := h.forms.Get(ctx, p.WorkspaceID, next.FormID())
		if err != nil {
			return nil, err
		}
		vs = append(vs, conditionFieldViolations(next, f)...)
	}
	if cmd.Patch.Actions != nil {
		chk.checkActionURLs(&vs, next.Actions())
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	// Type-specific rules do not depend on the stored state and were checked above; the
	// domain's own rules (kept action IDs among them) are checked again under the lock.
	return h.workflows.Update(ctx, p.WorkspaceID, cmd.ID, func(w *workflow.Workflow) (ports.Effects, error) {
		now := h.clock.Now()
		before := *w
		if err := w.Apply(cmd.Patch, newID, nil, h.limits, now); err != nil {
			return ports.Effects{}, err
		}
		changed := workflowChanges(&before, w)
		if len(changed) == 0 { // nothing changed: nothing to record
			return ports.Effects{}, nil
		}
		e, err := p.AuditEvent(h.ids, now, audit.WorkflowUpdated, workflowTarget(w), workflowDetails(w, changed))
		return ports.Effects{Audit: []audit.Event{e}}, err
	})
}

// DeleteWorkflow removes a workflow.
type DeleteWorkflow struct {
	ID string
}

// DeleteWorkflowHandler deletes workflows and records workflow.deleted.
type DeleteWorkflowHandler struct {
	workflows ports.WorkflowRepository
	ids       ports.IDs
	clock     ports.Clock
}

// NewDeleteWorkflowHandler makes the command.
func NewDeleteWorkflowHandler(workflows ports.WorkflowRepository, ids ports.IDs, clock ports.Clock) DeleteWorkflowHandler {
	return DeleteWorkflowHandler{workflows: workflows, ids: ids, clock: clock}
}

// Handle deletes the workflow; runs already in progress finish, since they carry their own
// snapshot of the actions.
func (h DeleteWorkflowHandler) Handle(ctx context.Context, cmd DeleteWorkflow) error {
	p, w, err := auth.Load(ctx, access.Write, h.workflows, cmd.ID)
	if err != nil {
		return err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.WorkflowDeleted, workflowTarget(w), workflowDetails(w, nil))
	if err != nil {
		return err
	}
	return h.workflows.Delete(ctx, p.WorkspaceID, cmd.ID, e)
}
