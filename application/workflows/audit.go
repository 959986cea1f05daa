package workflows

import (
	"reflect"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/workflow"
)

func workflowTarget(w *workflow.Workflow) *audit.Target {
	return &audit.Target{Type: "workflow", ID: w.ID()}
}

func integrationTarget(i *integration.Integration) *audit.Target {
	return &audit.Target{Type: "integration", ID: i.ID()}
}

// workflowDetails are the audit details of a workflow: its name, form, trigger, whether it is
// enabled, how many actions it has and, for an update, the properties the patch set. Action
// configs (which may hold secrets) are never in them.
func workflowDetails(w *workflow.Workflow, changed []string) map[string]any {
	d := map[string]any{"name": w.Name(), "form_id": w.FormID(), "trigger": string(w.Trigger().Type),
		"enabled": w.Enabled(), "actions": len(w.Actions())}
	if changed != nil {
		d["changed"] = changed
	}
	return d
}

// workflowChanges names the properties that differ between before and after, in the API's words.
func workflowChanges(before, after *workflow.Workflow) []string {
	changed := []string{}
	if before.Name() != after.Name() {
		changed = append(changed, "name")
	}
	if before.Enabled() != after.Enabled() {
		changed = append(changed, "enabled")
	}
	if !reflect.DeepEqual(before.Trigger(), after.Trigger()) {
		changed = append(changed, "trigger")
	}
	if !reflect.DeepEqual(before.Actions(), after.Actions()) {
		changed = append(changed, "actions")
	}
	return changed
}
