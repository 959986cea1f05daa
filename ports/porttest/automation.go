package porttest

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

func newWebhook(t *testing.T, r Repos, workspaceID string, formID *string, at time.Time, events ...string) *webhook.Webhook {
	t.Helper()
	secret := "s3cret"
	w, err := webhook.New(newID("whk"), workspaceID, webhook.Draft{URL: "https://hooks.example.com/" + newID("in"), Events: events, FormID: formID, Secret: &secret}, at)
	noErr(t, err)
	noErr(t, r.Webhooks.Create(ctx, w))
	return w
}

func submissionEvent(workspaceID, formID string, at time.Time) event.Event {
	return event.Event{ID: newID("evt"), Type: event.SubmissionCreated, WorkspaceID: workspaceID, FormID: formID, OccurredAt: at,
		Data: map[string]any{"submission_id": newID("sub")}}
}

// webhooks: bounded to the workspace; List pages newest first; Update stores the change or
// nothing; Delete takes the deliveries with it; Matching finds the enabled subscribers.
func webhooks(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	f, g := newForm(t, r, w.ID(), base), newForm(t, r, w.ID(), base)
	fid := f.ID()
	h1 := newWebhook(t, r, w.ID(), &fid, base, "submission.created")
	h2 := newWebhook(t, r, w.ID(), nil, base.Add(time.Minute), "submission.created", "form.published")
	h3 := newWebhook(t, r, w.ID(), nil, base.Add(2*time.Minute), "form.published")
	newWebhook(t, r, other.ID(), nil, base, "submission.created")

	got, err := r.Webhooks.Get(ctx, w.ID(), h1.ID())
	noErr(t, err)
	if got.URL() != h1.URL() || got.Secret() != "s3cret" || got.FormID() == nil || *got.FormID() != fid || !got.Enabled() {
		t.Fatalf("got %s for %v, enabled %v", got.URL(), got.FormID(), got.Enabled())
	}
	_, err = r.Webhooks.Get(ctx, other.ID(), h1.ID())
	wantErr(t, err, domain.ErrNotFound)
	if n, err := r.Webhooks.Count(ctx, w.ID()); err != nil || n != 3 {
		t.Fatalf("count %d, %v", n, err)
	}
	page, err := r.Webhooks.List(ctx, w.ID(), ports.Page{Limit: 2})
	noErr(t, err)
	sameIDs(t, "first page", ids(page), h3.ID(), h2.ID())
	page, err = r.Webhooks.List(ctx, w.ID(), ports.Page{Limit: 2, After: &ports.Position{CreatedAt: h2.CreatedAt(), ID: h2.ID()}})
	noErr(t, err)
	sameIDs(t, "second page", ids(page), h1.ID())

	sameMatching := func(what string, e event.Event, want ...string) {
		t.Helper()
		got, err := r.Webhooks.Matching(ctx, e)
		noErr(t, err)
		if !sameSet(ids(got), want) {
			t.Fatalf("%s: matching %v, want %v", what, ids(got), want)
		}
	}
	sameMatching("a submission of f", submissionEvent(w.ID(), f.ID(), base), h1.ID(), h2.ID())
	sameMatching("a submission of g", submissionEvent(w.ID(), g.ID(), base), h2.ID())

	off := false
	updated, err := r.Webhooks.Update(ctx, w.ID(), h2.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
		return ports.Effects{}, w.Apply(webhook.Patch{Enabled: &off}, base.Add(time.Hour))
	})
	noErr(t, err)
	if updated.Enabled() {
		t.Fatal("update returned an enabled webhook")
	}
	sameMatching("a submission of f, h2 disabled", submissionEvent(w.ID(), f.ID(), base), h1.ID())
	url := "https://hooks.example.com/refused"
	_, err = r.Webhooks.Update(ctx, w.ID(), h1.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
		_ = w.Apply(webhook.Patch{URL: &url}, base.Add(time.Hour))
		return ports.Effects{}, errChange
	})
	wantErr(t, err, errChange)
	if got, _ := r.Webhooks.Get(ctx, w.ID(), h1.ID()); got.URL() != h1.URL() {
		t.Fatalf("a refused change was stored: %s", got.URL())
	}
	_, err = r.Webhooks.Update(ctx, other.ID(), h1.ID(), func(*webhook.Webhook) (ports.Effects, error) {
		t.Fatal("change called for a webhook of another workspace")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)

	d := webhook.NewDelivery(newID("dlv"), h1, submissionEvent(w.ID(), f.ID(), base), []byte(`{}`), base)
	noErr(t, r.Deliveries.AddAll(ctx, []*webhook.Delivery{d}))
	wantErr(t, r.Webhooks.Delete(ctx, other.ID(), h1.ID()), domain.ErrNotFound)
	noErr(t, r.Webhooks.Delete(ctx, w.ID(), h1.ID()))
	_, err = r.Webhooks.Get(ctx, w.ID(), h1.ID())
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Deliveries.Get(ctx, w.ID(), h1.ID(), d.ID())
	wantErr(t, err, domain.ErrNotFound)
	wantErr(t, r.Deliveries.Save(ctx, d), domain.ErrNotFound)
}

// deliveries: one per event and webhook; bounded to the workspace and the webhook; ClaimDue
// hides what it claims for the lease.
func deliveries(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	f := newForm(t, r, w.ID(), base)
	h := newWebhook(t, r, w.ID(), nil, base, "submission.created")
	e1, e2 := submissionEvent(w.ID(), f.ID(), base), submissionEvent(w.ID(), f.ID(), base)
	d1 := webhook.NewDelivery(newID("dlv"), h, e1, []byte(`{"n":1}`), base)
	d2 := webhook.NewDelivery(newID("dlv"), h, e2, []byte(`{"n":2}`), base.Add(time.Minute))
	noErr(t, r.Deliveries.AddAll(ctx, []*webhook.Delivery{d1, d2}))
	again := webhook.NewDelivery(newID("dlv"), h, e1, []byte(`{"n":3}`), base.Add(2*time.Minute))
	noErr(t, r.Deliveries.AddAll(ctx, []*webhook.Delivery{again}))
	_, err := r.Deliveries.Get(ctx, w.ID(), h.ID(), again.ID())
	wantErr(t, err, domain.ErrNotFound)

	got, err := r.Deliveries.Get(ctx, w.ID(), h.ID(), d1.ID())
	noErr(t, err)
	if got.EventID() != e1.ID || string(got.Body()) != `{"n":1}` || got.Status() != d1.Status() {
		t.Fatalf("got %s of %s: %s", got.Status(), got.EventID(), got.Body())
	}
	_, err = r.Deliveries.Get(ctx, other.ID(), h.ID(), d1.ID())
	wantErr(t, err, domain.ErrNotFound)
	list, err := r.Deliveries.List(ctx, w.ID(), h.ID(), ports.Page{Limit: 10})
	noErr(t, err)
	sameIDs(t, "deliveries", ids(list), d2.ID(), d1.ID())

	claim := func(now time.Time) []string {
		t.Helper()
		return claimed(t, r.Deliveries.ClaimDue, w.ID(), now)
	}
	if got := claim(base.Add(time.Hour)); !sameSet(got, []string{d1.ID(), d2.ID()}) {
		t.Fatalf("claimed %v", got)
	}
	sameIDs(t, "claimed within the lease", claim(base.Add(time.Hour+30*time.Second)))

	schedule, err := retry.New(time.Hour)
	noErr(t, err)
	got, err = r.Deliveries.Get(ctx, w.ID(), h.ID(), d1.ID())
	noErr(t, err)
	got.Record(webhook.Outcome{StatusCode: 200}, base.Add(time.Hour), schedule)
	noErr(t, r.Deliveries.Save(ctx, got))
	stored, err := r.Deliveries.Get(ctx, w.ID(), h.ID(), d1.ID())
	noErr(t, err)
	if stored.Status() != got.Status() || len(stored.Attempts()) != 1 || stored.NextAttemptAt() != nil {
		t.Fatalf("saved %s with %d attempts, next %v", stored.Status(), len(stored.Attempts()), stored.NextAttemptAt())
	}
	sameIDs(t, "claimed after success", claim(base.Add(3*time.Hour)), d2.ID())

	_, err = r.Deliveries.Update(ctx, w.ID(), h.ID(), d2.ID(), func(d *webhook.Delivery) (ports.Effects, error) {
		d.Halt("refused", base.Add(4*time.Hour))
		return ports.Effects{}, errChange
	})
	wantErr(t, err, errChange)
	if got, _ := r.Deliveries.Get(ctx, w.ID(), h.ID(), d2.ID()); got.Status() != d2.Status() {
		t.Fatalf("a refused change was stored: %s", got.Status())
	}
	updated, err := r.Deliveries.Update(ctx, w.ID(), h.ID(), d2.ID(), func(d *webhook.Delivery) (ports.Effects, error) {
		d.Halt("stopped", base.Add(4*time.Hour))
		return ports.Effects{}, nil
	})
	noErr(t, err)
	if got, _ := r.Deliveries.Get(ctx, w.ID(), h.ID(), d2.ID()); got.Status() != updated.Status() || got.Status() == d2.Status() {
		t.Fatalf("stored %s, update returned %s", got.Status(), updated.Status())
	}
	_, err = r.Deliveries.Update(ctx, other.ID(), h.ID(), d2.ID(), func(*webhook.Delivery) (ports.Effects, error) {
		t.Fatal("change called for a delivery of another workspace")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)
}

func newWorkflow(t *testing.T, r Repos, workspaceID, formID string, at time.Time, trigger string) *workflow.Workflow {
	t.Helper()
	w, err := workflow.New(newID("wfl"), workspaceID, workflow.Draft{Name: "W", FormID: formID, Trigger: workflow.TriggerSpec{Type: trigger},
		Actions: []workflow.ActionSpec{{Type: "send_email", Config: map[string]any{"to": "a@example.com"}}}},
		func() string { return newID("act") }, func(string, map[string]any) []domain.Violation { return nil }, workflow.DefaultLimits, at)
	noErr(t, err)
	noErr(t, r.Workflows.Create(ctx, w))
	return w
}

// workflows: bounded to the workspace; List pages newest first, optionally of one form;
// Update stores the change or nothing; Matching finds the enabled ones of the event's form
// and type, oldest first.
func workflows(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	f, g := newForm(t, r, w.ID(), base), newForm(t, r, w.ID(), base)
	w1 := newWorkflow(t, r, w.ID(), f.ID(), base, "submission.created")
	w2 := newWorkflow(t, r, w.ID(), f.ID(), base.Add(time.Minute), "submission.created")
	w3 := newWorkflow(t, r, w.ID(), g.ID(), base.Add(2*time.Minute), "submission.created")

	got, err := r.Workflows.Get(ctx, w.ID(), w1.ID())
	noErr(t, err)
	if got.FormID() != f.ID() || got.Name() != "W" || len(got.Actions()) != 1 || got.Actions()[0].Config["to"] != "a@example.com" {
		t.Fatalf("got %s of %s with %v", got.Name(), got.FormID(), got.Actions())
	}
	_, err = r.Workflows.Get(ctx, other.ID(), w1.ID())
	wantErr(t, err, domain.ErrNotFound)
	list, err := r.Workflows.List(ctx, w.ID(), nil, ports.Page{Limit: 2})
	noErr(t, err)
	sameIDs(t, "first page", ids(list), w3.ID(), w2.ID())
	list, err = r.Workflows.List(ctx, w.ID(), nil, ports.Page{Limit: 2, After: &ports.Position{CreatedAt: w2.CreatedAt(), ID: w2.ID()}})
	noErr(t, err)
	sameIDs(t, "second page", ids(list), w1.ID())
	fid := f.ID()
	list, err = r.Workflows.List(ctx, w.ID(), &fid, ports.Page{Limit: 10})
	noErr(t, err)
	sameIDs(t, "workflows of f", ids(list), w2.ID(), w1.ID())
	if n, err := r.Workflows.CountForForm(ctx, w.ID(), f.ID()); err != nil || n != 2 {
		t.Fatalf("count for f: %d, %v", n, err)
	}

	matching := func() []string {
		t.Helper()
		got, err := r.Workflows.Matching(ctx, submissionEvent(w.ID(), f.ID(), base))
		noErr(t, err)
		return ids(got)
	}
	sameIDs(t, "matching, oldest first", matching(), w1.ID(), w2.ID())
	off := false
	noop := func(string, map[string]any) []domain.Violation { return nil }
	updated, err := r.Workflows.Update(ctx, w.ID(), w1.ID(), func(wf *workflow.Workflow) (ports.Effects, error) {
		return ports.Effects{}, wf.Apply(workflow.Patch{Enabled: &off}, func() string { return newID("act") }, noop, workflow.DefaultLimits, base.Add(time.Hour))
	})
	noErr(t, err)
	if updated.Enabled() {
		t.Fatal("update returned an enabled workflow")
	}
	sameIDs(t, "matching, w1 disabled", matching(), w2.ID())
	renamed := "Refused"
	_, err = r.Workflows.Update(ctx, w.ID(), w2.ID(), func(wf *workflow.Workflow) (ports.Effects, error) {
		_ = wf.Apply(workflow.Patch{Name: &renamed}, func() string { return newID("act") }, noop, workflow.DefaultLimits, base.Add(time.Hour))
		return ports.Effects{}, errChange
	})
	wantErr(t, err, errChange)
	if got, _ := r.Workflows.Get(ctx, w.ID(), w2.ID()); got.Name() != "W" {
		t.Fatalf("a refused change was stored: %q", got.Name())
	}

	wantErr(t, r.Workflows.Delete(ctx, other.ID(), w2.ID()), domain.ErrNotFound)
	noErr(t, r.Workflows.Delete(ctx, w.ID(), w2.ID()))
	_, err = r.Workflows.Get(ctx, w.ID(), w2.ID())
	wantErr(t, err, domain.ErrNotFound)
	wantErr(t, r.Workflows.Delete(ctx, w.ID(), w2.ID()), domain.ErrNotFound)
}

// integrations: bounded to the workspace; OfType finds the newest of a type.
func integrations(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	add := func(ws string, at time.Time) *integration.Integration {
		t.Helper()
		i, err := integration.New(newID("int"), ws, integration.Draft{Type: "slack", Credentials: map[string]string{"bot_token": "xoxb-" + newID("t")}}, at)
		noErr(t, err)
		noErr(t, r.Integrations.Create(ctx, i))
		return i
	}
	i1, i2 := add(w.ID(), base), add(w.ID(), base.Add(time.Minute))
	add(other.ID(), base.Add(time.Hour))

	got, err := r.Integrations.Get(ctx, w.ID(), i1.ID())
	noErr(t, err)
	if got.Type() != "slack" || got.Credentials()["bot_token"] != i1.Credentials()["bot_token"] {
		t.Fatalf("got %s with %v", got.Type(), got.Credentials())
	}
	_, err = r.Integrations.Get(ctx, other.ID(), i1.ID())
	wantErr(t, err, domain.ErrNotFound)
	list, err := r.Integrations.List(ctx, w.ID(), ports.Page{Limit: 10})
	noErr(t, err)
	sameIDs(t, "integrations", ids(list), i2.ID(), i1.ID())
	newest, err := r.Integrations.OfType(ctx, w.ID(), "slack")
	noErr(t, err)
	if newest.ID() != i2.ID() {
		t.Fatalf("of type: %s, want %s", newest.ID(), i2.ID())
	}
	_, err = r.Integrations.OfType(ctx, w.ID(), "sheets")
	wantErr(t, err, domain.ErrNotFound)

	wantErr(t, r.Integrations.Delete(ctx, other.ID(), i2.ID()), domain.ErrNotFound)
	noErr(t, r.Integrations.Delete(ctx, w.ID(), i2.ID()))
	_, err = r.Integrations.Get(ctx, w.ID(), i2.ID())
	wantErr(t, err, domain.ErrNotFound)
	newest, err = r.Integrations.OfType(ctx, w.ID(), "slack")
	noErr(t, err)
	if newest.ID() != i1.ID() {
		t.Fatalf("of type after delete: %s", newest.ID())
	}
}

// runs: one per event and workflow (and per event, form and kind for notifications); bounded
// to the workspace; ClaimDue hides what it claims for the lease; Update stores the change or
// nothing.
func runs(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	f := newForm(t, r, w.ID(), base)
	wf := newWorkflow(t, r, w.ID(), f.ID(), base, "submission.created")
	e1, e2 := submissionEvent(w.ID(), f.ID(), base), submissionEvent(w.ID(), f.ID(), base)
	r1 := workflow.NewRun(newID("run"), wf, e1, base)
	r2 := workflow.NewRun(newID("run"), wf, e2, base.Add(time.Minute))
	email := workflow.ActionSnapshot{ActionID: "notify", Type: "send_email", Config: map[string]any{"to": "owner@example.com"}}
	n1 := workflow.StartNotificationRun(newID("run"), w.ID(), workflow.KindOwner, email, e1, base)
	noErr(t, r.Runs.AddAll(ctx, []*workflow.Run{r1, r2, n1}))
	noErr(t, r.Runs.AddAll(ctx, []*workflow.Run{
		workflow.NewRun(newID("run"), wf, e1, base.Add(2*time.Minute)),
		workflow.StartNotificationRun(newID("run"), w.ID(), workflow.KindOwner, email, e1, base.Add(2*time.Minute)),
	}))

	got, err := r.Runs.Get(ctx, w.ID(), r1.ID())
	noErr(t, err)
	if got.WorkflowID() != wf.ID() || got.EventID() != e1.ID || got.Status() != workflow.RunQueued || len(got.Actions()) != 1 {
		t.Fatalf("got %s of %s for %s with %d actions", got.Status(), got.WorkflowID(), got.EventID(), len(got.Actions()))
	}
	_, err = r.Runs.Get(ctx, other.ID(), r1.ID())
	wantErr(t, err, domain.ErrNotFound)
	list, err := r.Runs.List(ctx, w.ID(), wf.ID(), ports.Page{Limit: 10})
	noErr(t, err)
	sameIDs(t, "runs of the workflow", ids(list), r2.ID(), r1.ID())
	list, err = r.Runs.ListNotifications(ctx, w.ID(), f.ID(), ports.Page{Limit: 10})
	noErr(t, err)
	sameIDs(t, "notification runs of the form", ids(list), n1.ID())

	claim := func(now time.Time) []string {
		t.Helper()
		return claimed(t, r.Runs.ClaimDue, w.ID(), now)
	}
	if got := claim(base.Add(time.Hour)); !sameSet(got, []string{r1.ID(), r2.ID(), n1.ID()}) {
		t.Fatalf("claimed %v", got)
	}
	sameIDs(t, "claimed within the lease", claim(base.Add(time.Hour+30*time.Second)))

	later := base.Add(5 * time.Hour)
	got, err = r.Runs.Get(ctx, w.ID(), r1.ID())
	noErr(t, err)
	got.Postpone(later)
	noErr(t, r.Runs.Save(ctx, got))
	if got, _ := r.Runs.Get(ctx, w.ID(), r1.ID()); got.NextAttemptAt() == nil || !got.NextAttemptAt().Equal(later) {
		t.Fatalf("saved next attempt %v, want %v", got.NextAttemptAt(), later)
	}
	gone := workflow.NewRun(newID("run"), wf, submissionEvent(w.ID(), f.ID(), base), base)
	wantErr(t, r.Runs.Save(ctx, gone), domain.ErrNotFound)

	_, err = r.Runs.Update(ctx, w.ID(), r1.ID(), func(run *workflow.Run) (ports.Effects, error) {
		run.Postpone(later.Add(time.Hour))
		return ports.Effects{}, errChange
	})
	wantErr(t, err, errChange)
	if got, _ := r.Runs.Get(ctx, w.ID(), r1.ID()); !got.NextAttemptAt().Equal(later) {
		t.Fatalf("a refused change was stored: next attempt %v", got.NextAttemptAt())
	}
	updated, err := r.Runs.Update(ctx, w.ID(), r1.ID(), func(run *workflow.Run) (ports.Effects, error) {
		run.Postpone(later.Add(time.Hour))
		return ports.Effects{}, nil
	})
	noErr(t, err)
	if got, _ := r.Runs.Get(ctx, w.ID(), r1.ID()); !got.NextAttemptAt().Equal(later.Add(time.Hour)) || !updated.NextAttemptAt().Equal(later.Add(time.Hour)) {
		t.Fatalf("stored next attempt %v, update returned %v", got.NextAttemptAt(), updated.NextAttemptAt())
	}
	_, err = r.Runs.Update(ctx, other.ID(), r1.ID(), func(*workflow.Run) (ports.Effects, error) {
		t.Fatal("change called for a run of another workspace")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)
}

func sameSet(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !contains(got, w) {
			return false
		}
	}
	return true
}

// claimed returns the IDs of what claimDue takes at now (a minute's lease) of the workspace.
func claimed[T interface {
	ID() string
	WorkspaceID() string
}](t *testing.T, claimDue func(context.Context, ports.Claim) ([]T, error), workspaceID string, now time.Time) []string {
	t.Helper()
	got, err := claimDue(ctx, ports.Claim{Now: now, Limit: 100, Lease: time.Minute})
	noErr(t, err)
	var mine []string
	for _, it := range got {
		if it.WorkspaceID() == workspaceID {
			mine = append(mine, it.ID())
		}
	}
	return mine
}
