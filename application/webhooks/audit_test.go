package webhooks_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	webhooksapp "github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/webhook"
)

func TestWebhookChangesAreAudited(t *testing.T) {
	h := newWebhookHarness(0)
	f := h.CreateForm(t, "wsp_a")
	ada := auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: "wsp_a", Role: member.RoleEditor,
		Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_ada", Name: "Ada Lovelace"}})
	w, err := h.App.Commands.CreateWebhook.Handle(ada, webhooksapp.CreateWebhook{Draft: webhook.Draft{
		URL: "https://hooks.example.com/in/t0ken?key=k", Events: []string{"submission.created"}, FormID: apptest.Ptr(f.ID()), Secret: apptest.Ptr("whsec")}})
	if err != nil {
		t.Fatal(err)
	}
	target := audit.Target{Type: "webhook", ID: w.ID()}
	evs := h.Audit.Of(audit.WebhookCreated)
	want := map[string]any{"host": "hooks.example.com", "events": []string{"submission.created"}, "form_id": f.ID(), "enabled": true}
	if len(evs) != 1 || evs[0].Actor.ID != "usr_ada" || *evs[0].Target != target || !reflect.DeepEqual(evs[0].Details, want) {
		t.Fatalf("webhook.created = %+v, want details %v", evs, want)
	}

	off := false
	if _, err := h.App.Commands.UpdateWebhook.Handle(ada, webhooksapp.UpdateWebhook{ID: w.ID(), Patch: webhook.Patch{Enabled: &off, Secret: apptest.Ptr(apptest.Ptr("new secret"))}}); err != nil {
		t.Fatal(err)
	}
	same := w.URL()
	for _, patch := range []webhook.Patch{{}, {URL: &same}} {
		if _, err := h.App.Commands.UpdateWebhook.Handle(ada, webhooksapp.UpdateWebhook{ID: w.ID(), Patch: patch}); err != nil {
			t.Fatal(err)
		}
	}
	evs = h.Audit.Of(audit.WebhookUpdated) // patches that change nothing record nothing
	if len(evs) != 1 || *evs[0].Target != target || evs[0].Details["enabled"] != false ||
		!reflect.DeepEqual(evs[0].Details["changed"], []string{"secret", "enabled"}) {
		t.Fatalf("webhook.updated = %+v", evs)
	}
	for _, e := range h.Audit.Of(audit.WebhookUpdated) {
		for k, v := range e.Details {
			if s, ok := v.(string); ok && (s == "new secret" || s == "whsec") {
				t.Fatalf("details carry the secret under %s", k)
			}
		}
	}

	// A refused update and a delete of another workspace's webhook record nothing.
	if _, err := h.App.Commands.UpdateWebhook.Handle(ada, webhooksapp.UpdateWebhook{ID: w.ID(), Patch: webhook.Patch{Events: &[]string{"nope"}}}); err == nil {
		t.Fatal("an unknown event was accepted")
	}
	other := auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: "wsp_b", Role: member.RoleOwner,
		Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_b"}})
	if err := h.App.Commands.DeleteWebhook.Handle(other, webhooksapp.DeleteWebhook{ID: w.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("other workspace delete: %v", err)
	}
	if n := len(h.Audit.Of(audit.WebhookUpdated)) + len(h.Audit.Of(audit.WebhookDeleted)); n != 1 {
		t.Fatalf("%d events after refused changes, want the one update", n)
	}

	if err := h.App.Commands.DeleteWebhook.Handle(ada, webhooksapp.DeleteWebhook{ID: w.ID()}); err != nil {
		t.Fatal(err)
	}
	evs = h.Audit.Of(audit.WebhookDeleted)
	if len(evs) != 1 || *evs[0].Target != target || evs[0].Actor.Name != "Ada Lovelace" || evs[0].Details["host"] != "hooks.example.com" {
		t.Fatalf("webhook.deleted = %+v", evs)
	}
}
