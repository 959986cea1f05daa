package webhooks_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	webhooksapp "github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// ctx acts as an admin key of workspace wsp_a: the use cases read who acts from the context.
var ctx = apptest.As("wsp_a", apikey.ScopeAdmin)

// newWebhookHarness is the harness with the webhook fakes, allowing max webhooks per workspace.
func newWebhookHarness(max int) *apptest.Harness {
	return apptest.NewWith(application.Settings{MaxWebhooks: max}, apptest.WithWebhooks)
}

func TestCreateWebhook(t *testing.T) {
	h := newWebhookHarness(0)
	f := h.CreateForm(t, "wsp_a")
	w, err := h.CreateWebhook("wsp_a", webhook.Draft{URL: "https://hooks.example.com/in", Events: []string{"submission.created"}, FormID: apptest.Ptr(f.ID()), Secret: apptest.Ptr("s")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.ID(), ports.PrefixWebhook+"_") || w.WorkspaceID() != "wsp_a" || !w.CreatedAt().Equal(apptest.Now) {
		t.Fatalf("webhook = %+v", w)
	}
	if _, err := h.Webhooks.Get(ctx, "wsp_a", w.ID()); err != nil {
		t.Fatalf("not stored: %v", err)
	}
	if len(h.URLs.Calls) != 1 || h.URLs.Calls[0] != "https://hooks.example.com/in" {
		t.Fatalf("url checker calls = %v", h.URLs.Calls)
	}

	cases := []struct {
		name  string
		ws    string
		draft webhook.Draft
		want  map[string]string // field → code prefix
	}{
		{"domain rules", "wsp_a", webhook.Draft{URL: "http://x", Events: []string{"nope"}}, map[string]string{"url": "https_required", "events[0]": "invalid_value"}},
		{"private address", "wsp_a", webhook.Draft{URL: "https://10.0.0.1/hook", Events: []string{"form.published"}}, map[string]string{"url": "invalid_url: url resolves to a private address"}},
		{"unknown form", "wsp_a", webhook.Draft{URL: "https://hooks.example.com/", Events: []string{"form.published"}, FormID: apptest.Ptr("frm_nope")}, map[string]string{"form_id": "not_found"}},
		{"form of another workspace", "wsp_b", webhook.Draft{URL: "https://internal.example.com/", Events: []string{"form.published"}, FormID: apptest.Ptr(f.ID())},
			map[string]string{"form_id": "not_found", "url": "invalid_url"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(h.Webhooks.Items)
			_, err := h.CreateWebhook(c.ws, c.draft)
			got := apptest.ViolationCodes(err)
			if len(got) != len(c.want) {
				t.Fatalf("violations %v, want %v", got, c.want)
			}
			for field, prefix := range c.want {
				if !strings.HasPrefix(got[field], prefix) {
					t.Fatalf("violations %v, want %v", got, c.want)
				}
			}
			if len(h.Webhooks.Items) != before {
				t.Fatal("an invalid webhook was stored")
			}
		})
	}
}

func TestCreateWebhookLimit(t *testing.T) {
	h := newWebhookHarness(2)
	d := webhook.Draft{URL: "https://hooks.example.com/", Events: []string{"form.published"}}
	for range 2 {
		if _, err := h.CreateWebhook("wsp_a", d); err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.CreateWebhook("wsp_a", d)
	if got := apptest.ViolationCodes(err); !strings.HasPrefix(got[""], "too_many: a workspace may have at most 2 webhooks") {
		t.Fatalf("third webhook: %v", err)
	}
	if _, err := h.CreateWebhook("wsp_b", d); err != nil {
		t.Fatalf("the limit is per workspace: %v", err)
	}
}

func TestUpdateWebhook(t *testing.T) {
	h := newWebhookHarness(0)
	f := h.CreateForm(t, "wsp_a")
	w, err := h.CreateWebhook("wsp_a", webhook.Draft{URL: "https://hooks.example.com/in", Events: []string{"submission.created"}, Secret: apptest.Ptr("s")})
	if err != nil {
		t.Fatal(err)
	}
	update := func(ws string, p webhook.Patch) (*webhook.Webhook, error) {
		return h.App.Commands.UpdateWebhook.Handle(apptest.As(ws, apikey.ScopeAdmin), webhooksapp.UpdateWebhook{ID: w.ID(), Patch: p})
	}
	h.Clock.At = apptest.Now.Add(time.Hour)
	got, err := update("wsp_a", webhook.Patch{FormID: apptest.Ptr(apptest.Ptr(f.ID())), Events: &[]string{"form.published"}})
	if err != nil {
		t.Fatal(err)
	}
	if *got.FormID() != f.ID() || got.Events()[0] != event.FormPublished || !got.UpdatedAt().Equal(apptest.Now.Add(time.Hour)) || got.Secret() != "s" {
		t.Fatalf("updated = %+v", got)
	}
	if len(h.URLs.Calls) != 1 {
		t.Fatalf("an unchanged url was checked again: %v", h.URLs.Calls)
	}
	_, err = update("wsp_a", webhook.Patch{URL: apptest.Ptr("https://10.0.0.1/"), FormID: apptest.Ptr(apptest.Ptr("frm_nope"))})
	if got := apptest.ViolationCodes(err); len(got) != 2 || !strings.HasPrefix(got["url"], "invalid_url") || !strings.HasPrefix(got["form_id"], "not_found") {
		t.Fatalf("violations %v", got)
	}
	stored, _ := h.Webhooks.Get(ctx, "wsp_a", w.ID())
	if stored.URL() != "https://hooks.example.com/in" {
		t.Fatal("a refused update was stored")
	}
	var none *string
	if got, err = update("wsp_a", webhook.Patch{FormID: &none, Secret: &none}); err != nil || got.FormID() != nil || got.SecretSet() {
		t.Fatalf("clearing form_id and secret: %v %+v", err, got)
	}
	if _, err := update("wsp_b", webhook.Patch{}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
}

func TestWebhookQueriesAndDelete(t *testing.T) {
	h := newWebhookHarness(0)
	var ids []string
	for range 3 {
		w, err := h.CreateWebhook("wsp_a", webhook.Draft{URL: "https://hooks.example.com/", Events: []string{"form.published"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID())
	}
	list, more, err := h.App.Queries.ListWebhooks.Handle(ctx, webhooksapp.ListWebhooks{Page: ports.Page{Limit: 2}})
	if err != nil || !more || len(list) != 2 || list[0].ID() != ids[2] {
		t.Fatalf("list: %v %v %v", err, more, list)
	}
	list, more, _ = h.App.Queries.ListWebhooks.Handle(ctx, webhooksapp.ListWebhooks{Page: ports.Page{Limit: 3}})
	if more || len(list) != 3 {
		t.Fatalf("full list: %v %v", more, list)
	}
	if _, err := h.App.Queries.GetWebhook.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), webhooksapp.GetWebhook{ID: ids[0]}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("get from another workspace: %v", err)
	}
	if err := h.App.Commands.DeleteWebhook.Handle(ctx, webhooksapp.DeleteWebhook{ID: ids[0]}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Queries.GetWebhook.Handle(ctx, webhooksapp.GetWebhook{ID: ids[0]}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestDeliveriesListAndRetry(t *testing.T) {
	h := newWebhookHarness(0)
	w, err := h.CreateWebhook("wsp_a", webhook.Draft{URL: "https://hooks.example.com/", Events: []string{"form.published"}})
	if err != nil {
		t.Fatal(err)
	}
	e := event.Event{ID: "evt_1", Type: event.FormPublished, WorkspaceID: "wsp_a", FormID: "frm_1"}
	d1 := webhook.NewDelivery("dlv_1", w, e, []byte(`{}`), apptest.Now)
	d2 := webhook.NewDelivery("dlv_2", w, event.Event{ID: "evt_2", Type: event.FormPublished, WorkspaceID: "wsp_a", FormID: "frm_1"}, []byte(`{}`), apptest.Now)
	for range 5 {
		d1.Record(webhook.Outcome{StatusCode: 500, Err: errors.New("500")}, apptest.Now, retry.Default())
	}
	_ = h.Deliveries.AddAll(ctx, []*webhook.Delivery{d1, d2})

	list, more, err := h.App.Queries.ListDeliveries.Handle(ctx, webhooksapp.ListDeliveries{WebhookID: w.ID(), Page: ports.Page{Limit: 1}})
	if err != nil || !more || len(list) != 1 || list[0].ID() != "dlv_2" {
		t.Fatalf("list: %v %v %v", err, more, list)
	}
	if _, _, err := h.App.Queries.ListDeliveries.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), webhooksapp.ListDeliveries{WebhookID: w.ID(), Page: ports.Page{Limit: 1}}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another workspace's webhook: %v", err)
	}

	h.Clock.At = apptest.Now.Add(24 * time.Hour)
	got, err := h.App.Commands.RetryDelivery.Handle(ctx, webhooksapp.RetryDelivery{WebhookID: w.ID(), ID: "dlv_1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != webhook.StatusPending || got.NextAttemptNumber() != 1 || !got.NextAttemptAt().Equal(h.Clock.At) {
		t.Fatalf("after retry: %s %d %v", got.Status(), got.NextAttemptNumber(), got.NextAttemptAt())
	}
	if _, err := h.App.Commands.RetryDelivery.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), webhooksapp.RetryDelivery{WebhookID: w.ID(), ID: "dlv_1"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("retry from another workspace: %v", err)
	}
}

func TestSendTestEvent(t *testing.T) {
	h := newWebhookHarness(0)
	f := h.CreateForm(t, "wsp_a")
	w, err := h.CreateWebhook("wsp_a", webhook.Draft{URL: "https://hooks.example.com/", Events: []string{"form.published"}, FormID: apptest.Ptr(f.ID())})
	if err != nil {
		t.Fatal(err)
	}
	d, err := h.App.Commands.SendTestEvent.Handle(ctx, webhooksapp.SendTestEvent{WebhookID: w.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if d.EventType() != event.WebhookTest || d.WebhookID() != w.ID() || d.FormID() != f.ID() || d.Status() != webhook.StatusPending ||
		d.NextAttemptAt() == nil || !d.NextAttemptAt().Equal(apptest.Now) {
		t.Fatalf("delivery = %s %s %s %s %v", d.EventType(), d.WebhookID(), d.FormID(), d.Status(), d.NextAttemptAt())
	}
	var body struct {
		Event  string         `json:"event"`
		FormID string         `json:"form_id"`
		Data   map[string]any `json:"data"`
	}
	if err := json.Unmarshal(d.Body(), &body); err != nil || body.Event != "webhook.test" || body.FormID != f.ID() || body.Data["webhook_id"] != w.ID() {
		t.Fatalf("body %s: %v", d.Body(), err)
	}
	stored, err := h.Deliveries.Get(ctx, "wsp_a", w.ID(), d.ID())
	if err != nil || stored.EventType() != event.WebhookTest {
		t.Fatalf("stored: %v %v", stored, err)
	}
	if _, ok := event.ParseType("webhook.test"); ok {
		t.Fatal("webhook.test must not be subscribable")
	}
	if _, err := h.App.Commands.SendTestEvent.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), webhooksapp.SendTestEvent{WebhookID: w.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another workspace's webhook: %v", err)
	}
	before := len(h.Deliveries.Items)
	if _, err := h.App.Commands.SendTestEvent.Handle(apptest.As("wsp_a", apikey.ScopeReadOnly), webhooksapp.SendTestEvent{WebhookID: w.ID()}); !errors.Is(err, auth.ErrForbidden) {
		t.Fatalf("read-only: %v", err)
	}
	if len(h.Deliveries.Items) != before {
		t.Fatal("a forbidden test event was stored")
	}
}
