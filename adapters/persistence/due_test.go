package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// The due counts are the backlog nobody works on: pending deliveries and unfinished runs whose
// next attempt time has come, across workspaces; one scheduled later, one in flight (claimed)
// and one finished are not due.
func TestDeliveriesAndRunsDue(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		deliveriesDue := func(now time.Time) (int64, time.Time) {
			t.Helper()
			n, oldest, err := r.db.DeliveriesDue(ctx, now)
			noErr(t, err)
			return n, oldest
		}
		runsDue := func(now time.Time) int64 {
			t.Helper()
			n, err := r.db.RunsDue(ctx, now)
			noErr(t, err)
			return n
		}
		if n, oldest := deliveriesDue(base); n != 0 || !oldest.IsZero() {
			t.Fatalf("no deliveries: %d due since %v", n, oldest)
		}
		if n := runsDue(base); n != 0 {
			t.Fatalf("no runs: %d due", n)
		}

		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		fa, fb := mustForm(t, r, a.ID(), base), mustForm(t, r, b.ID(), base)
		wa, wb := mustWebhook(t, r, a.ID(), nil, nil, base), mustWebhook(t, r, b.ID(), nil, nil, base)
		lease := time.Hour

		// In flight: claimed by an engine until base+30s+lease.
		inFlight := buildDelivery(wa, fa.ID(), base.Add(30*time.Second), `{}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{inFlight}))
		claimed, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(30 * time.Second), Limit: 1, Lease: lease})
		noErr(t, err)
		if len(claimed) != 1 || claimed[0].ID() != inFlight.ID() {
			t.Fatalf("claimed %d deliveries", len(claimed))
		}

		first := buildDelivery(wa, fa.ID(), base, `{}`)
		second := buildDelivery(wb, fb.ID(), base.Add(time.Minute), `{}`)
		later := buildDelivery(wa, fa.ID(), base, `{}`)
		later.Postpone(base.Add(24 * time.Hour))
		delivered := buildDelivery(wb, fb.ID(), base, `{}`)
		delivered.Record(webhook.Outcome{StatusCode: 204}, base, retry.Default())
		failed := buildDelivery(wb, fb.ID(), base, `{}`)
		failed.Halt(webhook.ErrWebhookDisabled, base)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{first, second, later, delivered, failed}))
		if failed.Status() != webhook.StatusUndeliverable || delivered.Status() != webhook.StatusDelivered {
			t.Fatalf("set-up: %s and %s", failed.Status(), delivered.Status())
		}

		if n, oldest := deliveriesDue(base.Add(30 * time.Second)); n != 1 || !oldest.Equal(base) {
			t.Fatalf("at +30s: %d due since %v, want 1 since %v", n, oldest, base)
		}
		if n, oldest := deliveriesDue(base.Add(2 * time.Minute)); n != 2 || !oldest.Equal(base) {
			t.Fatalf("at +2m: %d due since %v, want 2 since %v (the claimed one is in flight)", n, oldest, base)
		}
		// The claim's lease ran out: the engine that held it is gone, the delivery is due again.
		if n, _ := deliveriesDue(base.Add(30*time.Second + lease)); n != 3 {
			t.Fatalf("after the lease: %d due, want 3", n)
		}
		if n, _ := deliveriesDue(base.Add(48 * time.Hour)); n != 4 {
			t.Fatalf("after the postponed time: %d due, want 4", n)
		}
		// Attempted: no longer due.
		first.Record(webhook.Outcome{StatusCode: 204}, base.Add(3*time.Minute), retry.Default())
		noErr(t, r.deliveries.Save(ctx, first))
		if n, oldest := deliveriesDue(base.Add(3 * time.Minute)); n != 1 || !oldest.Equal(base.Add(time.Minute)) {
			t.Fatalf("after the first was delivered: %d due since %v, want 1 since %v", n, oldest, base.Add(time.Minute))
		}

		runs := runRepo(r)
		runClaimed := buildRun(a.ID(), "wfl_a", fa.ID(), base, "")
		noErr(t, runs.AddAll(ctx, []*workflow.Run{runClaimed}))
		got, err := runs.ClaimDue(ctx, ports.Claim{Now: base, Limit: 1, Lease: lease})
		noErr(t, err)
		if len(got) != 1 {
			t.Fatalf("claimed %d runs", len(got))
		}
		queued := buildRun(a.ID(), "wfl_a", fa.ID(), base, "")
		retrying := buildRun(b.ID(), "wfl_b", fb.ID(), base, "")
		retrying.Record(workflow.AttemptOutcome{StatusCode: 500, Err: errors.New("500")}, base, retry.Default()) // running, retry in 30s
		finished := buildRun(b.ID(), "wfl_b", fb.ID(), base, "")
		finished.Record(workflow.AttemptOutcome{Err: errors.New("x"), Permanent: true}, base, retry.Default())
		noErr(t, runs.AddAll(ctx, []*workflow.Run{queued, retrying, finished}))
		if n := runsDue(base); n != 1 {
			t.Fatalf("at base: %d runs due, want 1 (queued)", n)
		}
		if n := runsDue(base.Add(time.Minute)); n != 2 {
			t.Fatalf("at +1m: %d runs due, want 2 (queued and the retry)", n)
		}
		if n := runsDue(base.Add(2 * lease)); n != 3 {
			t.Fatalf("after the lease: %d runs due, want 3", n)
		}
	})
}
