package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/ports"
)

// TestAuditEventsOfFormsAndAutomations checks that creating forms, webhooks, workflows and
// integrations and deleting the last three write their audit events in the same transaction:
// with the change, and not when the change is refused.
func TestAuditEventsOfFormsAndAutomations(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w := mustWorkspace(t, p.repos, base)
		at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }

		f := buildForm(t, w.ID(), base)
		noErr(t, p.forms.Create(ctx, f, auditEvent(t, w.ID(), audit.FormCreated, at(1))))
		wantErr(t, p.forms.Create(ctx, f, auditEvent(t, w.ID(), audit.FormCreated, at(1))), domain.ErrConflict)
		wantActions(t, p, w.ID(), audit.FormCreated)

		hook := buildWebhook(t, w.ID(), nil, nil, base, "submission.created")
		noErr(t, p.webhooks.Create(ctx, hook, auditEvent(t, w.ID(), audit.WebhookCreated, at(2))))
		wantErr(t, p.webhooks.Delete(ctx, w.ID(), "whk_missing", auditEvent(t, w.ID(), audit.WebhookDeleted, at(3))), domain.ErrNotFound)
		noErr(t, p.webhooks.Delete(ctx, w.ID(), hook.ID(), auditEvent(t, w.ID(), audit.WebhookDeleted, at(3))))

		wf := buildWorkflow(t, w.ID(), f.ID(), base, "submission.created", "")
		noErr(t, workflowRepo(p.repos).Create(ctx, wf, auditEvent(t, w.ID(), audit.WorkflowCreated, at(4))))
		wantErr(t, workflowRepo(p.repos).Delete(ctx, w.ID(), "wfl_missing", auditEvent(t, w.ID(), audit.WorkflowDeleted, at(5))), domain.ErrNotFound)
		noErr(t, workflowRepo(p.repos).Delete(ctx, w.ID(), wf.ID(), auditEvent(t, w.ID(), audit.WorkflowDeleted, at(5))))

		in, err := integration.New(newID("int"), w.ID(), integration.Draft{Type: "slack", Credentials: map[string]string{"bot_token": "xoxb-1"}}, base)
		noErr(t, err)
		noErr(t, integrationRepo(p.repos).Create(ctx, in, auditEvent(t, w.ID(), audit.IntegrationConnected, at(6))))
		wantErr(t, integrationRepo(p.repos).Delete(ctx, w.ID(), "int_missing", auditEvent(t, w.ID(), audit.IntegrationDisconnected, at(7))), domain.ErrNotFound)
		noErr(t, integrationRepo(p.repos).Delete(ctx, w.ID(), in.ID(), auditEvent(t, w.ID(), audit.IntegrationDisconnected, at(7))))

		wantActions(t, p, w.ID(), audit.IntegrationDisconnected, audit.IntegrationConnected, audit.WorkflowDeleted, audit.WorkflowCreated,
			audit.WebhookDeleted, audit.WebhookCreated, audit.FormCreated)

		// Without events the repositories write as before.
		noErr(t, p.forms.Create(ctx, buildForm(t, w.ID(), base)))
		wantActions(t, p, w.ID(), audit.IntegrationDisconnected, audit.IntegrationConnected, audit.WorkflowDeleted, audit.WorkflowCreated,
			audit.WebhookDeleted, audit.WebhookCreated, audit.FormCreated)

		// An event that cannot be written (its ID is taken) rolls the deletion back.
		dup := auditEvent(t, w.ID(), audit.WebhookDeleted, at(8))
		noErr(t, p.audit.Append(ctx, dup))
		hook2 := buildWebhook(t, w.ID(), nil, nil, base, "submission.created")
		noErr(t, p.webhooks.Create(ctx, hook2))
		if err := p.webhooks.Delete(ctx, w.ID(), hook2.ID(), dup); err == nil {
			t.Fatal("delete with an unwritable event succeeded")
		}
		_, err = p.webhooks.Get(ctx, w.ID(), hook2.ID())
		noErr(t, err)
	})
}

func TestAuditLogFiltersByActor(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		w := mustWorkspace(t, p.repos, base)
		ada := audit.Actor{Type: audit.ActorUser, ID: "usr_ada", Name: "Ada Lovelace"}
		key := audit.Actor{Type: audit.ActorAPIKey, ID: "key_ci", Name: "ci"}
		var adas []string
		for i, actor := range []audit.Actor{ada, key, ada, audit.System} {
			e, err := audit.New(newID("aud"), w.ID(), audit.FormUpdated, actor, nil, "", nil, base.Add(time.Duration(i)*time.Minute))
			noErr(t, err)
			noErr(t, p.audit.Append(ctx, e))
			if actor == ada {
				adas = append([]string{e.ID}, adas...)
			}
		}
		list, err := p.audit.List(ctx, w.ID(), ports.AuditQuery{Page: ports.Page{Limit: 10}, ActorID: "usr_ada"})
		noErr(t, err)
		if len(list) != 2 || list[0].ID != adas[0] || list[1].ID != adas[1] {
			t.Fatalf("events of Ada = %v, want %v", list, adas)
		}
		list, err = p.audit.List(ctx, w.ID(), ports.AuditQuery{Page: ports.Page{Limit: 10}, ActorID: "key_ci", Action: string(audit.FormUpdated)})
		noErr(t, err)
		if len(list) != 1 || list[0].Actor != key {
			t.Fatalf("events of the key = %v", list)
		}
		list, err = p.audit.List(ctx, w.ID(), ports.AuditQuery{Page: ports.Page{Limit: 10}, ActorID: "key_ci", Action: string(audit.FormCreated)})
		noErr(t, err)
		if len(list) != 0 {
			t.Fatalf("events of the key of another action = %v", list)
		}
	})
}
