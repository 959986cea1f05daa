package persistence_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

func workflowRepo(r repos) *persistence.WorkflowRepository {
	return persistence.NewWorkflowRepository(r.db, r.cipher)
}

func integrationRepo(r repos) *persistence.IntegrationRepository {
	return persistence.NewIntegrationRepository(r.db, r.cipher)
}

func buildWorkflow(t testing.TB, workspaceID, formID string, at time.Time, trigger string, secret string) *workflow.Workflow {
	t.Helper()
	cfg := map[string]any{"url": "https://hooks.example.com/in", "headers": map[string]any{"X-A": "1"}}
	if secret != "" {
		cfg["secret"] = secret
	}
	w, err := workflow.New(newID("wfl"), workspaceID, workflow.Draft{
		Name: "Route leads", FormID: formID,
		Trigger: workflow.TriggerSpec{Type: trigger, Conditions: []workflow.ConditionSpec{
			{FieldID: "fld_budget", Operator: "greater_than", Value: json.Number("1000"), HasValue: true},
			{FieldID: "fld_vip", Operator: "equals", Value: true, HasValue: true},
		}},
		Actions: []workflow.ActionSpec{
			{Type: "send_webhook", Config: cfg},
			{Type: "send_email", Config: map[string]any{"to": "sales@example.com", "subject": "New", "body": "{{fld_budget}}"}},
		},
	}, func() string { return newID("act") }, nil, workflow.DefaultLimits, at)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustWorkflow(t testing.TB, r repos, workspaceID, formID string, at time.Time, trigger string) *workflow.Workflow {
	t.Helper()
	w := buildWorkflow(t, workspaceID, formID, at, trigger, "")
	noErr(t, workflowRepo(r).Create(context.Background(), w))
	return w
}

func TestWorkflowCRUDAndIsolation(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		repo := workflowRepo(r)
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base)
		w := buildWorkflow(t, a.ID(), f.ID(), base, "submission.created", "wsec-1")
		noErr(t, repo.Create(ctx, w))
		wantErr(t, repo.Create(ctx, w), domain.ErrConflict)
		// A form of another workspace cannot be named.
		wantErr(t, repo.Create(ctx, buildWorkflow(t, b.ID(), f.ID(), base, "submission.created", "")), domain.ErrNotFound)

		got, err := repo.Get(ctx, a.ID(), w.ID())
		noErr(t, err)
		if got.Name() != w.Name() || got.FormID() != f.ID() || !got.Enabled() || !got.CreatedAt().Equal(base) ||
			!reflect.DeepEqual(got.Trigger(), w.Trigger()) {
			t.Fatalf("got %+v, want %+v", got, w)
		}
		if !reflect.DeepEqual(got.Actions()[1], w.Actions()[1]) || got.Actions()[0].Config["secret"] != "wsec-1" ||
			got.Actions()[0].Config["headers"].(map[string]any)["X-A"] != "1" {
			t.Fatalf("actions %+v", got.Actions())
		}

		_, err = repo.Get(ctx, b.ID(), w.ID())
		wantErr(t, err, domain.ErrNotFound)
		list, err := repo.List(ctx, b.ID(), nil, ports.Page{Limit: 10})
		noErr(t, err)
		if len(list) != 0 {
			t.Fatal("workspace b sees workflows")
		}
		_, err = repo.Update(ctx, b.ID(), w.ID(), func(*workflow.Workflow) (ports.Effects, error) { t.Fatal("change called"); return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
		wantErr(t, repo.Delete(ctx, b.ID(), w.ID()), domain.ErrNotFound)

		off := false
		trig := workflow.TriggerSpec{Type: "submission.updated"}
		_, err = repo.Update(ctx, a.ID(), w.ID(), func(w *workflow.Workflow) (ports.Effects, error) {
			return ports.Effects{}, w.Apply(workflow.Patch{Enabled: &off, Trigger: &trig}, nil, nil, workflow.DefaultLimits, base.Add(time.Minute))
		})
		noErr(t, err)
		got, err = repo.Get(ctx, a.ID(), w.ID())
		noErr(t, err)
		if got.Enabled() || got.Trigger().Type != event.SubmissionUpdated || got.Trigger().Conditions != nil || !got.UpdatedAt().Equal(base.Add(time.Minute)) {
			t.Fatalf("after update %+v", got)
		}
		boom := errors.New("boom")
		_, err = repo.Update(ctx, a.ID(), w.ID(), func(w *workflow.Workflow) (ports.Effects, error) {
			name := "changed"
			_ = w.Apply(workflow.Patch{Name: &name}, nil, nil, workflow.DefaultLimits, base)
			return ports.Effects{}, boom
		})
		wantErr(t, err, boom)
		if got, _ = repo.Get(ctx, a.ID(), w.ID()); got.Name() != "Route leads" {
			t.Fatal("failed change was written")
		}

		n, err := repo.CountForForm(ctx, a.ID(), f.ID())
		noErr(t, err)
		if n != 1 {
			t.Fatalf("count %d", n)
		}
		noErr(t, repo.Delete(ctx, a.ID(), w.ID()))
		wantErr(t, repo.Delete(ctx, a.ID(), w.ID()), domain.ErrNotFound)
	})
}

func TestWorkflowListFilterAndPagination(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		repo := workflowRepo(r)
		ws := mustWorkspace(t, r, base)
		f1, f2 := mustForm(t, r, ws.ID(), base), mustForm(t, r, ws.ID(), base)
		var all []*workflow.Workflow
		for i := 0; i < 5; i++ {
			f := f1
			if i%2 == 1 {
				f = f2
			}
			all = append(all, mustWorkflow(t, r, ws.ID(), f.ID(), base.Add(time.Duration(i/2)*time.Second), "submission.created"))
		}
		var seen []string
		page := ports.Page{Limit: 2}
		for {
			got, err := repo.List(ctx, ws.ID(), nil, page)
			noErr(t, err)
			for _, w := range got {
				seen = append(seen, w.ID())
			}
			if len(got) < 2 {
				break
			}
			last := got[len(got)-1]
			page.After = &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}
		}
		want := []string{all[4].ID(), all[3].ID(), all[2].ID(), all[1].ID(), all[0].ID()}
		if !reflect.DeepEqual(seen, want) {
			t.Fatalf("order %v, want %v", seen, want)
		}
		id := f2.ID()
		got, err := repo.List(ctx, ws.ID(), &id, ports.Page{Limit: 10})
		noErr(t, err)
		if len(got) != 2 || got[0].ID() != all[3].ID() || got[1].ID() != all[1].ID() {
			t.Fatalf("form filter gave %d", len(got))
		}
		n, err := repo.CountForForm(ctx, ws.ID(), f1.ID())
		noErr(t, err)
		if n != 3 {
			t.Fatalf("count %d", n)
		}
	})
}

func TestWorkflowMatchingAndFormCascade(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		repo := workflowRepo(r)
		ws := mustWorkspace(t, r, base)
		f, other := mustForm(t, r, ws.ID(), base), mustForm(t, r, ws.ID(), base)
		created := mustWorkflow(t, r, ws.ID(), f.ID(), base, "submission.created")
		mustWorkflow(t, r, ws.ID(), f.ID(), base, "submission.updated")
		mustWorkflow(t, r, ws.ID(), other.ID(), base, "submission.created")
		paused := mustWorkflow(t, r, ws.ID(), f.ID(), base.Add(time.Second), "submission.created")
		off := false
		_, err := repo.Update(ctx, ws.ID(), paused.ID(), func(w *workflow.Workflow) (ports.Effects, error) {
			return ports.Effects{}, w.Apply(workflow.Patch{Enabled: &off}, nil, nil, workflow.DefaultLimits, base)
		})
		noErr(t, err)

		got, err := repo.Matching(ctx, event.Event{Type: event.SubmissionCreated, WorkspaceID: ws.ID(), FormID: f.ID()})
		noErr(t, err)
		if len(got) != 1 || got[0].ID() != created.ID() {
			t.Fatalf("matching gave %d", len(got))
		}

		noErr(t, r.forms.Delete(ctx, ws.ID(), f.ID()))
		if n := countWhere(t, r.db, "workflows", "form_id", f.ID()); n != 0 {
			t.Fatalf("%d workflows outlived their form", n)
		}
		if n := countWhere(t, r.db, "workflows", "form_id", other.ID()); n != 1 {
			t.Fatalf("other form's workflows: %d", n)
		}
	})
}

func TestIntegrationRepository(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		repo := integrationRepo(r)
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		mk := func(ws string, typ, key, val string, at time.Time) *integration.Integration {
			i, err := integration.New(newID("int"), ws, integration.Draft{Type: typ, Credentials: map[string]string{key: val}}, at)
			noErr(t, err)
			noErr(t, repo.Create(ctx, i))
			return i
		}
		old := mk(a.ID(), "slack", "bot_token", "xoxb-old", base)
		newer := mk(a.ID(), "slack", "bot_token", "xoxb-new", base.Add(time.Second))
		mk(b.ID(), "slack", "bot_token", "xoxb-b", base)

		got, err := repo.Get(ctx, a.ID(), old.ID())
		noErr(t, err)
		if got.Type() != "slack" || got.Credentials()["bot_token"] != "xoxb-old" || !got.CreatedAt().Equal(base) {
			t.Fatalf("got %+v", got)
		}
		_, err = repo.Get(ctx, b.ID(), old.ID())
		wantErr(t, err, domain.ErrNotFound)
		wantErr(t, repo.Delete(ctx, b.ID(), old.ID()), domain.ErrNotFound)

		of, err := repo.OfType(ctx, a.ID(), "slack")
		noErr(t, err)
		if of.ID() != newer.ID() {
			t.Fatal("OfType must return the newest")
		}
		_, err = repo.OfType(ctx, a.ID(), "google_sheets")
		wantErr(t, err, domain.ErrNotFound)

		list, err := repo.List(ctx, a.ID(), ports.Page{Limit: 1})
		noErr(t, err)
		if len(list) != 1 || list[0].ID() != newer.ID() {
			t.Fatal("list order")
		}
		list, err = repo.List(ctx, a.ID(), ports.Page{Limit: 5, After: &ports.Position{CreatedAt: newer.CreatedAt(), ID: newer.ID()}})
		noErr(t, err)
		if len(list) != 1 || list[0].ID() != old.ID() {
			t.Fatal("second page")
		}
		noErr(t, repo.Delete(ctx, a.ID(), newer.ID()))
		of, err = repo.OfType(ctx, a.ID(), "slack")
		noErr(t, err)
		if of.ID() != old.ID() {
			t.Fatal("OfType after delete")
		}
	})
}
