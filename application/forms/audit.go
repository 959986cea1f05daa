package forms

import (
	"reflect"
	"slices"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
)

// formTarget is the audit target of a form.
func formTarget(f *form.Form) *audit.Target { return &audit.Target{Type: "form", ID: f.ID()} }

// formChange is the audit action and details of a change from before to after, and false when
// nothing a person would see changed. Publishing gives form.published, archiving
// form.archived, anything else (a return to draft included) form.updated. The details name
// what changed and count the questions added, removed and edited: they hold the form's name and
// status, never a setting's value (a captcha secret) nor an answer.
func formChange(before, after *form.Form) (audit.Action, map[string]any, bool) {
	var changed []string
	if before.Name() != after.Name() {
		changed = append(changed, "name")
	}
	if !reflect.DeepEqual(before.Description(), after.Description()) {
		changed = append(changed, "description")
	}
	if !reflect.DeepEqual(before.Ref(), after.Ref()) {
		changed = append(changed, "ref")
	}
	if before.Status() != after.Status() {
		changed = append(changed, "status")
	}
	added, removed, edited := fieldChanges(before.Fields(), after.Fields())
	if added+removed+edited > 0 || !sameOrder(before.Fields(), after.Fields()) {
		changed = append(changed, "fields")
	}
	bs, as := before.Settings(), after.Settings()
	bl, al := bs.Theme.Logo, as.Theme.Logo
	bs.Theme.Logo, as.Theme.Logo = nil, nil
	if !reflect.DeepEqual(bs, as) {
		changed = append(changed, "settings")
	}
	if (bl == nil) != (al == nil) || (bl != nil && bl.Key != al.Key) {
		changed = append(changed, "logo")
	}
	if len(changed) == 0 {
		return "", nil, false
	}
	details := map[string]any{"name": after.Name(), "changed": changed}
	if slices.Contains(changed, "fields") {
		details["fields_added"], details["fields_removed"], details["fields_edited"] = added, removed, edited
	}
	action := audit.FormUpdated
	if before.Status() != after.Status() {
		details["status"] = string(after.Status())
		details["previous_status"] = string(before.Status())
		switch after.Status() {
		case form.StatusPublished:
			action = audit.FormPublished
		case form.StatusArchived:
			action = audit.FormArchived
		}
	}
	return action, details, true
}

// fieldChanges counts the questions of after that before lacks, those of before that after
// lacks, and those in both that differ (by field ID).
func fieldChanges(before, after []form.Field) (added, removed, edited int) {
	added, removed, relabelled, changed := form.DiffFields(before, after).Count()
	return added, removed, relabelled + changed
}

// sameOrder reports whether both lists hold the same field IDs in the same order.
func sameOrder(before, after []form.Field) bool {
	return slices.EqualFunc(before, after, func(a, b form.Field) bool { return a.ID == b.ID })
}
