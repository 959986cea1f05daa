package workspace_test

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
)

// TestWorkspaceTimeZone: a workspace reads times in UTC until changed to an IANA zone; the
// change is reported for the audit log, an unknown name is refused on time_zone and changes
// nothing else of the same settings, and a stored workspace without a zone is in UTC.
func TestWorkspaceTimeZone(t *testing.T) {
	w, err := workspace.New("wsp_1", "Acme", workspace.PlanFree, t0)
	if err != nil {
		t.Fatal(err)
	}
	if w.TimeZone() != "UTC" {
		t.Fatalf("a new workspace's zone is %q, want UTC", w.TimeZone())
	}
	zone := "America/New_York"
	changed, err := w.Change(workspace.Settings{TimeZone: &zone}, t0.Add(time.Hour))
	if err != nil || changed["time_zone"] != zone || len(changed) != 1 || w.TimeZone() != zone || !w.UpdatedAt().Equal(t0.Add(time.Hour)) {
		t.Fatalf("Change(time_zone) = %v, %v; zone %q", changed, err, w.TimeZone())
	}
	if changed, _ = w.Change(workspace.Settings{TimeZone: &zone}, t0.Add(2*time.Hour)); len(changed) != 0 {
		t.Fatalf("setting the same zone changed %v", changed)
	}
	name := "Renamed"
	for _, bad := range []string{"", "Local", "Nowhere/Special", "UTC+2"} {
		_, err := w.Change(workspace.Settings{TimeZone: &bad, Name: &name}, t0)
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || len(ve.Violations) != 1 || ve.Violations[0].Field != "time_zone" || ve.Violations[0].Code != "invalid_value" {
			t.Fatalf("time_zone %q: %v, want invalid_value on time_zone", bad, err)
		}
	}
	if w.TimeZone() != zone || w.Name() != "Acme" {
		t.Fatalf("refused changes changed the workspace: zone %q, name %q", w.TimeZone(), w.Name())
	}
	if r := w.Record(); r.TimeZone != zone || workspace.UnmarshalFromDatabase(r).TimeZone() != zone {
		t.Fatalf("the zone does not survive storage: %+v", r)
	}
	if z := workspace.UnmarshalFromDatabase(workspace.Record{ID: "wsp_2", Name: "Old", Plan: workspace.PlanFree, CreatedAt: t0}).TimeZone(); z != "UTC" {
		t.Fatalf("a stored workspace without a zone reads %q, want UTC", z)
	}
}
