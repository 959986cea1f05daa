package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

var (
	workflowProps    = []string{"name", "form_id", "enabled", "trigger", "actions"}
	workflowPatch    = []string{"name", "enabled", "trigger", "actions"}
	workflowReadOnly = []string{"id", "created_at", "updated_at"}
	// form_id cannot move a workflow to another form; sending back what was read is fine.
	workflowPatchReadOnly = []string{"id", "created_at", "updated_at", "form_id"}
)

// object returns the JSON object under name.
func (o object) object(name string) (v object, present bool) {
	raw, ok := o.props[name]
	if !ok {
		return object{}, false
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(raw, &props); err != nil || props == nil {
		o.typeError(name, "an object")
		return object{}, true
	}
	return object{path: o.at(name), props: props, vs: o.vs}, true
}

// anyMap returns the JSON object under name as plain Go values (numbers as float64); ok is
// false when it is absent or not an object (already reported).
func (o object) anyMap(name string) (v map[string]any, ok bool) {
	raw, present := o.props[name]
	if !present {
		return nil, false
	}
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		o.typeError(name, "an object")
		return nil, false
	}
	return v, true
}

// scalar returns a JSON string, number (as json.Number) or boolean; anything else is returned
// as is, for the domain to refuse.
func (o object) scalar(name string) (v any, present bool) {
	raw, ok := o.props[name]
	if !ok {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		o.typeError(name, "a string, a number or a boolean")
	}
	return v, true
}

func triggerSpec(o object) workflow.TriggerSpec {
	var t workflow.TriggerSpec
	o.allow([]string{"type", "config"}, nil)
	t.Type, _ = o.str("type")
	if !o.has("type") {
		o.vs.Add(o.at("type"), "required", "trigger.type is required")
	}
	cfg, present := o.object("config")
	if !present || cfg.props == nil {
		return t
	}
	cfg.allow([]string{"conditions"}, nil)
	conds, present := cfg.objects("conditions")
	if !present {
		return t
	}
	t.Conditions = make([]workflow.ConditionSpec, 0, len(conds))
	for _, c := range conds {
		c.allow([]string{"field_id", "operator", "value"}, nil)
		var cs workflow.ConditionSpec
		cs.FieldID, _ = c.str("field_id")
		cs.Operator, _ = c.str("operator")
		cs.Value, cs.HasValue = c.scalar("value")
		t.Conditions = append(t.Conditions, cs)
	}
	return t
}

func actionSpecs(list []object) []workflow.ActionSpec {
	out := make([]workflow.ActionSpec, 0, len(list))
	for _, a := range list {
		a.allow([]string{"id", "type", "config"}, nil)
		var s workflow.ActionSpec
		s.ID, _ = a.str("id")
		s.Type, _ = a.str("type")
		if !a.has("type") {
			a.vs.Add(a.at("type"), "required", "type is required")
		}
		s.Config, _ = a.anyMap("config")
		if !a.has("config") {
			a.vs.Add(a.at("config"), "required", "config is required")
		}
		out = append(out, s)
	}
	return out
}

func (a *api) listWorkflows(c *gin.Context) {
	p := principal(c)
	list := "workflows:" + p.WorkspaceID
	var formID *string
	if s, ok := c.GetQuery("form_id"); ok {
		if !httpkit.WellFormedID(s) {
			fail(c, a.Logger, badRequest("form_id is not a form ID"))
			return
		}
		formID = &s
		list += ":" + s
	}
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*workflow.Workflow, bool, error) {
		return a.App.Queries.ListWorkflows.Handle(ctx, workflows.ListWorkflows{FormID: formID, Page: page})
	}, func(w *workflow.Workflow) (any, ports.Position) {
		return presentWorkflow(w), ports.Position{CreatedAt: w.CreatedAt(), ID: w.ID()}
	})
}

func (a *api) createWorkflow(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, workflowProps, workflowReadOnly)
	if !ok {
		return
	}
	var d workflow.Draft
	d.Name, _ = o.str("name")
	if !o.has("name") {
		vs.Add("name", "required", "name is required")
	}
	d.FormID, _ = o.str("form_id")
	if !o.has("form_id") {
		vs.Add("form_id", "required", "form_id is required")
	}
	if en, present := o.boolean("enabled"); present {
		d.Enabled = &en
	}
	if t, present := o.object("trigger"); present {
		d.Trigger = triggerSpec(t)
	} else {
		vs.Add("trigger", "required", "trigger is required")
	}
	if list, present := o.objects("actions"); present {
		d.Actions = actionSpecs(list)
	} else {
		vs.Add("actions", "required", "actions is required")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	w, err := a.App.Commands.CreateWorkflow.Handle(c.Request.Context(), workflows.CreateWorkflow{Draft: d})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusCreated, presentWorkflow(w))
}

func (a *api) getWorkflow(c *gin.Context) {
	w, err := a.App.Queries.GetWorkflow.Handle(c.Request.Context(), workflows.GetWorkflow{ID: c.Param("id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentWorkflow(w))
}

func (a *api) updateWorkflow(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, workflowPatch, workflowPatchReadOnly)
	if !ok {
		return
	}
	var p workflow.Patch
	if n, present := o.str("name"); present {
		p.Name = &n
	}
	if en, present := o.boolean("enabled"); present {
		p.Enabled = &en
	}
	if t, present := o.object("trigger"); present {
		spec := triggerSpec(t)
		p.Trigger = &spec
	}
	if list, present := o.objects("actions"); present {
		specs := actionSpecs(list)
		p.Actions = &specs
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	w, err := a.App.Commands.UpdateWorkflow.Handle(c.Request.Context(), workflows.UpdateWorkflow{ID: c.Param("id"), Patch: p})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentWorkflow(w))
}

func (a *api) deleteWorkflow(c *gin.Context) {
	if err := a.App.Commands.DeleteWorkflow.Handle(c.Request.Context(), workflows.DeleteWorkflow{ID: c.Param("id")}); err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}

type conditionJSON struct {
	FieldID  string `json:"field_id"`
	Operator string `json:"operator"`
	Value    any    `json:"value"`
}

type triggerJSON struct {
	Type   string         `json:"type"`
	Config map[string]any `json:"config"`
}

type actionJSON struct {
	ID     string         `json:"id"`
	Type   string         `json:"type"`
	Config map[string]any `json:"config"`
}

type workflowJSON struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	FormID    string       `json:"form_id"`
	Enabled   bool         `json:"enabled"`
	Trigger   triggerJSON  `json:"trigger"`
	Actions   []actionJSON `json:"actions"`
	CreatedAt string       `json:"created_at"`
	UpdatedAt string       `json:"updated_at"`
}

// presentWorkflow shows a workflow; action secrets are shown as "secret_set": true. A condition
// value is shown with the JSON type it was given as.
func presentWorkflow(w *workflow.Workflow) workflowJSON {
	t := w.Trigger()
	out := workflowJSON{ID: w.ID(), Name: w.Name(), FormID: w.FormID(), Enabled: w.Enabled(),
		Trigger:   triggerJSON{Type: string(t.Type), Config: map[string]any{}},
		Actions:   []actionJSON{},
		CreatedAt: domain.FormatTime(w.CreatedAt()), UpdatedAt: domain.FormatTime(w.UpdatedAt())}
	if t.Conditions != nil {
		conds := make([]conditionJSON, len(t.Conditions))
		for i, c := range t.Conditions {
			var v any = c.Value
			switch c.Kind {
			case workflow.KindNumber:
				v = json.Number(c.Value)
			case workflow.KindBoolean:
				v = c.Value == "true"
			}
			conds[i] = conditionJSON{FieldID: c.FieldID, Operator: string(c.Operator), Value: v}
		}
		out.Trigger.Config["conditions"] = conds
	}
	for _, a := range w.Actions() {
		out.Actions = append(out.Actions, actionJSON{ID: a.ID, Type: a.Type, Config: a.PublicConfig()})
	}
	return out
}
