package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Every Update commits the effects its change returns with the change, and nothing of them when
// the change fails: webhook and workflow edits write their audit events in their own transaction.
func TestUpdateCommitsEffects(t *testing.T) {
	eachPeople(t, func(t *testing.T, p people) {
		ctx := context.Background()
		base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		w := mustWorkspace(t, p.repos, base)
		f := mustForm(t, p.repos, w.ID(), base)
		hook := buildWebhook(t, w.ID(), nil, nil, base)
		noErr(t, p.webhooks.Create(ctx, hook))
		flows := workflowRepo(p.repos)
		flow := mustWorkflow(t, p.repos, w.ID(), f.ID(), base, "submission.created")

		boom := errors.New("boom")
		_, err := p.webhooks.Update(ctx, w.ID(), hook.ID(), func(*webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.APIKeyCreated, base)}}, boom
		})
		wantErr(t, err, boom)
		wantActions(t, p, w.ID())

		_, err = p.webhooks.Update(ctx, w.ID(), hook.ID(), func(*webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.APIKeyCreated, base)}}, nil
		})
		noErr(t, err)
		_, err = flows.Update(ctx, w.ID(), flow.ID(), func(*workflow.Workflow) (ports.Effects, error) {
			return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.APIKeyRevoked, base.Add(time.Second))}}, nil
		})
		noErr(t, err)
		wantActions(t, p, w.ID(), audit.APIKeyRevoked, audit.APIKeyCreated)

		// Domain events of an edit go to the outbox in the same transaction.
		before, err := p.outbox.Pending(ctx, 0, 1000)
		noErr(t, err)
		e := event.Published(newID("evt"), f, base)
		_, err = p.webhooks.Update(ctx, w.ID(), hook.ID(), func(*webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{Events: []event.Event{e}}, nil
		})
		noErr(t, err)
		after, err := p.outbox.Pending(ctx, 0, 1000)
		noErr(t, err)
		if len(after) != len(before)+1 || after[len(after)-1].Event.ID != e.ID {
			t.Fatalf("outbox after the edit: %d events (before %d)", len(after), len(before))
		}

		// A workspace has no outbox: domain events are refused, and the change is not stored.
		name := "Renamed"
		_, err = p.workspaces.Update(ctx, w.ID(), func(ws *workspace.Workspace) (ports.Effects, error) {
			_, err := ws.Change(workspace.Settings{Name: &name}, base)
			return ports.Effects{Events: []event.Event{e}}, err
		})
		if err == nil {
			t.Fatal("a workspace update wrote domain events")
		}
		got, err := p.workspaces.Get(ctx, w.ID())
		noErr(t, err)
		if got.Name() == name {
			t.Fatal("a refused workspace update was stored")
		}
	})
}
