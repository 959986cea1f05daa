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
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// Definition is a form as code: what a portable document holds, fields by key without IDs.
type Definition struct {
	Name        string
	Description *string
	Fields      []form.FieldSpec
	// Settings replace the form's settings; nil leaves them as they are (the default
	// settings for a new form).
	Settings *form.Settings
	// Languages and Translations replace the form's (nil: left as they are); the plan counts
	// a change of them as a change of settings.
	Languages    *[]string
	Translations *map[string]form.FormTranslation
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
	// Name, Description and Settings report whether they change.
	Name, Description, Settings bool
	// Added, Relabelled, Changed and Unchanged are field keys; Removed fields keep their stored
	// answers, StoredSubmissions says how many submissions the form holds.
	Added, Removed, Relabelled, Changed, Unchanged []string
	StoredSubmissions                              int64
	// Aspects name what changes on each changed or relabelled field, by key (form.Aspect*).
	Aspects map[string][]string
	// OptionsAdded and OptionsRemoved are, by key, the options a changed field gains and loses.
	OptionsAdded, OptionsRemoved map[string][]string
	// RemovedAnswers counts, by key, the stored submissions that answered each removed field
	// (answers that stay stored, shown as removed).
	RemovedAnswers map[string]int64
	// Reordered says the fields the form keeps come in another order.
	Reordered bool

	// touched are the IDs of the fields removed or retyped, whose answers are counted;
	// retyped are the retyped fields as the definition makes them.
	touched []string
	retyped []form.Field
}

// ApplyDefinitionHandler applies definitions in one transaction per form.
type ApplyDefinitionHandler struct {
	forms ports.FormRepository
	// answers reads stored submissions to count the answers of fields that would be removed
	// or change type.
	answers ports.SubmissionScanner
	ids     ports.IDs
	clock   ports.Clock
	limits  form.Limits
	create  CreateFormHandler
}

// NewApplyDefinitionHandler makes the command.
func NewApplyDefinitionHandler(forms ports.FormRepository, answers ports.SubmissionScanner, ids ports.IDs, clock ports.Clock, limits form.Limits) ApplyDefinitionHandler {
	return ApplyDefinitionHandler{forms: forms, answers: answers, ids: ids, clock: clock, limits: limits, create: NewCreateFormHandler(forms, ids, clock, limits)}
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
	totals, err := h.forms.SubmissionCounts(ctx, p.WorkspaceID, []string{existing.ID()})
	if err != nil {
		return Plan{}, err
	}
	stored := totals[existing.ID()]
	// The answers of the fields the definition removes or retypes are counted before the
	// transaction (they are sealed: counting reads them), once, and only when there are any.
	var counts answerCounts
	if stored > 0 {
		pre, _, err := h.plan(existing, cmd, stored, answerCounts{})
		if err != nil {
			return Plan{}, err
		}
		if counts, err = h.countAnswers(ctx, p.WorkspaceID, existing.ID(), pre.touched, pre.retyped); err != nil {
			return Plan{}, err
		}
	}
	if cmd.DryRun {
		plan, _, err := h.plan(existing, cmd, stored, counts)
		return plan, err
	}
	var plan Plan
	f, err := h.forms.Update(ctx, p.WorkspaceID, existing.ID(), func(f *form.Form) (ports.Effects, error) {
		var patch form.Patch
		plan, patch, err = h.plan(f, cmd, stored, counts)
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
	d := form.Draft{Ref: &ref, Name: cmd.Definition.Name, Description: cmd.Definition.Description, Fields: cmd.Definition.Fields, Settings: cmd.Definition.Settings}
	if cmd.Definition.Languages != nil {
		d.Languages = *cmd.Definition.Languages
	}
	if cmd.Definition.Translations != nil {
		d.Translations = *cmd.Definition.Translations
	}
	plan := Plan{Action: PlanCreate, Name: true, Description: d.Description != nil, Settings: d.Settings != nil}
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

// answerCounts are the stored answers of the fields a definition removes or retypes, by field
// ID: how many submissions answer each (answered), and how many of those answers the retyped
// field would refuse (misfits); empty before they are counted.
type answerCounts struct {
	answered, misfits map[string]int64
}

// plan matches the definition's fields to the form's by key and says what changes; it applies
// the patch to a copy only, so an unchanged form is never touched. A type change that stored
// answers do not fit is refused (unless allowed) once the answers are counted.
func (h ApplyDefinitionHandler) plan(f *form.Form, cmd ApplyDefinition, stored int64, counts answerCounts) (Plan, form.Patch, error) {
	plan := Plan{Action: PlanUpdate, Form: f, StoredSubmissions: stored}
	byKey := map[string]form.Field{}
	for _, fl := range f.Fields() {
		byKey[fl.Key] = fl
	}
	specs := make([]form.FieldSpec, len(cmd.Definition.Fields))
	at := map[string]int{} // index in the definition, by field ID
	for i, s := range cmd.Definition.Fields {
		if s.Key != nil {
			if old, ok := byKey[*s.Key]; ok {
				if _, dup := at[old.ID]; !dup {
					s.ID = old.ID
					at[old.ID] = i
				}
			}
		}
		specs[i] = s
	}
	ref := cmd.Ref
	refp := &ref
	desc := cmd.Definition.Description
	patch := form.Patch{Ref: &refp, Name: &cmd.Definition.Name, Description: &desc, Fields: &specs, Settings: cmd.Definition.Settings,
		Languages: cmd.Definition.Languages, Translations: cmd.Definition.Translations}
	next := *f
	if _, err := next.Apply(patch, func() string { return h.ids.New(ports.PrefixField) }, h.limits, h.clock.Now()); err != nil {
		return Plan{}, form.Patch{}, err
	}
	plan.Name = next.Name() != f.Name()
	plan.Description = !reflect.DeepEqual(next.Description(), f.Description())
	plan.Settings = !reflect.DeepEqual(next.Settings(), f.Settings()) ||
		!reflect.DeepEqual(next.Languages(), f.Languages()) || !reflect.DeepEqual(next.Translations(), f.Translations())
	// Fields matched by key carry the stored field's ID, so the diff by ID is the diff by key.
	diff := form.DiffFields(f.Fields(), next.Fields())
	changed := map[string]form.FieldChange{}
	for _, ch := range diff.Changes {
		changed[ch.Field().ID] = ch
	}
	for _, fl := range next.Fields() {
		ch, ok := changed[fl.ID]
		switch {
		case !ok:
			plan.Unchanged = append(plan.Unchanged, fl.Key)
			continue
		case ch.Added():
			plan.Added = append(plan.Added, fl.Key)
			continue
		case ch.Relabelled():
			plan.Relabelled = append(plan.Relabelled, fl.Key)
		default:
			plan.Changed = append(plan.Changed, fl.Key)
		}
		plan.note(fl.Key, ch)
	}
	for _, fl := range f.Fields() {
		if ch, ok := changed[fl.ID]; ok && ch.Removed() {
			plan.Removed = append(plan.Removed, fl.Key)
			if plan.RemovedAnswers == nil {
				plan.RemovedAnswers = map[string]int64{}
			}
			plan.RemovedAnswers[fl.Key] = counts.answered[fl.ID]
		}
	}
	plan.Reordered = diff.Reordered
	var vs domain.Violations
	for _, ch := range diff.Changes {
		switch {
		case ch.Removed():
			plan.touched = append(plan.touched, ch.Before.ID)
		case ch.Has(form.AspectType):
			plan.touched = append(plan.touched, ch.Before.ID)
			plan.retyped = append(plan.retyped, *ch.After)
			if n := counts.misfits[ch.Before.ID]; n > 0 && !cmd.AllowTypeChange {
				vs.Add(fmt.Sprintf("fields[%d].type", at[ch.Before.ID]), "type_change", fmt.Sprintf("field %s would change from %s to %s, and %d of the %d stored answers to it are not valid %s answers; apply with allow_type_change=true to change it anyway (the answers are kept as they are)",
					ch.After.Key, ch.Before.Type, ch.After.Type, n, counts.answered[ch.Before.ID], ch.After.Type))
			}
		}
	}
	if err := vs.Err(); err != nil {
		return Plan{}, form.Patch{}, err
	}
	if !plan.Name && !plan.Description && !plan.Settings && !plan.Reordered && len(plan.Added)+len(plan.Removed)+len(plan.Relabelled)+len(plan.Changed) == 0 {
		plan.Action = PlanUnchanged
	}
	return plan, patch, nil
}

// note records what changes on the field with the key.
func (p *Plan) note(key string, ch form.FieldChange) {
	if p.Aspects == nil {
		p.Aspects, p.OptionsAdded, p.OptionsRemoved = map[string][]string{}, map[string][]string{}, map[string][]string{}
	}
	p.Aspects[key] = ch.Aspects
	if len(ch.OptionsAdded) > 0 {
		p.OptionsAdded[key] = ch.OptionsAdded
	}
	if len(ch.OptionsRemoved) > 0 {
		p.OptionsRemoved[key] = ch.OptionsRemoved
	}
}

// countAnswers counts, in the form's stored submissions, the answers to each touched field
// and, for the retyped ones, the answers the new field would refuse; it reads them oldest
// first a batch at a time (as an export does).
func (h ApplyDefinitionHandler) countAnswers(ctx context.Context, workspaceID, formID string, touched []string, retyped []form.Field) (answerCounts, error) {
	counts := answerCounts{answered: map[string]int64{}, misfits: map[string]int64{}}
	if len(touched) == 0 {
		return counts, nil
	}
	page := ports.OldestFirst{Limit: answerBatch}
	for {
		subs, err := h.answers.ListOldestFirst(ctx, workspaceID, formID, page)
		if err != nil {
			return answerCounts{}, err
		}
		for _, s := range subs {
			for _, id := range touched {
				if _, ok := s.Answer(id); ok {
					counts.answered[id]++
				}
			}
			for _, f := range retyped {
				if v, ok := s.Answer(f.ID); ok && !submission.Fits(f, v) {
					counts.misfits[f.ID]++
				}
			}
		}
		if len(subs) < page.Limit {
			return counts, nil
		}
		last := subs[len(subs)-1]
		page.After = &ports.Position{CreatedAt: last.SubmittedAt(), ID: last.ID()}
	}
}

// answerBatch is how many submissions one read of countAnswers holds in memory.
const answerBatch = 500
