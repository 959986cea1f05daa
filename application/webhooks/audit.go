package webhooks

import (
	"net/url"
	"reflect"
	"slices"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/webhook"
)

func webhookTarget(w *webhook.Webhook) *audit.Target {
	return &audit.Target{Type: "webhook", ID: w.ID()}
}

// webhookDetails are the audit details of a webhook: the host of its URL (a URL's path or
// query may carry a token, so only the host is kept), its events, its form, whether it is
// enabled and, for an update, the properties the patch set. The secret is never in them.
func webhookDetails(w *webhook.Webhook, changed []string) map[string]any {
	events := make([]string, len(w.Events()))
	for i, e := range w.Events() {
		events[i] = string(e)
	}
	d := map[string]any{"events": events, "enabled": w.Enabled()}
	if u, err := url.Parse(w.URL()); err == nil && u.Host != "" {
		d["host"] = u.Hostname()
	}
	if id := w.FormID(); id != nil {
		d["form_id"] = *id
	}
	if changed != nil {
		d["changed"] = changed
	}
	return d
}

// webhookChanges names the properties that differ between before and after, in the API's words.
func webhookChanges(before, after *webhook.Webhook) []string {
	changed := []string{}
	if before.URL() != after.URL() {
		changed = append(changed, "url")
	}
	if !slices.Equal(before.Events(), after.Events()) {
		changed = append(changed, "events")
	}
	if !reflect.DeepEqual(before.FormID(), after.FormID()) {
		changed = append(changed, "form_id")
	}
	if before.Secret() != after.Secret() {
		changed = append(changed, "secret")
	}
	if before.Enabled() != after.Enabled() {
		changed = append(changed, "enabled")
	}
	return changed
}
