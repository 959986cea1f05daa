package persistence_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// runRepo is the run repository over the same database and cipher as r.
func runRepo(r repos) *persistence.RunRepository { return persistence.NewRunRepository(r.db, r.cipher) }

// buildRun starts a run of two actions of workflowID for a new event of the form.
func buildRun(workspaceID, workflowID, formID string, at time.Time, secret string) *workflow.Run {
	e := event.Event{ID: newID("evt"), Type: event.SubmissionCreated, WorkspaceID: workspaceID, FormID: formID, OccurredAt: at,
		Data: map[string]any{"submission_id": newID("sub"), "fields": map[string]any{"fld_a": "Alpha", "fld_b": []string{"x", "y"}}}}
	return buildRunFor(e, workflowID, at, secret)
}

func buildRunFor(e event.Event, workflowID string, at time.Time, secret string) *workflow.Run {
	return workflow.StartRun(newID("run"), e.WorkspaceID, workflowID, []workflow.ActionSnapshot{
		{ActionID: "act_1", Type: "send_webhook", Config: map[string]any{"url": "https://hooks.example.com/in", "secret": secret}},
		{ActionID: "act_2", Type: "automation_trigger", Config: map[string]any{"url": "https://hooks.example.com/zap", "n": 3.0}},
	}, e, at)
}

func TestRunRoundTripAndDedupe(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		runs := runRepo(r)
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		run := buildRun(a.ID(), "wfl_1", "frm_1", base, "s3cret")
		noErr(t, runs.AddAll(ctx, []*workflow.Run{run}))

		// The same event for the same workflow again, under another run ID: skipped.
		e := event.Event{ID: run.EventID(), Type: event.SubmissionCreated, WorkspaceID: a.ID(), FormID: "frm_1", OccurredAt: base,
			Data: map[string]any{"submission_id": run.SubmissionID()}}
		again := buildRunFor(e, "wfl_1", base, "other")
		other := buildRunFor(e, "wfl_2", base, "other") // another workflow: a run of its own
		noErr(t, runs.AddAll(ctx, []*workflow.Run{again, other}))
		_, err := runs.Get(ctx, a.ID(), again.ID())
		wantErr(t, err, domain.ErrNotFound)
		_, err = runs.Get(ctx, a.ID(), other.ID())
		noErr(t, err)

		got, err := runs.Get(ctx, a.ID(), run.ID())
		noErr(t, err)
		if got.WorkflowID() != "wfl_1" || got.FormID() != "frm_1" || got.SubmissionID() != run.SubmissionID() || got.EventID() != run.EventID() ||
			got.EventType() != event.SubmissionCreated || got.Status() != workflow.RunQueued || !got.CreatedAt().Equal(base) ||
			!got.OccurredAt().Equal(base) || got.FinishedAt() != nil || got.NextAttemptAt() == nil || !got.NextAttemptAt().Equal(base) {
			t.Fatalf("round trip: %+v", got)
		}
		acts := got.Actions()
		if len(acts) != 2 || acts[0].ActionID != "act_1" || acts[0].Config["secret"] != "s3cret" || acts[1].Config["n"] != 3.0 ||
			acts[1].Type != "automation_trigger" || acts[0].Status != workflow.ActionRunPending {
			t.Fatalf("actions: %+v", acts)
		}
		if got.Fields()["fld_a"] != "Alpha" {
			t.Fatalf("fields: %#v", got.Fields())
		}
		if l, ok := got.Fields()["fld_b"].([]string); !ok || len(l) != 2 {
			t.Fatalf("fields: %#v", got.Fields())
		}
		_, err = runs.Get(ctx, b.ID(), run.ID())
		wantErr(t, err, domain.ErrNotFound)

		// Attempts survive a save.
		got.Record(workflow.AttemptOutcome{StatusCode: 500, Duration: 15 * time.Millisecond, Err: errors.New("answered 500")}, base.Add(time.Second), minuteSchedule(t))
		noErr(t, runs.Save(ctx, got))
		got.Record(workflow.AttemptOutcome{StatusCode: 200}, base.Add(2*time.Second), minuteSchedule(t))
		noErr(t, runs.Save(ctx, got))
		again2, err := runs.Get(ctx, a.ID(), run.ID())
		noErr(t, err)
		acts = again2.Actions()
		if again2.Status() != workflow.RunRunning || acts[0].Status != workflow.ActionRunSucceeded || len(acts[0].Attempts) != 2 ||
			*acts[0].Attempts[0].StatusCode != 500 || *acts[0].Attempts[0].Error != "answered 500" || acts[0].Attempts[0].Duration != 15*time.Millisecond ||
			acts[0].Attempts[1].Error != nil || acts[0].Cycle != 2 || acts[1].Status != workflow.ActionRunPending || len(acts[1].Attempts) != 0 {
			t.Fatalf("after save: %s %+v", again2.Status(), acts)
		}
		again2.Record(workflow.AttemptOutcome{StatusCode: 200}, base.Add(3*time.Second), minuteSchedule(t))
		noErr(t, runs.Save(ctx, again2))
		done, err := runs.Get(ctx, a.ID(), run.ID())
		noErr(t, err)
		if done.Status() != workflow.RunSucceeded || done.FinishedAt() == nil || !done.FinishedAt().Equal(base.Add(3*time.Second)) || done.NextAttemptAt() != nil {
			t.Fatalf("finished: %s %v %v", done.Status(), done.FinishedAt(), done.NextAttemptAt())
		}

		// Save never recreates a run that is not stored.
		wantErr(t, runs.Save(ctx, buildRun(a.ID(), "wfl_1", "frm_1", base, "")), domain.ErrNotFound)
	})
}

func TestRunListNewestFirst(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		runs := runRepo(r)
		a := mustWorkspace(t, r, base)
		var want []string
		for i := 0; i < 5; i++ {
			run := buildRun(a.ID(), "wfl_list", "frm_1", base.Add(time.Duration(i%3)*time.Second), "")
			want = append(want, run.ID())
			noErr(t, runs.AddAll(ctx, []*workflow.Run{run}))
		}
		noErr(t, runs.AddAll(ctx, []*workflow.Run{buildRun(a.ID(), "wfl_other", "frm_1", base, "")}))
		all, err := runs.List(ctx, a.ID(), "wfl_list", ports.Page{Limit: 100})
		noErr(t, err)
		if len(all) != 5 {
			t.Fatalf("%d runs", len(all))
		}
		for i := 1; i < len(all); i++ {
			p, c := all[i-1], all[i]
			if p.CreatedAt().Before(c.CreatedAt()) || (p.CreatedAt().Equal(c.CreatedAt()) && p.ID() < c.ID()) {
				t.Fatalf("not newest first at %d", i)
			}
		}
		var paged []string
		var after *ports.Position
		for {
			page, err := runs.List(ctx, a.ID(), "wfl_list", ports.Page{Limit: 2, After: after})
			noErr(t, err)
			if len(page) == 0 {
				break
			}
			for _, p := range page {
				paged = append(paged, p.ID())
			}
			last := page[len(page)-1]
			after = &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}
		}
		sort.Strings(paged)
		sort.Strings(want)
		if len(paged) != 5 || paged[0] != want[0] || paged[4] != want[4] {
			t.Fatalf("paged %v want %v", paged, want)
		}
	})
}

func TestRunClaimDue(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		runs := runRepo(r)
		a := mustWorkspace(t, r, base)
		due := buildRun(a.ID(), "wfl_1", "frm_1", base, "")
		later := buildRun(a.ID(), "wfl_1", "frm_1", base, "")
		later.Postpone(base.Add(time.Hour))
		finished := buildRun(a.ID(), "wfl_1", "frm_1", base, "")
		finished.Record(workflow.AttemptOutcome{Err: errors.New("x"), Permanent: true}, base, retry.Default())
		noErr(t, runs.AddAll(ctx, []*workflow.Run{due, later, finished}))

		claimed, err := runs.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Second), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 1 || claimed[0].ID() != due.ID() || !claimed[0].NextAttemptAt().Equal(base.Add(time.Second+time.Minute)) {
			t.Fatalf("claimed %v", claimed)
		}
		// Leased: hidden until the lease runs out.
		claimed, err = runs.ClaimDue(ctx, ports.Claim{Now: base.Add(2 * time.Second), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 0 {
			t.Fatalf("claimed a leased run")
		}
		claimed, err = runs.ClaimDue(ctx, ports.Claim{Now: base.Add(2 * time.Hour), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 2 {
			t.Fatalf("after the lease and the postponement: %d", len(claimed))
		}

		// Concurrent engines claim disjoint sets.
		for i := 0; i < 20; i++ {
			noErr(t, runs.AddAll(ctx, []*workflow.Run{buildRun(a.ID(), "wfl_c", "frm_1", base, "")}))
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Go(func() {
				for {
					got, err := runs.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Minute), Limit: 3, Lease: time.Hour})
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, g := range got {
						seen[g.ID()]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 20 {
			t.Fatalf("claimed %d distinct runs, want 20", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("run %s claimed %d times", id, n)
			}
		}
	})
}

// A failed run retried through Update is stored queued and due, and ClaimDue hands it to an
// engine again; a change that fails writes nothing, and another workspace finds no run.
func TestRunUpdateRetryIsClaimedAgain(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		runs := runRepo(r)
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		run := buildRun(a.ID(), "wfl_1", "frm_1", base, "s3cret")
		run.Record(workflow.AttemptOutcome{StatusCode: 500, Err: errors.New("answered 500"), Permanent: true}, base, retry.Default())
		noErr(t, runs.AddAll(ctx, []*workflow.Run{run}))
		claimed, err := runs.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Hour), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 0 {
			t.Fatalf("a failed run was claimed: %v", claimed)
		}

		_, err = runs.Update(ctx, b.ID(), run.ID(), func(*workflow.Run) (ports.Effects, error) { t.Fatal("change called"); return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
		_, err = runs.Update(ctx, a.ID(), run.ID(), func(x *workflow.Run) (ports.Effects, error) {
			noErr(t, x.Retry(base.Add(time.Minute)))
			return ports.Effects{}, domain.ErrConflict
		})
		wantErr(t, err, domain.ErrConflict)
		got, err := runs.Get(ctx, a.ID(), run.ID())
		noErr(t, err)
		if got.Status() != workflow.RunFailed {
			t.Fatalf("a failed change was written: %s", got.Status())
		}

		at := base.Add(2 * time.Minute)
		updated, err := runs.Update(ctx, a.ID(), run.ID(), func(x *workflow.Run) (ports.Effects, error) { return ports.Effects{}, x.Retry(at) })
		noErr(t, err)
		got, err = runs.Get(ctx, a.ID(), run.ID())
		noErr(t, err)
		if updated.Status() != workflow.RunQueued || got.Status() != workflow.RunQueued || got.FinishedAt() != nil ||
			got.NextAttemptAt() == nil || !got.NextAttemptAt().Equal(at) || !got.UpdatedAt().Equal(at) {
			t.Fatalf("stored after the retry: %s finished %v next %v", got.Status(), got.FinishedAt(), got.NextAttemptAt())
		}
		acts := got.Actions()
		if acts[0].Status != workflow.ActionRunPending || acts[0].Cycle != 0 || len(acts[0].Attempts) != 1 || acts[1].Status != workflow.ActionRunPending ||
			acts[0].Config["secret"] != "s3cret" {
			t.Fatalf("actions after the retry: %+v", acts)
		}

		claimed, err = runs.ClaimDue(ctx, ports.Claim{Now: at, Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 1 || claimed[0].ID() != run.ID() || claimed[0].NextAttemptNumber() != 1 {
			t.Fatalf("claimed after the retry: %v", claimed)
		}
	})
}

func minuteSchedule(t testing.TB) retry.Schedule {
	t.Helper()
	s, err := retry.New(time.Minute)
	noErr(t, err)
	return s
}
