package forms

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// Definition is a form as code: what a portable document holds, fields by key without IDs.
type Definition struct {
	Name        string
	Description *string
	Fields      []form.FieldSpec
}

// ApplyDefinition creates or updates the workspace's form with Ref to match Definition.
type ApplyDefinition struct {
	Ref        string
	Definition Definition
	// DryRun only computes the plan.
	DryRun bool
	// AllowTypeChange lets a field of a form with stored submissions change its type.
	AllowTypeChange bool
}

// The plan's actions.
const (
	PlanCreate    = "create"
	PlanUpdate    = "update"
	PlanUnchanged = "unchanged"
)

// Plan says what applying a definition does (or did).
type Plan struct {
	Action string
	// Form is the form after the apply (before it, for a dry run of an update; nil for a dry
	// run of a create).
	Form *form.Form
	// Name and Description report whether they change.
	Name, Description bool
	// Added, Relabelled, Changed and Unchanged are field keys; Removed fields keep their stored
	// answers, StoredSubmissions says how many submissions the form holds.
	Added, Removed, Relabelled, Changed, Unchanged []string
	StoredSubmissions                              int64
}

// ApplyDefinitionHandler applies definitions in one transaction per form.
type ApplyDefinitionHandler struct {
	forms  ports.FormRepository
	ids    ports.IDs
	clock  ports.Clock
	limits form.Limits
	create CreateFormHandler
}

// NewApplyDefinitionHandler makes the command.
func NewApplyDefinitionHandler(forms ports.FormRepository, ids ports.IDs, clock ports.Clock, limits form.Limits) ApplyDefinitionHandler {
	return ApplyDefinitionHandler{forms: forms, ids: ids, clock: clock, limits: limits, create: NewCreateFormHandler(forms, ids, clock, limits)}
}

// Handle creates the form when no form has the ref, else updates it; a definition equal to the
// form changes nothing (no write of its fields, no event, no audit).
func (h ApplyDefinitionHandler) Handle(ctx context.Context, cmd ApplyDefinition) (Plan, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return Plan{}, err
	}
	if !form.ValidRef(cmd.Ref) {
		var vs domain.Violations
		vs.Add("ref", "invalid_value", "ref must be 1 to 64 lower-case letters, digits and hyphens, starting with a letter or digit")
		return Plan{}, vs.Err()
	}
	existing, err := h.forms.FindByRef(ctx, p.WorkspaceID, cmd.Ref)
	if errors.Is(err, domain.ErrNotFound) {
		return h.createForm(ctx, cmd)
	}
	if err != nil {
		return Plan{}, err
	}
	counts, err := h.forms.SubmissionCounts(ctx, p.WorkspaceID, []string{existing.ID()})
	if err != nil {
		return Plan{}, err
	}
	stored := counts[existing.ID()]
	if cmd.DryRun {
		plan, _, err := h.plan(existing, cmd, stored)
		return plan, err
	}
	var plan Plan
	f, err := h.forms.Update(ctx, p.WorkspaceID, existing.ID(), func(f *form.Form) (ports.Effects, error) {
		var patch form.Patch
		plan, patch, err = h.plan(f, cmd, stored)
		if err != nil || plan.Action == PlanUnchanged {
			return ports.Effects{}, err
		}
		now := h.clock.Now()
		before := *f
		if _, err := f.Apply(patch, func() string { return h.ids.New(ports.PrefixField) }, h.limits, now); err != nil {
			return ports.Effects{}, err
		}
		var fx ports.Effects
		if action, details, changed := formChange(&before, f); changed {
			e, err := p.AuditEvent(h.ids, now, action, formTarget(f), details)
			if err != nil {
				return ports.Effects{}, err
			}
			fx.Audit = []audit.Event{e}
		}
		return fx, nil
	})
	if err != nil {
		return Plan{}, err
	}
	plan.Form = f
	return plan, nil
}

func (h ApplyDefinitionHandler) createForm(ctx context.Context, cmd ApplyDefinition) (Plan, error) {
	ref := cmd.Ref
	d := form.Draft{Ref: &ref, Name: cmd.Definition.Name, Description: cmd.Definition.Description, Fields: cmd.Definition.Fields}
	plan := Plan{Action: PlanCreate, Name: true, Description: d.Description != nil}
	for _, s := range d.Fields {
		if s.Key != nil {
			plan.Added = append(plan.Added, *s.Key)
		}
	}
	if cmd.DryRun {
		// Check the definition as a create would, without storing it.
		if _, err := form.New("frm_plan", "ws_plan", d, func() string { return h.ids.New(ports.PrefixField) }, h.limits, h.clock.Now()); err != nil {
			return Plan{}, err
		}
		return plan, nil
	}
	v, err := h.create.Handle(ctx, CreateForm{Draft: d})
	if err != nil {
		return Plan{}, err
	}
	plan.Form = v.Form
	return plan, nil
}

// plan matches the definition's fields to the form's by key and says what changes; it applies
// the patch to a copy only, so an unchanged form is never touched.
func (h ApplyDefinitionHandler) plan(f *form.Form, cmd ApplyDefinition, stored int64) (Plan, form.Patch, error) {
	plan := Plan{Action: PlanUpdate, Form: f, StoredSubmissions: stored}
	byKey := map[string]form.Field{}
	for _, fl := range f.Fields() {
		byKey[fl.Key] = fl
	}
	var vs domain.Violations
	specs := make([]form.FieldSpec, len(cmd.Definition.Fields))
	inDoc := map[string]bool{}
	for i, s := range cmd.Definition.Fields {
		if s.Key != nil {
			if old, ok := byKey[*s.Key]; ok && !inDoc[*s.Key] {
				s.ID = old.ID
				if string(old.Type) != s.Type && stored > 0 && !cmd.AllowTypeChange {
					vs.Add(fmt.Sprintf("fields[%d].type", i), "type_change", fmt.Sprintf("field %s would change from %s to %s while the form holds %d stored submissions; apply with allow_type_change=true to change it", *s.Key, old.Type, s.Type, stored))
				}
			}
			inDoc[*s.Key] = true
		}
		specs[i] = s
	}
	if err := vs.Err(); err != nil {
		return Plan{}, form.Patch{}, err
	}
	ref := cmd.Ref
	refp := &ref
	desc := cmd.Definition.Description
	patch := form.Patch{Ref: &refp, Name: &cmd.Definition.Name, Description: &desc, Fields: &specs}
	next := *f
	if _, err := next.Apply(patch, func() string { return h.ids.New(ports.PrefixField) }, h.limits, h.clock.Now()); err != nil {
		return Plan{}, form.Patch{}, err
	}
	plan.Name = next.Name() != f.Name()
	plan.Description = !reflect.DeepEqual(next.Description(), f.Description())
	after := map[string]form.Field{}
	for _, fl := range next.Fields() {
		after[fl.Key] = fl
		old, ok := byKey[fl.Key]
		switch {
		case !ok:
			plan.Added = append(plan.Added, fl.Key)
		case reflect.DeepEqual(old, fl):
			plan.Unchanged = append(plan.Unchanged, fl.Key)
		case old.Label != fl.Label && onlyLabelDiffers(old, fl):
			plan.Relabelled = append(plan.Relabelled, fl.Key)
		default:
			plan.Changed = append(plan.Changed, fl.Key)
		}
	}
	for _, fl := range f.Fields() {
		if _, ok := after[fl.Key]; !ok {
			plan.Removed = append(plan.Removed, fl.Key)
		}
	}
	order := !reflect.DeepEqual(fieldIDs(f.Fields()), fieldIDs(next.Fields()))
	if !plan.Name && !plan.Description && !order && len(plan.Added)+len(plan.Removed)+len(plan.Relabelled)+len(plan.Changed) == 0 {
		plan.Action = PlanUnchanged
	}
	return plan, patch, nil
}

func onlyLabelDiffers(a, b form.Field) bool {
	a.Label = b.Label
	return reflect.DeepEqual(a, b)
}

func fieldIDs(fields []form.Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.ID
	}
	return out
}
