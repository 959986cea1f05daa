// Package workflow is the workflow aggregate: a trigger (an event type and conditions on the
// submitted values) and an ordered list of actions run when a matching submission arrives.
package workflow

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/text"
)

// Limits bound the size of a workflow.
type Limits struct {
	MaxActions    int
	MaxConditions int
}

// DefaultLimits are the documented limits (docs/api.md, "Counts").
var DefaultLimits = Limits{MaxActions: 20, MaxConditions: 20}

const maxName = 200

// SecretKey is the write-only config key of actions that sign their requests; it is stored but
// never shown, SecretSetKey is shown instead.
const (
	SecretKey    = "secret"
	SecretSetKey = "secret_set"
)

// Trigger is the event type a workflow listens to and the conditions that must all match.
type Trigger struct {
	Type       event.Type
	Conditions []Condition
}

// Action is one step of a workflow: a type served by an action runner and its config.
type Action struct {
	ID     string
	Type   string
	Config map[string]any
}

// Workflow is the aggregate root.
type Workflow struct {
	id          string
	workspaceID string
	formID      string
	name        string
	enabled     bool
	// enabledSince is when the workflow was last switched on: events that happened earlier
	// (while it was off, or before it existed) never start a run, even when redelivered.
	enabledSince time.Time
	trigger      Trigger
	actions      []Action
	createdAt    time.Time
	updatedAt    time.Time
}

// TriggerSpec is a trigger as a client sent it.
type TriggerSpec struct {
	Type       string
	Conditions []ConditionSpec
}

// ActionSpec is an action as a client sent it; ID names an existing action to keep (PATCH only).
// A nil Config means the config was missing.
type ActionSpec struct {
	ID     string
	Type   string
	Config map[string]any
}

// Draft is what a client asks for when creating a workflow.
type Draft struct {
	Name    string
	FormID  string
	Trigger TriggerSpec
	Actions []ActionSpec
	// Enabled, when set, overrides the default of a new workflow (enabled).
	Enabled *bool
}

// ConfigValidator checks one action's type and config. Its violations carry paths relative to
// the action ("type", "config.to"); the aggregate prefixes them with "actions[i].". The
// application backs it with the registered action runners.
type ConfigValidator func(actionType string, config map[string]any) []domain.Violation

// New checks a draft and builds an enabled workflow.
func New(id, workspaceID string, d Draft, newActionID func() string, validate ConfigValidator, lim Limits, now time.Time) (*Workflow, error) {
	var vs domain.Violations
	name := checkName(&vs, d.Name)
	if strings.TrimSpace(d.FormID) == "" {
		vs.Add("form_id", "required", "form_id is required")
	} else {
		text.Field(&vs, "form_id", d.FormID)
	}
	trigger := buildTrigger(&vs, d.Trigger, lim)
	actions := buildActions(&vs, d.Actions, nil, newActionID, validate, lim)
	if err := vs.Err(); err != nil {
		return nil, err
	}
	now = now.UTC()
	enabled := d.Enabled == nil || *d.Enabled
	return &Workflow{
		id: id, workspaceID: workspaceID, formID: strings.TrimSpace(d.FormID), name: name, enabled: enabled, enabledSince: now.UTC(),
		trigger: trigger, actions: actions, createdAt: now, updatedAt: now,
	}, nil
}

// UnmarshalFromDatabase rebuilds a stored workflow without re-checking it.
func UnmarshalFromDatabase(id, workspaceID, formID, name string, enabled bool, enabledSince time.Time, trigger Trigger, actions []Action, createdAt, updatedAt time.Time) *Workflow {
	return &Workflow{id: id, workspaceID: workspaceID, formID: formID, name: name, enabled: enabled, enabledSince: enabledSince.UTC(),
		trigger: trigger, actions: actions, createdAt: createdAt.UTC(), updatedAt: updatedAt.UTC()}
}

// Patch holds the properties a PATCH included; nil means "leave as is". Trigger and Actions
// replace the whole trigger and the whole list.
type Patch struct {
	Name    *string
	Enabled *bool
	Trigger *TriggerSpec
	Actions *[]ActionSpec
}

// Apply changes only the included properties; nothing changes when one is invalid. An action
// entry carrying the ID of an existing action keeps that ID (and its stored secret, unless the
// entry's config sets or clears one); an unknown ID is refused.
func (w *Workflow) Apply(p Patch, newActionID func() string, validate ConfigValidator, lim Limits, now time.Time) error {
	var vs domain.Violations
	next := *w
	if p.Name != nil {
		next.name = checkName(&vs, *p.Name)
	}
	if p.Enabled != nil {
		if *p.Enabled && !w.enabled {
			next.enabledSince = now.UTC()
		}
		next.enabled = *p.Enabled
	}
	if p.Trigger != nil {
		next.trigger = buildTrigger(&vs, *p.Trigger, lim)
	}
	if p.Actions != nil {
		next.actions = buildActions(&vs, *p.Actions, w.actions, newActionID, validate, lim)
	}
	if err := vs.Err(); err != nil {
		return err
	}
	next.updatedAt = now.UTC()
	*w = next
	return nil
}

// Matches reports whether the workflow runs for the event: enabled, same workspace and form,
// the trigger's event type, and every condition true of the submitted values.
func (w *Workflow) Matches(e event.Event, values map[string]submission.Value) bool {
	if !w.enabled || e.OccurredAt.Before(w.enabledSince) ||
		e.WorkspaceID != w.workspaceID || e.FormID != w.formID || e.Type != w.trigger.Type {
		return false
	}
	for _, c := range w.trigger.Conditions {
		v, ok := values[c.FieldID]
		if !c.Holds(v, ok) {
			return false
		}
	}
	return true
}

// FieldValues reads the submitted values out of a submission event's data.
func FieldValues(e event.Event) map[string]submission.Value {
	out := map[string]submission.Value{}
	fields, _ := e.Data["fields"].(map[string]any)
	for k, raw := range fields {
		switch v := raw.(type) {
		case string:
			out[k] = submission.Single(v)
		case []string:
			out[k] = submission.List(v)
		case []any:
			items := make([]string, 0, len(v))
			for _, it := range v {
				if s, ok := it.(string); ok {
					items = append(items, s)
				}
			}
			out[k] = submission.List(items)
		}
	}
	return out
}

// checkName trims the name and checks that it is 1 to 200 characters of valid text.
func checkName(vs *domain.Violations, s string) string {
	s = strings.TrimSpace(s)
	if !text.Field(vs, "name", s) {
		return s
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > maxName {
		vs.Add("name", "invalid_length", fmt.Sprintf("name must be 1 to %d characters", maxName))
	}
	return s
}

// CheckConditionFields refuses conditions on fields that are not fields of the workflow's form
// (isField answers for that form); each is reported at its JSON path.
func (w *Workflow) CheckConditionFields(isField func(fieldID string) bool) error {
	var vs domain.Violations
	for i, c := range w.trigger.Conditions {
		if !isField(c.FieldID) {
			vs.Add(fmt.Sprintf("trigger.config.conditions[%d].field_id", i), "unknown_field",
				"field_id names no field of the workflow's form")
		}
	}
	return vs.Err()
}

func buildTrigger(vs *domain.Violations, s TriggerSpec, lim Limits) Trigger {
	var t Trigger
	switch typ := event.Type(s.Type); {
	case s.Type == "":
		vs.Add("trigger.type", "required", "trigger.type is required")
	case typ == event.SubmissionCreated || typ == event.SubmissionUpdated:
		t.Type = typ
	default:
		vs.Add("trigger.type", "invalid_value", "trigger.type must be submission.created or submission.updated")
	}
	if len(s.Conditions) > lim.MaxConditions {
		vs.Add("trigger.config.conditions", "too_many", fmt.Sprintf("a trigger holds at most %d conditions", lim.MaxConditions))
		return t
	}
	if s.Conditions != nil {
		t.Conditions = make([]Condition, 0, len(s.Conditions))
	}
	for i, cs := range s.Conditions {
		c, cvs := parseCondition(fmt.Sprintf("trigger.config.conditions[%d]", i), cs)
		*vs = append(*vs, cvs...)
		t.Conditions = append(t.Conditions, c)
	}
	return t
}

func buildActions(vs *domain.Violations, specs []ActionSpec, existing []Action, newID func() string, validate ConfigValidator, lim Limits) []Action {
	if specs == nil {
		vs.Add("actions", "required", "actions is required")
		return nil
	}
	if len(specs) > lim.MaxActions {
		vs.Add("actions", "too_many", fmt.Sprintf("a workflow holds at most %d actions", lim.MaxActions))
		return nil
	}
	known := make(map[string]Action, len(existing))
	for _, a := range existing {
		known[a.ID] = a
	}
	seen := make(map[string]bool, len(specs))
	out := make([]Action, 0, len(specs))
	for i, s := range specs {
		path := fmt.Sprintf("actions[%d]", i)
		a := Action{ID: s.ID, Type: strings.TrimSpace(s.Type)}
		var old *Action
		if s.ID != "" {
			if prev, ok := known[s.ID]; !ok {
				vs.Add(path+".id", "unknown_action", "action "+s.ID+" does not belong to this workflow")
			} else if seen[s.ID] {
				vs.Add(path+".id", "duplicate", "action "+s.ID+" appears twice")
			} else {
				old = &prev
			}
			seen[s.ID] = true
		} else {
			a.ID = newID()
		}
		if a.Type == "" {
			vs.Add(path+".type", "required", "type is required")
		}
		textOK := text.Field(vs, path+".type", a.Type)
		if s.Config == nil {
			vs.Add(path+".config", "required", "config is required")
		} else {
			textOK = text.Any(vs, path+".config", s.Config) && textOK
			a.Config = cleanConfig(s.Config, old, a.Type)
		}
		if textOK && a.Type != "" && a.Config != nil && validate != nil {
			for _, v := range validate(a.Type, a.Config) {
				vs.Add(path+"."+v.Field, v.Code, v.Message)
			}
		}
		out = append(out, a)
	}
	return out
}

// cleanConfig copies a config, drops the read-only secret_set, turns "secret": null into no
// secret, and keeps the stored secret of a kept action whose entry did not mention one.
func cleanConfig(in map[string]any, old *Action, typ string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		if k == SecretSetKey {
			continue
		}
		if k == SecretKey && v == nil {
			continue
		}
		out[k] = v
	}
	if _, mentioned := in[SecretKey]; !mentioned && old != nil && old.Type == typ {
		if s, ok := old.Config[SecretKey]; ok {
			out[SecretKey] = s
		}
	}
	return out
}

// ID returns the workflow ID.
func (w *Workflow) ID() string { return w.id }

// WorkspaceID returns the owning workspace.
func (w *Workflow) WorkspaceID() string { return w.workspaceID }

// FormID returns the form the workflow is attached to.
func (w *Workflow) FormID() string { return w.formID }

// Name returns the display name.
func (w *Workflow) Name() string { return w.name }

// Enabled reports whether the workflow runs for new events.
func (w *Workflow) Enabled() bool { return w.enabled }

// EnabledSince returns when the workflow was last switched on.
func (w *Workflow) EnabledSince() time.Time { return w.enabledSince }

// Trigger returns the trigger (a copy).
func (w *Workflow) Trigger() Trigger {
	t := w.trigger
	if t.Conditions != nil {
		t.Conditions = append([]Condition{}, t.Conditions...)
	}
	return t
}

// Actions returns the actions in order (copies of their configs, secrets included).
func (w *Workflow) Actions() []Action {
	out := make([]Action, len(w.actions))
	for i, a := range w.actions {
		cfg := make(map[string]any, len(a.Config))
		for k, v := range a.Config {
			cfg[k] = v
		}
		out[i] = Action{ID: a.ID, Type: a.Type, Config: cfg}
	}
	return out
}

// Action returns the action with the given ID.
func (w *Workflow) Action(id string) (Action, bool) {
	for _, a := range w.Actions() {
		if a.ID == id {
			return a, true
		}
	}
	return Action{}, false
}

// CreatedAt returns the creation time.
func (w *Workflow) CreatedAt() time.Time { return w.createdAt }

// UpdatedAt returns the time of the last change.
func (w *Workflow) UpdatedAt() time.Time { return w.updatedAt }

// PublicConfig is the config as clients see it: the secret replaced by "secret_set": true.
func (a Action) PublicConfig() map[string]any {
	out := make(map[string]any, len(a.Config))
	for k, v := range a.Config {
		if k == SecretKey {
			out[SecretSetKey] = true
			continue
		}
		out[k] = v
	}
	return out
}
