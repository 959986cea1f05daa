package dashboard

import (
	"testing"

	"github.com/formward/formward/domain/audit"
)

// TestAuditSummary: events read as sentences, from details as stored (JSON numbers and lists)
// or as just built.
func TestAuditSummary(t *testing.T) {
	ada := audit.Actor{Type: audit.ActorUser, ID: "usr_1", Name: "Ada Lovelace"}
	key := audit.Actor{Type: audit.ActorAPIKey, ID: "key_1", Name: "CI pipeline"}
	form := &audit.Target{Type: "form", ID: "frm_1"}
	for _, tc := range []struct {
		e    audit.Event
		want string
	}{
		{audit.Event{Action: audit.FormPublished, Actor: ada, Target: form, Details: map[string]any{"name": "Volunteer sign-up"}},
			"Ada Lovelace published the form Volunteer sign-up"},
		{audit.Event{Action: audit.FormUpdated, Actor: ada, Target: form, Details: map[string]any{"name": "Volunteers",
			"changed": []any{"name", "fields"}, "fields_added": float64(1), "fields_removed": float64(2), "fields_edited": float64(0)}},
			"Ada Lovelace edited the form Volunteers: name, questions (1 added, 2 removed)"},
		{audit.Event{Action: audit.FormUpdated, Actor: ada, Target: form, Details: map[string]any{"name": "Volunteers",
			"changed": []string{"logo"}}}, "Ada Lovelace edited the form Volunteers: logo"},
		{audit.Event{Action: audit.FormUpdated, Actor: key, Target: form, Details: map[string]any{"name": "Volunteers",
			"changed": []any{"status"}, "status": "draft", "previous_status": "published"}}, "CI pipeline moved the form Volunteers back to draft"},
		{audit.Event{Action: audit.FormDeleted, Actor: ada, Target: form}, "Ada Lovelace deleted the form frm_1"},
		{audit.Event{Action: audit.WebhookCreated, Actor: ada, Details: map[string]any{"host": "hooks.example.com"}},
			"Ada Lovelace added a webhook to hooks.example.com"},
		{audit.Event{Action: audit.WorkflowDeleted, Actor: ada, Details: map[string]any{"name": "Notify sales"}},
			"Ada Lovelace deleted the workflow Notify sales"},
		{audit.Event{Action: audit.IntegrationConnected, Actor: ada, Details: map[string]any{"type": "google_sheets"}},
			"Ada Lovelace connected the Google Sheets integration"},
		{audit.Event{Action: audit.SubmissionsExported, Actor: key, Target: form, Details: map[string]any{"format": "csv"}},
			"CI pipeline exported the responses of the form frm_1"},
		{audit.Event{Action: audit.SubmissionsExported, Actor: key, Target: form, Details: map[string]any{"format": "ndjson", "file_links": "signed"}},
			"CI pipeline exported the responses of the form frm_1, with signed file links (open to anyone for an hour)"},
		{audit.Event{Action: audit.RetentionDeleted, Actor: audit.System}, "Formward deleted responses past their retention period"},
		{audit.Event{Action: "thing.happened", Actor: ada}, "Ada Lovelace thing.happened"},
	} {
		if got := auditSummary(tc.e); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.e.Action, got, tc.want)
		}
	}
	for _, a := range audit.Actions {
		if _, ok := auditWords[a]; !ok {
			t.Errorf("%s has no words", a)
		}
	}
}
