package dashboard

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain/timezone"
)

// TestDayBoundsFollowTheZone: a day of the date filter is the viewer's calendar day, 23 hours
// long on the day New York moves its clocks forward; both days are included.
func TestDayBoundsFollowTheZone(t *testing.T) {
	ny := timezone.Location("America/New_York")
	after, before, err := dayBounds("2026-03-08", "2026-03-08", ny)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC) // midnight EST
	if !after.Equal(start.Add(-time.Nanosecond)) || !before.Equal(start.Add(23*time.Hour)) {
		t.Fatalf("8 Mar 2026 in New York: after %v, before %v", after.UTC(), before.UTC())
	}
	after, before, _ = dayBounds("2026-01-15", "2026-01-15", time.UTC)
	if !after.Equal(time.Date(2026, 1, 14, 23, 59, 59, 999999999, time.UTC)) || !before.Equal(time.Date(2026, 1, 16, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("15 Jan 2026 in UTC: after %v, before %v", after, before)
	}
	if _, _, err := dayBounds("15/01/2026", "", ny); err == nil {
		t.Fatal("a malformed day was accepted")
	}
}

// TestZoneOptionsKeepAnAlias: a zone set through the API that the list does not offer is
// offered too, selected, so saving the page does not change it.
func TestZoneOptionsKeepAnAlias(t *testing.T) {
	var selected []string
	jan := time.Date(2026, 1, 15, 3, 0, 0, 0, time.UTC)
	opts := zoneOptionsAt("US/Eastern", jan)
	for _, o := range opts {
		if o.Selected {
			selected = append(selected, o.Value)
		}
	}
	if len(selected) != 1 || selected[0] != "US/Eastern" || len(opts) != len(timezone.Names())+1 {
		t.Fatalf("selected %v of %d options", selected, len(opts))
	}
	july := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for name, want := range map[string]string{"UTC": "UTC", "America/New_York": "America/New York (UTC−05:00)",
		"Asia/Kolkata": "Asia/Kolkata (UTC+05:30)", "US/Eastern": "US/Eastern (UTC−05:00)"} {
		if got := zoneLabel(name, jan); got != want {
			t.Errorf("zoneLabel(%s) in January = %q, want %q", name, got, want)
		}
	}
	if got := zoneLabel("America/New_York", july); got != "America/New York (UTC−04:00)" {
		t.Errorf("New York in July reads %q, want its summer offset", got)
	}
	for _, o := range zoneOptionsAt("", jan) {
		if o.Selected {
			t.Fatalf("nothing chosen, yet %s is selected", o.Value)
		}
	}
}

// TestPagesDrawInEachZone: pages drawn at once for viewers in different zones each show their
// own zone, and a zone's pages are made once.
func TestPagesDrawInEachZone(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{pages: pages}
	at := time.Date(2026, 1, 15, 3, 0, 0, 0, time.UTC)
	want := map[string]string{"UTC": "15 Jan 2026, 03:00 UTC", "America/New_York": "14 Jan 2026, 22:00 EST", "Asia/Kolkata": "15 Jan 2026, 08:30 IST"}
	var wg sync.WaitGroup
	for zone, text := range want {
		for range 4 {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				h.renderIn(rec, timezone.Location(zone), 200, "audit", &view{Title: "Audit", Shell: &shell{}, Data: auditData{Events: []auditRow{{At: at}}}})
				if !strings.Contains(rec.Body.String(), `title="15 Jan 2026, 03:00 UTC">`+text+`</time>`) {
					t.Errorf("%s: %s", zone, rec.Body.String())
				}
			})
		}
	}
	wg.Wait()
	first, _ := pages.in(timezone.Location("Asia/Kolkata"))
	again, _ := pages.in(timezone.Location("Asia/Kolkata"))
	if first["audit"] != again["audit"] {
		t.Fatal("a zone's pages were made twice")
	}
}
