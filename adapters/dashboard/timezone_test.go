package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/test/testkit"
)

// TestTimesInTheViewersZone: a person who keeps America/New_York on their profile sees a
// response received at 03:00 UTC on the previous day's date, in their zone, with the UTC time
// on hover; the responses date filter reads days in that zone and says so; renaming keeps the
// zone; an unknown zone comes back next to the select. Without a zone of their own, a person
// reads times in the workspace's zone, which an admin sets on the billing page.
func TestTimesInTheViewersZone(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		// 15 Jan 2026, 03:00 UTC is 14 Jan, 22:00 in New York (EST) and 04:00 in Paris (CET).
		early := time.Date(2026, 1, 15, 3, 0, 0, 0, time.UTC)
		clock := testkit.NewClock(early.Add(-time.Hour))
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			d.Clock = clock
		})
		owner := h.owner()
		ws, err := persistence.NewWorkspaceRepository(db).Oldest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sys := auth.WithPrincipal(context.Background(), auth.SystemPrincipal(ws.ID()))
		fv, err := h.app.Commands.CreateForm.Handle(sys, forms.CreateForm{Draft: form.Draft{Name: "Zones",
			Fields: []form.FieldSpec{{Label: "Name", Type: "text"}}}})
		if err != nil {
			t.Fatal(err)
		}
		f := fv.Form
		capture1 := func(at time.Time, name string) string {
			clock.Advance(at.Sub(clock.Now()))
			s, err := h.app.Commands.CaptureSubmission.Handle(sys, capture.CaptureSubmission{FormID: f.ID(),
				Source: submission.SourceAPI, Data: map[string]submission.Input{f.Fields()[0].ID: name}})
			if err != nil {
				t.Fatal(err)
			}
			return s.ID()
		}
		earlyID := capture1(early, "Early bird")            // 14 Jan in New York
		lateID := capture1(early.Add(3*time.Hour), "Later") // 06:00 UTC: 15 Jan, 01:00 in New York
		responses := "/app/forms/" + f.ID() + "/responses"
		earlyTime := `<time datetime="2026-01-15T03:00:00Z" title="15 Jan 2026, 03:00 UTC">`

		// Nobody chose a zone: UTC, as before.
		p := owner.get(responses).expect(t, http.StatusOK)
		if !strings.Contains(p.body, earlyTime+`15 Jan 2026, 03:00 UTC</time>`) || !strings.Contains(text(p.body), "in your time zone (UTC)") {
			t.Fatalf("without zones the response is not shown in UTC: %s", text(p.body))
		}

		// The profile offers the zones, none chosen yet (the browser's is preselected by script).
		p = owner.get("/app/settings/profile").expect(t, http.StatusOK)
		if !strings.Contains(p.body, `name="time_zone" data-detect-zone`) || !strings.Contains(p.body, `<option value="America/New_York">America/New York (UTC−0`) ||
			!strings.Contains(p.body, `<option value="" selected>The workspace's time zone (UTC)</option>`) {
			t.Fatalf("the profile has no time zone select with nothing chosen: %s", p.body)
		}
		p = owner.post("/app/settings/profile/time-zone", url.Values{"time_zone": {"Atlantis/Capital"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `aria-invalid="true"`) || !strings.Contains(text(p.body), "IANA time zone name") ||
			!strings.Contains(p.body, `<option value="Atlantis/Capital" selected>`) {
			t.Fatalf("an unknown zone does not come back next to the select: %s", text(p.body))
		}
		p = owner.postFollow("/app/settings/profile/time-zone", url.Values{"time_zone": {"America/New_York"}})
		if !strings.Contains(p.body, `<option value="America/New_York" selected>`) || strings.Contains(p.body, "data-detect-zone") ||
			!strings.Contains(text(p.body), "times are shown in America/New_York") {
			t.Fatalf("the chosen zone is not kept on the profile: %s", text(p.body))
		}
		// Renaming keeps the zone.
		owner.post("/app/settings/profile/name", url.Values{"name": {"Ada King"}}).redirectsTo(t, "/app/settings/profile")
		if !strings.Contains(owner.get("/app/settings/profile").expect(t, http.StatusOK).body, `<option value="America/New_York" selected>`) {
			t.Fatal("renaming lost the time zone")
		}

		p = owner.get(responses).expect(t, http.StatusOK)
		if !strings.Contains(p.body, earlyTime+`14 Jan 2026, 22:00 EST</time>`) {
			t.Fatalf("the response is not shown on 14 Jan in New York with UTC on hover: %s", p.body)
		}
		if !strings.Contains(text(p.body), "Both days are included, in your time zone (America/New_York).") {
			t.Fatalf("the date filter does not name the zone: %s", text(p.body))
		}
		// The forms list says how long ago the last response came, with both times on hover.
		if p = owner.get("/app/forms").expect(t, http.StatusOK); !strings.Contains(p.body, `title="15 Jan 2026, 01:00 EST (15 Jan 2026, 06:00 UTC)"`) {
			t.Fatalf("the last response's hover is not in New York time and UTC: %s", p.body)
		}
		p = owner.get("/app/forms/"+f.ID()+"/responses/"+earlyID).expect(t, http.StatusOK)
		if !strings.Contains(p.body, earlyTime+`14 Jan 2026, 22:00 EST</time>`) {
			t.Fatalf("the response detail is not in New York time: %s", p.body)
		}

		// Days are New York days: 14 Jan holds the early response only, 15 Jan the later one.
		for day, want := range map[string]string{"2026-01-14": earlyID, "2026-01-15": lateID} {
			rows := rowsOf(owner.get(responses+"?created_after="+day+"&created_before="+day).expect(t, http.StatusOK).body)
			if len(rows) != 1 || !strings.Contains(rows[0], want) {
				t.Fatalf("%s in New York: %d rows, want only %s", day, len(rows), want)
			}
		}
		csv := owner.get("/app/forms/"+f.ID()+"/export?format=csv&created_after=2026-01-15&created_before=2026-01-15").expect(t, http.StatusOK).body
		if !strings.Contains(csv, lateID) || strings.Contains(csv, earlyID) {
			t.Fatalf("the export of 15 Jan in New York: %s", csv)
		}

		// The workspace's zone, for those who chose none: an admin sets it on the billing page.
		p = owner.get("/app/settings/billing").expect(t, http.StatusOK)
		if !strings.Contains(p.body, `<option value="UTC" selected>UTC</option>`) {
			t.Fatalf("the billing page does not show the workspace's zone: %s", text(p.body))
		}
		p = owner.post("/app/settings/billing", url.Values{"section": {"time_zone"}, "time_zone": {"Europe/Nowhere"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(text(p.body), "IANA time zone name") {
			t.Fatalf("an unknown workspace zone is not refused next to the select: %s", text(p.body))
		}
		owner.postFollow("/app/settings/billing", url.Values{"section": {"time_zone"}, "time_zone": {"Europe/Paris"}})
		if ws, _ = persistence.NewWorkspaceRepository(db).Oldest(context.Background()); ws.TimeZone() != "Europe/Paris" {
			t.Fatalf("the workspace's zone is %q, want Europe/Paris", ws.TimeZone())
		}
		member := h.member(owner, "grace@example.org", "viewer")
		if p = member.get(responses).expect(t, http.StatusOK); !strings.Contains(p.body, earlyTime+`15 Jan 2026, 04:00 CET</time>`) {
			t.Fatalf("a member without a zone does not see the workspace's: %s", p.body)
		}
		// The owner's own zone still wins; clearing it falls back to the workspace's.
		if !strings.Contains(owner.get(responses).expect(t, http.StatusOK).body, "14 Jan 2026, 22:00 EST") {
			t.Fatal("the workspace's zone overrode the owner's own")
		}
		owner.postFollow("/app/settings/profile/time-zone", url.Values{"time_zone": {""}})
		if !strings.Contains(owner.get(responses).expect(t, http.StatusOK).body, "15 Jan 2026, 04:00 CET") {
			t.Fatal("clearing the owner's zone does not fall back to the workspace's")
		}
	})
}
