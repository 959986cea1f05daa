package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
)

const hookURL = "https://hooks.example.com/in"

// createWebhook registers a webhook in workspace A and returns its JSON.
func (h *harness) createWebhook(body map[string]any) map[string]any {
	h.t.Helper()
	if body == nil {
		body = map[string]any{"url": hookURL, "events": []string{"submission.created"}}
	}
	r := h.do("POST", "/v1/webhooks", h.keys["admin"], body)
	h.expect(r, 201, "")
	return r.json
}

// addDeliveries stores n deliveries of the webhook directly, as the worker would, oldest first.
func (h *harness) addDeliveries(webhookID string, n int) []*webhook.Delivery {
	h.t.Helper()
	ctx := context.Background()
	w, err := h.app.Queries.GetWebhook.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(h.wsA)), webhooks.GetWebhook{ID: webhookID})
	if err != nil {
		h.t.Fatal(err)
	}
	base := time.Now().UTC().Truncate(time.Millisecond)
	var out []*webhook.Delivery
	for i := range n {
		at := base.Add(time.Duration(i) * time.Millisecond)
		e := event.Event{ID: fmt.Sprintf("evt_%s_%03d", webhookID, i), Type: event.SubmissionCreated, WorkspaceID: h.wsA, FormID: "frm_x", OccurredAt: at}
		out = append(out, webhook.NewDelivery(fmt.Sprintf("dlv_%s%03d", strings.TrimPrefix(webhookID, "whk_"), i), w, e, []byte(`{"secret":"payload"}`), at))
	}
	if err := h.deliveries.AddAll(ctx, out); err != nil {
		h.t.Fatal(err)
	}
	return out
}

func TestWebhookAuthMatrix(t *testing.T) {
	h := sqliteHarness(t)
	hookID := h.createWebhook(nil)["id"].(string)
	ds := h.addDeliveries(hookID, 1)
	retry := "/v1/webhooks/" + hookID + "/deliveries/" + ds[0].ID() + "/retry"
	h.keyMatrix(t, "webhooks", []matrixEndpoint{
		{"GET", "/v1/webhooks", nil, false, false, 200},
		{"POST", "/v1/webhooks", map[string]any{"url": hookURL, "events": []string{"form.published"}}, true, false, 201},
		{"GET", "/v1/webhooks/" + hookID, nil, false, true, 200},
		{"PATCH", "/v1/webhooks/" + hookID, map[string]any{"events": []string{"form.published"}}, true, true, 200},
		{"GET", "/v1/webhooks/" + hookID + "/deliveries", nil, false, true, 200},
		{"POST", retry, nil, true, true, 200},
		{"DELETE", "/v1/webhooks/" + hookID, nil, true, true, 204},
	}, nil, func(string) string { return "/v1/webhooks/" + h.createWebhook(nil)["id"].(string) })
}

func TestWebhookCreateGetUpdateDelete(t *testing.T) {
	h := sqliteHarness(t)
	f := h.createForm(contactFields...)
	const secret = "whsec-Narwhal-9931"
	w := h.createWebhook(map[string]any{"url": hookURL, "events": []string{"submission.created", "form.published"},
		"form_id": f["id"], "secret": secret})
	if !strings.HasPrefix(w["id"].(string), "whk_") || w["form_id"] != f["id"] || w["secret_set"] != true || w["url"] != hookURL {
		t.Fatalf("created %v", w)
	}
	if _, ok := w["secret"]; ok {
		t.Fatal("the secret is returned")
	}
	id := w["id"].(string)
	got := h.do("GET", "/v1/webhooks/"+id, h.keys["read-only"], nil)
	h.expect(got, 200, "")
	if got.json["created_at"] != w["created_at"] || len(got.json["events"].([]any)) != 2 {
		t.Fatalf("get %v", got.json)
	}

	// Sending back what was read is accepted: read-only properties are ignored.
	back := map[string]any{}
	for k, v := range got.json {
		back[k] = v
	}
	back["form_id"] = nil
	back["secret"] = nil
	r := h.do("PATCH", "/v1/webhooks/"+id, h.keys["read-write"], back)
	h.expect(r, 200, "")
	if r.json["form_id"] != nil || r.json["secret_set"] != false || r.json["id"] != id {
		t.Fatalf("patched %v", r.json)
	}
	r = h.do("PATCH", "/v1/webhooks/"+id, h.keys["read-write"], map[string]any{"secret": "new-secret", "url": "https://93.184.216.34/hook"})
	h.expect(r, 200, "")
	if r.json["secret_set"] != true || r.json["url"] != "https://93.184.216.34/hook" {
		t.Fatalf("patched %v", r.json)
	}
	if got.json["enabled"] != true {
		t.Fatalf("a new webhook is not enabled: %v", got.json)
	}

	// The enabled switch: PATCH turns it off and on; it may be registered off; not a boolean: 422.
	r = h.do("PATCH", "/v1/webhooks/"+id, h.keys["read-write"], map[string]any{"enabled": false})
	h.expect(r, 200, "")
	if r.json["enabled"] != false || r.json["url"] != "https://93.184.216.34/hook" {
		t.Fatalf("switched off: %v", r.json)
	}
	if g := h.do("GET", "/v1/webhooks/"+id, h.keys["read-only"], nil); g.json["enabled"] != false {
		t.Fatalf("read back: %v", g.json)
	}
	h.expect(h.do("PATCH", "/v1/webhooks/"+id, h.keys["read-write"], map[string]any{"enabled": "no"}), 422, "validation_failed")
	h.expect(h.do("PATCH", "/v1/webhooks/"+id, h.keys["read-write"], map[string]any{"enabled": nil}), 422, "validation_failed")
	h.expect(h.do("PATCH", "/v1/webhooks/"+id, h.keys["read-only"], map[string]any{"enabled": true}), 403, "forbidden")
	r = h.do("PATCH", "/v1/webhooks/"+id, h.keys["read-write"], map[string]any{"enabled": true})
	h.expect(r, 200, "")
	if r.json["enabled"] != true {
		t.Fatalf("switched on: %v", r.json)
	}
	off := h.createWebhook(map[string]any{"url": hookURL, "events": []string{"submission.created"}, "enabled": false})
	if off["enabled"] != false {
		t.Fatalf("registered off: %v", off)
	}
	h.expect(h.do("POST", "/v1/webhooks", h.keys["admin"], map[string]any{"url": hookURL, "events": []string{"submission.created"}, "enabled": 1}),
		422, "validation_failed")
	for _, res := range []response{r, got, h.do("GET", "/v1/webhooks", h.keys["admin"], nil)} {
		if strings.Contains(res.Body.String(), secret) || strings.Contains(res.Body.String(), "new-secret") {
			t.Fatalf("a secret appears in a response: %s", res.Body.String())
		}
	}

	h.expect(h.do("DELETE", "/v1/webhooks/"+id, h.keys["admin"], nil), 204, "")
	h.expect(h.do("GET", "/v1/webhooks/"+id, h.keys["admin"], nil), 404, "not_found")
	h.expect(h.do("DELETE", "/v1/webhooks/"+id, h.keys["admin"], nil), 404, "not_found")
	h.expect(h.do("GET", "/v1/webhooks/whk_unknown/deliveries", h.keys["admin"], nil), 404, "not_found")
}

func TestWebhookValidation(t *testing.T) {
	h := sqliteHarness(t)
	other := h.do("POST", "/v1/forms", h.keys["other"], map[string]any{"name": "B's form"})
	h.expect(other, 201, "")
	ok := []string{"submission.created"}
	cases := []struct {
		name    string
		body    any
		field   string
		code    string
		message string
	}{
		{"http url", map[string]any{"url": "http://hooks.example.com/in", "events": ok}, "url", "https_required", "https"},
		{"private literal", map[string]any{"url": "https://10.0.0.1/hook", "events": ok}, "url", "invalid_url", "url resolves to a private address (10.0.0.1)"},
		{"loopback literal", map[string]any{"url": "https://127.0.0.1/hook", "events": ok}, "url", "invalid_url", "loopback"},
		{"private by name", map[string]any{"url": "https://internal.example.com/hook", "events": ok}, "url", "invalid_url", "private address (10.20.30.40)"},
		{"unresolvable", map[string]any{"url": "https://nowhere.example.com/hook", "events": ok}, "url", "invalid_url", "could not be resolved"},
		{"missing url", map[string]any{"events": ok}, "url", "required", ""},
		{"missing events", map[string]any{"url": hookURL}, "events", "required", ""},
		{"unknown event", map[string]any{"url": hookURL, "events": []string{"submission.created", "submission.deleted"}}, "events[1]", "invalid_value", ""},
		{"events not strings", map[string]any{"url": hookURL, "events": "submission.created"}, "events", "invalid_type", ""},
		{"unknown form", map[string]any{"url": hookURL, "events": ok, "form_id": "frm_nope"}, "form_id", "not_found", "no form of this workspace"},
		{"form of another workspace", map[string]any{"url": hookURL, "events": ok, "form_id": other.json["id"]}, "form_id", "not_found", ""},
		{"empty secret", map[string]any{"url": hookURL, "events": ok, "secret": ""}, "secret", "invalid_length", ""},
		{"unknown property", map[string]any{"url": hookURL, "events": ok, "active": true}, "active", "unknown_property", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			r := h.do("POST", "/v1/webhooks", h.keys["admin"], c.body)
			h.expect(r, 422, "validation_failed")
			details := r.json["error"].(map[string]any)["details"].([]any)
			found := false
			for _, d := range details {
				d := d.(map[string]any)
				if d["field"] == c.field && d["code"] == c.code && strings.Contains(d["message"].(string), c.message) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no detail %s %s %q in %s", c.field, c.code, c.message, r.Body.String())
			}
		})
	}
	h.t = t
	h.expect(h.do("POST", "/v1/webhooks", h.keys["admin"], `[1]`), 400, "invalid_request")

	// PATCH applies the same rules, and a refused PATCH changes nothing.
	id := h.createWebhook(nil)["id"].(string)
	r := h.do("PATCH", "/v1/webhooks/"+id, h.keys["admin"], map[string]any{"url": "https://10.0.0.1/", "form_id": "frm_nope"})
	h.expect(r, 422, "validation_failed")
	if n := len(r.json["error"].(map[string]any)["details"].([]any)); n != 2 {
		t.Fatalf("%d details, want 2: %s", n, r.Body.String())
	}
	r = h.do("GET", "/v1/webhooks/"+id, h.keys["admin"], nil)
	if r.json["url"] != hookURL || r.json["form_id"] != nil {
		t.Fatalf("a refused patch changed the webhook: %v", r.json)
	}
	h.expect(h.do("PATCH", "/v1/webhooks/"+id, h.keys["admin"], map[string]any{"events": []string{}}), 422, "validation_failed")
	h.expect(h.do("PATCH", "/v1/webhooks/"+id, h.keys["admin"], map[string]any{"nope": 1}), 422, "validation_failed")
}

func TestWebhookLimit(t *testing.T) {
	h := sqliteHarness(t)
	for range 100 {
		h.createWebhook(nil)
	}
	r := h.do("POST", "/v1/webhooks", h.keys["admin"], map[string]any{"url": hookURL, "events": []string{"form.published"}})
	h.expect(r, 422, "validation_failed")
	if !strings.Contains(r.Body.String(), "too_many") || !strings.Contains(r.Body.String(), "at most 100 webhooks") {
		t.Fatalf("body %s", r.Body.String())
	}
	h.expect(h.do("POST", "/v1/webhooks", h.keys["other"], map[string]any{"url": hookURL, "events": []string{"form.published"}}), 201, "")
}

func TestWebhookListPagination(t *testing.T) {
	h := sqliteHarness(t)
	var ids []string
	for range 5 {
		ids = append(ids, h.createWebhook(nil)["id"].(string))
	}
	var got []string
	path := "/v1/webhooks?limit=2"
	for {
		r := h.do("GET", path, h.keys["read-only"], nil)
		h.expect(r, 200, "")
		for _, it := range r.json["data"].([]any) {
			got = append(got, it.(map[string]any)["id"].(string))
		}
		if r.json["has_more"] != true {
			if r.json["next_cursor"] != nil {
				t.Fatal("next_cursor on the last page")
			}
			break
		}
		path = "/v1/webhooks?limit=2&cursor=" + r.json["next_cursor"].(string)
	}
	if len(got) != 5 {
		t.Fatalf("listed %v", got)
	}
	seen := map[string]bool{}
	for _, id := range got {
		seen[id] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Fatalf("%s not listed: %v", id, got)
		}
	}
	h.expect(h.do("GET", "/v1/webhooks?cursor=forged.cursor", h.keys["admin"], nil), 400, "invalid_request")
	h.expect(h.do("GET", "/v1/webhooks?limit=0", h.keys["admin"], nil), 400, "invalid_request")
	// A forms cursor is not a webhooks cursor.
	for range 2 {
		h.createForm()
	}
	fr := h.do("GET", "/v1/forms?limit=1", h.keys["admin"], nil)
	h.expect(h.do("GET", "/v1/webhooks?cursor="+fr.json["next_cursor"].(string), h.keys["admin"], nil), 400, "invalid_request")
}

func TestDeliveriesListAndRetry(t *testing.T) {
	h := sqliteHarness(t)
	id := h.createWebhook(nil)["id"].(string)
	otherID := h.createWebhook(nil)["id"].(string)
	ds := h.addDeliveries(id, 3)
	h.addDeliveries(otherID, 1)

	// Give the oldest delivery five failed attempts.
	ctx := context.Background()
	first := ds[0]
	for i := range 5 {
		code := 500 + i
		first.Record(webhook.Outcome{StatusCode: code, Duration: 250 * time.Millisecond, Err: fmt.Errorf("endpoint answered %d", code)},
			first.CreatedAt().Add(time.Duration(i)*time.Minute), retry.Default())
	}
	if err := h.deliveries.Save(ctx, first); err != nil {
		t.Fatal(err)
	}

	r := h.do("GET", "/v1/webhooks/"+id+"/deliveries?limit=2", h.keys["read-only"], nil)
	h.expect(r, 200, "")
	data := r.json["data"].([]any)
	if len(data) != 2 || r.json["has_more"] != true || data[0].(map[string]any)["id"] != ds[2].ID() {
		t.Fatalf("first page %s", r.Body.String())
	}
	d0 := data[0].(map[string]any)
	if d0["webhook_id"] != id || d0["event"] != "submission.created" || d0["status"] != "pending" || d0["next_attempt_at"] == nil || len(d0["attempts"].([]any)) != 0 {
		t.Fatalf("delivery %v", d0)
	}
	if strings.Contains(r.Body.String(), "payload") {
		t.Fatal("the delivery body is shown")
	}
	cursor := r.json["next_cursor"].(string)
	r = h.do("GET", "/v1/webhooks/"+id+"/deliveries?limit=2&cursor="+cursor, h.keys["read-only"], nil)
	h.expect(r, 200, "")
	data = r.json["data"].([]any)
	if len(data) != 1 || r.json["has_more"] != false {
		t.Fatalf("second page %s", r.Body.String())
	}
	last := data[0].(map[string]any)
	if last["id"] != first.ID() || last["status"] != "undeliverable" || last["next_attempt_at"] != nil {
		t.Fatalf("undeliverable delivery %v", last)
	}
	attempts := last["attempts"].([]any)
	if len(attempts) != 5 {
		t.Fatalf("%d attempts", len(attempts))
	}
	a0 := attempts[0].(map[string]any)
	if a0["attempt"] != 1.0 || a0["status_code"] != 500.0 || a0["duration_ms"] != 250.0 || a0["error"] != "endpoint answered 500" {
		t.Fatalf("attempt %v", a0)
	}
	// Another webhook's cursor does not work here.
	h.expect(h.do("GET", "/v1/webhooks/"+otherID+"/deliveries?cursor="+cursor, h.keys["admin"], nil), 400, "invalid_request")

	// Retry: pending again, a new cycle due now, attempts kept.
	r = h.do("POST", "/v1/webhooks/"+id+"/deliveries/"+first.ID()+"/retry", h.keys["read-write"], nil)
	h.expect(r, 200, "")
	if r.json["status"] != "pending" || r.json["next_attempt_at"] == nil || len(r.json["attempts"].([]any)) != 5 || r.json["id"] != first.ID() {
		t.Fatalf("retried %v", r.json)
	}
	stored, err := h.deliveries.Get(ctx, h.wsA, id, first.ID())
	if err != nil || stored.Status() != webhook.StatusPending || stored.NextAttemptNumber() != 1 {
		t.Fatalf("stored after retry: %v %v", err, stored)
	}
	h.expect(h.do("POST", "/v1/webhooks/"+otherID+"/deliveries/"+first.ID()+"/retry", h.keys["admin"], nil), 404, "not_found")
	h.expect(h.do("POST", "/v1/webhooks/"+id+"/deliveries/dlv_nope/retry", h.keys["admin"], nil), 404, "not_found")

	// Deleting the webhook deletes its deliveries, pending retries included.
	h.expect(h.do("DELETE", "/v1/webhooks/"+id, h.keys["admin"], nil), 204, "")
	if _, err := h.deliveries.Get(ctx, h.wsA, id, first.ID()); err == nil {
		t.Fatal("a delivery of the deleted webhook remains")
	}
	if err := h.deliveries.Save(ctx, stored); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("save after delete: %v", err)
	}
	h.expect(h.do("GET", "/v1/webhooks/"+id+"/deliveries", h.keys["admin"], nil), 404, "not_found")
}
