package porttest

import (
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

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
