package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// countBy counts claimed items per key.
func countBy[T any](items []T, key func(T) string) map[string]int {
	out := map[string]int{}
	for _, it := range items {
		out[key(it)]++
	}
	return out
}

// A workspace with a backlog of due deliveries gets no more than its share of a claim, and a
// workspace whose share is already in flight gets none, so another workspace's delivery is
// claimed at once.
func TestDeliveryClaimDueFair(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		fa, fb := mustForm(t, r, a.ID(), base), mustForm(t, r, b.ID(), base)
		a1, a2 := mustWebhook(t, r, a.ID(), nil, nil, base), mustWebhook(t, r, a.ID(), nil, nil, base)
		b1 := mustWebhook(t, r, b.ID(), nil, nil, base)
		var ds []*webhook.Delivery
		for i := range 20 {
			ds = append(ds, buildDelivery(a1, fa.ID(), base.Add(time.Duration(i)*time.Millisecond), `{}`),
				buildDelivery(a2, fa.ID(), base.Add(time.Duration(i)*time.Millisecond), `{}`))
		}
		// B's delivery is the last one due: earliest-first alone would never reach it.
		late := buildDelivery(b1, fb.ID(), base.Add(time.Second), `{}`)
		ds = append(ds, late)
		// A webhook of B whose only delivery is scheduled later gives nothing, and hides nothing.
		b2 := mustWebhook(t, r, b.ID(), nil, nil, base)
		future := buildDelivery(b2, fb.ID(), base, `{}`)
		future.Postpone(base.Add(24 * time.Hour))
		ds = append(ds, future)
		noErr(t, r.deliveries.AddAll(ctx, ds))

		lease := time.Minute
		claim := func(at time.Time, inFlight ports.InFlight) []*webhook.Delivery {
			t.Helper()
			got, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: at, Limit: 16, Lease: lease, PerWorkspace: 4, PerEndpoint: 2, InFlight: inFlight})
			noErr(t, err)
			return got
		}
		byWorkspace := func(d *webhook.Delivery) string { return d.WorkspaceID() }
		byWebhook := func(d *webhook.Delivery) string { return d.WebhookID() }

		// Workspaces take turns: a claim of two takes A's first and B's only delivery.
		turn, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(2 * time.Second), Limit: 2, Lease: time.Millisecond, PerWorkspace: 4})
		noErr(t, err)
		if ws := countBy(turn, byWorkspace); len(turn) != 2 || ws[a.ID()] != 1 || ws[b.ID()] != 1 {
			t.Fatalf("a claim of two took %v, want one of A and one of B", ws)
		}

		now := base.Add(3 * time.Second)
		got := claim(now, ports.InFlight{})
		if ws := countBy(got, byWorkspace); len(got) != 5 || ws[a.ID()] != 4 || ws[b.ID()] != 1 {
			t.Fatalf("claimed %d: per workspace %v, want 4 of A and 1 of B", len(got), ws)
		}
		if ep := countBy(got, byWebhook); ep[a1.ID()] != 2 || ep[a2.ID()] != 2 {
			t.Fatalf("per webhook %v, want 2 and 2 of A", ep)
		}

		// A's share is in flight: A gets nothing more, B's new delivery is claimed.
		next := buildDelivery(b1, fb.ID(), now, `{}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{next}))
		later := now.Add(time.Millisecond)
		got = claim(later, ports.InFlight{Workspaces: map[string]int{a.ID(): 4}, Endpoints: map[string]int{a1.ID(): 2, a2.ID(): 2}})
		if len(got) != 1 || got[0].ID() != next.ID() {
			t.Fatalf("with A's share in flight claimed %d (%v), want B's delivery only", len(got), countBy(got, byWorkspace))
		}

		// After the leases ran out: one endpoint of A at its bound leaves A's share to the other.
		after := now.Add(2 * lease)
		got = claim(after, ports.InFlight{Workspaces: map[string]int{a.ID(): 2}, Endpoints: map[string]int{a1.ID(): 2}})
		if ep := countBy(got, byWebhook); ep[a1.ID()] != 0 || ep[a2.ID()] != 2 {
			t.Fatalf("with a1 at its bound claimed per webhook %v, want 2 of a2 only", ep)
		}
	})
}

// Runs are claimed fairly between workspaces too.
func TestRunClaimDueFair(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		runs := runRepo(r)
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		var rs []*workflow.Run
		for i := range 30 {
			rs = append(rs, buildRun(a.ID(), "wfl_a", "frm_a", base.Add(time.Duration(i)*time.Millisecond), ""))
		}
		late := buildRun(b.ID(), "wfl_b", "frm_b", base.Add(time.Second), "")
		rs = append(rs, late)
		noErr(t, runs.AddAll(ctx, rs))

		now := base.Add(2 * time.Second)
		got, err := runs.ClaimDue(ctx, ports.Claim{Now: now, Limit: 16, Lease: time.Minute, PerWorkspace: 4})
		noErr(t, err)
		if ws := countBy(got, func(r *workflow.Run) string { return r.WorkspaceID() }); len(got) != 5 || ws[a.ID()] != 4 || ws[b.ID()] != 1 {
			t.Fatalf("claimed %d: per workspace %v, want 4 of A and 1 of B", len(got), ws)
		}
		got, err = runs.ClaimDue(ctx, ports.Claim{Now: now.Add(2 * time.Minute), Limit: 16, Lease: time.Minute, PerWorkspace: 4,
			InFlight: ports.InFlight{Workspaces: map[string]int{a.ID(): 3}}})
		noErr(t, err)
		if ws := countBy(got, func(r *workflow.Run) string { return r.WorkspaceID() }); len(got) != 2 || ws[a.ID()] != 1 || ws[b.ID()] != 1 {
			t.Fatalf("with 3 of A in flight claimed %d: %v, want 1 of A and 1 of B", len(got), ws)
		}
	})
}
