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

// An endpoint whose adaptive limit grew above the per-endpoint share may take its workspace
// over the workspace's share, within the claim's Spare and after every share is served; an
// endpoint that did not grow may not, and a grown endpoint whose own share could not be had
// gets nothing over it.
func TestDeliveryClaimDueOverShare(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		fa, fb := mustForm(t, r, a.ID(), base), mustForm(t, r, b.ID(), base)
		grown, plain := mustWebhook(t, r, a.ID(), nil, nil, base), mustWebhook(t, r, a.ID(), nil, nil, base)
		b1 := mustWebhook(t, r, b.ID(), nil, nil, base)
		var ds []*webhook.Delivery
		for i := range 20 {
			at := base.Add(time.Duration(i) * time.Millisecond)
			ds = append(ds, buildDelivery(grown, fa.ID(), at, `{}`), buildDelivery(plain, fa.ID(), at, `{}`))
		}
		ds = append(ds, buildDelivery(b1, fb.ID(), base.Add(time.Second), `{}`))
		noErr(t, r.deliveries.AddAll(ctx, ds))

		byWorkspace := func(d *webhook.Delivery) string { return d.WorkspaceID() }
		byWebhook := func(d *webhook.Delivery) string { return d.WebhookID() }
		now := base.Add(time.Hour)
		claim := func(limits map[string]int, spare int, inFlight ports.InFlight) []*webhook.Delivery {
			t.Helper()
			// A lease of a millisecond and a clock an hour on each time: every delivery is due again.
			now = now.Add(time.Hour)
			got, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: now, Limit: 16, Lease: time.Millisecond, PerWorkspace: 4, PerEndpoint: 2,
				EndpointLimits: limits, Spare: spare, InFlight: inFlight})
			noErr(t, err)
			return got
		}

		got := claim(nil, 12, ports.InFlight{})
		if ep := countBy(got, byWebhook); len(got) != 5 || ep[grown.ID()] != 2 || ep[plain.ID()] != 2 || ep[b1.ID()] != 1 {
			t.Fatalf("without adaptive limits claimed %d: %v, want 2, 2 and B's 1", len(got), ep)
		}

		got = claim(map[string]int{grown.ID(): 8}, 12, ports.InFlight{})
		if ep := countBy(got, byWebhook); len(got) != 11 || ep[grown.ID()] != 8 || ep[plain.ID()] != 2 || ep[b1.ID()] != 1 {
			t.Fatalf("with the grown endpoint at 8 claimed %d: %v, want 8 of it, 2 of the other and B's 1", len(got), ep)
		}

		// The shares come first: B's delivery is claimed even when the spare runs out.
		got = claim(map[string]int{grown.ID(): 8}, 7, ports.InFlight{})
		if ep := countBy(got, byWebhook); len(got) != 7 || ep[grown.ID()] != 4 || ep[b1.ID()] != 1 {
			t.Fatalf("with 7 spare claimed %d: %v, want 7 in all, 4 of the grown endpoint and B's 1", len(got), ep)
		}

		got = claim(map[string]int{grown.ID(): 8}, 0, ports.InFlight{})
		if ep := countBy(got, byWebhook); len(got) != 5 || ep[grown.ID()] != 2 {
			t.Fatalf("with no spare claimed %d: %v, want the shares only", len(got), ep)
		}

		// A shrunk limit holds the endpoint below the share.
		got = claim(map[string]int{plain.ID(): 1}, 12, ports.InFlight{})
		if ep := countBy(got, byWebhook); ep[plain.ID()] != 1 || ep[grown.ID()] != 2 {
			t.Fatalf("with the other endpoint at 1 claimed %v, want 1 of it and 2 of the first", ep)
		}

		// A's share in flight at the other endpoint: the grown endpoint's share cannot be had, so
		// nothing over it either.
		got = claim(map[string]int{grown.ID(): 8}, 12, ports.InFlight{Workspaces: map[string]int{a.ID(): 4}, Endpoints: map[string]int{plain.ID(): 2}})
		if ws := countBy(got, byWorkspace); len(got) != 1 || ws[b.ID()] != 1 {
			t.Fatalf("with A's share in flight claimed %v, want B's delivery only", countBy(got, byWebhook))
		}
		// Its share in flight at the grown endpoint itself: the rest of its limit is over the share.
		got = claim(map[string]int{grown.ID(): 8}, 12, ports.InFlight{Workspaces: map[string]int{a.ID(): 4}, Endpoints: map[string]int{grown.ID(): 2, plain.ID(): 2}})
		if ep := countBy(got, byWebhook); len(got) != 7 || ep[grown.ID()] != 6 || ep[b1.ID()] != 1 {
			t.Fatalf("with the grown endpoint's share in flight claimed %d: %v, want 6 more of it and B's 1", len(got), ep)
		}
	})
}
