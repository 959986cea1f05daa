package workspace_test

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
)

func ptr(s string) *string { return &s }

func mustNew(t *testing.T, plan workspace.Plan) *workspace.Workspace {
	t.Helper()
	w, err := workspace.New("ws_1", "Acme", plan, t0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func change(t *testing.T, w *workspace.Workspace, s workspace.Settings, now time.Time) map[string]any {
	t.Helper()
	changed, err := w.Change(s, now)
	if err != nil {
		t.Fatalf("Change: %v", err)
	}
	return changed
}

func wantDeletion(t *testing.T, w *workspace.Workspace, want *time.Time) {
	t.Helper()
	got := w.DataDeletionAt()
	if (got == nil) != (want == nil) || (got != nil && !got.Equal(*want)) {
		t.Fatalf("data_deletion_at = %v, want %v", got, want)
	}
}

func at(t time.Time) *time.Time { return &t }

func TestChangeNameAndBillingEmail(t *testing.T) {
	w := mustNew(t, workspace.PlanBusiness)
	now := t0.Add(time.Hour)
	changed := change(t, w, workspace.Settings{Name: ptr("  Acme Inc "), BillingEmail: ptr(" Billing@Acme.example ")}, now)
	if len(changed) != 2 || changed["name"] != "Acme Inc" || changed["billing_email"] != "billing@acme.example" {
		t.Fatalf("changed = %v", changed)
	}
	if w.Name() != "Acme Inc" || w.BillingEmail() != "billing@acme.example" || !w.UpdatedAt().Equal(now) {
		t.Fatalf("workspace = %+v", w.Record())
	}
	// The same values again change nothing, not even updated_at.
	if changed := change(t, w, workspace.Settings{Name: ptr("Acme Inc"), Plan: ptr("business"), Status: ptr("active")}, now.Add(time.Hour)); len(changed) != 0 {
		t.Fatalf("no-op changed %v", changed)
	}
	if !w.UpdatedAt().Equal(now) {
		t.Fatal("a no-op moved updated_at")
	}
	// Clearing the billing email is allowed.
	if changed := change(t, w, workspace.Settings{BillingEmail: ptr("")}, now); changed["billing_email"] != "" || w.BillingEmail() != "" {
		t.Fatalf("clearing billing email: %v", changed)
	}

	_, err := w.Change(workspace.Settings{Name: ptr(" "), Plan: ptr("gold"), BillingEmail: ptr("nope"), Status: ptr("paused")}, now)
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) != 4 {
		t.Fatalf("invalid settings = %v", err)
	}
	if w.Name() != "Acme Inc" || w.Plan() != workspace.PlanBusiness || w.Status() != workspace.StatusActive {
		t.Fatal("an invalid change was partly applied")
	}
}

func TestDowngradeAndUpgrade(t *testing.T) {
	w := mustNew(t, workspace.PlanBusiness)
	down := t0.Add(24 * time.Hour)
	changed := change(t, w, workspace.Settings{Plan: ptr("free")}, down)
	if changed["plan"] != "free" || w.Plan() != workspace.PlanFree || w.RetainedPlan() != workspace.PlanBusiness {
		t.Fatalf("after downgrade: changed %v, %+v", changed, w.Record())
	}
	deadline := down.Add(workspace.GracePeriod)
	wantDeletion(t, w, &deadline)
	if w.DueForDeletion(deadline) {
		t.Fatal("an active downgraded workspace is due for deletion")
	}

	// During the 90 days the old plan's retention applies, then the new plan's.
	if r := w.EffectiveRetention(deadline.Add(-time.Millisecond)); r != workspace.PlanBusiness.Retention() {
		t.Fatalf("retention during grace = %+v", r)
	}
	if r := w.EffectiveRetention(deadline); r != (workspace.Retention{Keep: 100}) {
		t.Fatalf("retention after grace = %+v", r)
	}

	// A further downgrade keeps the first deadline and the plan that kept the most.
	change(t, w, workspace.Settings{Plan: ptr("starter")}, down.Add(time.Hour))
	if w.RetainedPlan() != workspace.PlanBusiness {
		t.Fatalf("retained plan = %s", w.RetainedPlan())
	}
	wantDeletion(t, w, &deadline)
	// An upgrade below the retained plan keeps the deletion pending.
	change(t, w, workspace.Settings{Plan: ptr("growth")}, down.Add(2*time.Hour))
	if w.RetainedPlan() != workspace.PlanBusiness || w.EffectiveRetention(down.Add(3*time.Hour)) != workspace.PlanBusiness.Retention() {
		t.Fatalf("after a partial upgrade %+v", w.Record())
	}
	wantDeletion(t, w, &deadline)
	// Back to the retained plan: nothing is pending.
	change(t, w, workspace.Settings{Plan: ptr("business")}, down.Add(3*time.Hour))
	if w.RetainedPlan() != "" {
		t.Fatalf("retained plan = %s after upgrading back", w.RetainedPlan())
	}
	wantDeletion(t, w, nil)
	if r := w.EffectiveRetention(down.Add(4 * time.Hour)); r != (workspace.Retention{}) {
		t.Fatalf("retention = %+v", r)
	}

	// Growth to starter: 24 months kept for 90 days, then 12 months; settled afterwards.
	g := mustNew(t, workspace.PlanGrowth)
	change(t, g, workspace.Settings{Plan: ptr("starter")}, down)
	if r := g.EffectiveRetention(down); r.MaxAge != 2*365*24*time.Hour {
		t.Fatalf("retention during grace = %+v", r)
	}
	if g.SettleDowngrade(deadline.Add(-time.Millisecond)) {
		t.Fatal("settled before the deadline")
	}
	if !g.SettleDowngrade(deadline) || g.RetainedPlan() != "" || g.DataDeletionAt() != nil {
		t.Fatalf("after settling %+v", g.Record())
	}
	if g.SettleDowngrade(deadline) {
		t.Fatal("settled twice")
	}
}

func TestCancelAndReactivate(t *testing.T) {
	w := mustNew(t, workspace.PlanStarter)
	cancel := t0.Add(48 * time.Hour)
	changed := change(t, w, workspace.Settings{Status: ptr("cancelled")}, cancel)
	if changed["status"] != "cancelled" || w.Status() != workspace.StatusCancelled || w.CancelledAt() == nil || !w.CancelledAt().Equal(cancel) {
		t.Fatalf("after cancel: changed %v, %+v", changed, w.Record())
	}
	deadline := cancel.Add(workspace.GracePeriod)
	wantDeletion(t, w, &deadline)
	if w.DueForDeletion(deadline.Add(-time.Millisecond)) || !w.DueForDeletion(deadline) {
		t.Fatal("due for deletion at the wrong time")
	}

	// An upgrade while cancelled does not cancel the deletion; reactivating does.
	change(t, w, workspace.Settings{Plan: ptr("business")}, cancel.Add(time.Hour))
	wantDeletion(t, w, &deadline)
	change(t, w, workspace.Settings{Status: ptr("active")}, cancel.Add(2*time.Hour))
	if w.Status() != workspace.StatusActive || w.CancelledAt() != nil || w.DueForDeletion(deadline) {
		t.Fatalf("after reactivation %+v", w.Record())
	}
	wantDeletion(t, w, nil)
}

// TestCancelAfterDowngrade: cancelling deletes everything 90 days after the cancellation, even
// when a downgrade's deadline was sooner.
func TestCancelAfterDowngrade(t *testing.T) {
	w := mustNew(t, workspace.PlanBusiness)
	down := t0
	change(t, w, workspace.Settings{Plan: ptr("free")}, down)
	cancel := down.Add(80 * 24 * time.Hour)
	change(t, w, workspace.Settings{Status: ptr("cancelled")}, cancel)
	deadline := cancel.Add(workspace.GracePeriod)
	wantDeletion(t, w, &deadline)
	if w.DueForDeletion(down.Add(workspace.GracePeriod)) {
		t.Fatal("a workspace cancelled 10 days ago is due for deletion")
	}
	if !w.DueForDeletion(deadline) {
		t.Fatal("not due 90 days after cancelling")
	}

	// Reactivating keeps the downgrade pending (never less than the new plan keeps).
	change(t, w, workspace.Settings{Status: ptr("active")}, cancel.Add(time.Hour))
	if w.RetainedPlan() != workspace.PlanBusiness || w.DataDeletionAt() == nil || w.DueForDeletion(deadline) {
		t.Fatalf("after reactivation %+v", w.Record())
	}
}

// TestDowngradeWhileCancelled: a downgrade after cancelling does not move the deletion.
func TestDowngradeWhileCancelled(t *testing.T) {
	w := mustNew(t, workspace.PlanBusiness)
	change(t, w, workspace.Settings{Status: ptr("cancelled")}, t0)
	deadline := t0.Add(workspace.GracePeriod)
	change(t, w, workspace.Settings{Plan: ptr("free")}, t0.Add(24*time.Hour))
	wantDeletion(t, w, &deadline)
	if w.EffectiveRetention(t0.Add(48*time.Hour)) != workspace.PlanBusiness.Retention() {
		t.Fatal("the downgrade's grace does not apply")
	}
}
