package webhooks

import (
	"net/url"

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

// patchedWebhook names the properties a patch sets, in the API's words.
func patchedWebhook(p webhook.Patch) []string {
	changed := []string{}
	if p.URL != nil {
		changed = append(changed, "url")
	}
	if p.Events != nil {
		changed = append(changed, "events")
	}
	if p.FormID != nil {
		changed = append(changed, "form_id")
	}
	if p.Secret != nil {
		changed = append(changed, "secret")
	}
	if p.Enabled != nil {
		changed = append(changed, "enabled")
	}
	return changed
}
