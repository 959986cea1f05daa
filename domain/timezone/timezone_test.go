package timezone_test

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/timezone"
)

func TestParseAcceptsIANANamesAndRefusesTheRest(t *testing.T) {
	for _, name := range []string{"UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "US/Eastern"} {
		got, loc, err := timezone.Parse("time_zone", name)
		if err != nil || got != name || loc == nil || loc.String() != name {
			t.Errorf("Parse(%q) = %q, %v, %v; want the zone", name, got, loc, err)
		}
	}
	for _, name := range []string{"", "Local", "Mars/Olympus", "europe/paris ", "../../etc/passwd", "/usr/share/zoneinfo/UTC", "Europe/Paris\x00"} {
		_, _, err := timezone.Parse("time_zone", name)
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Violations[0].Field != "time_zone" || ve.Violations[0].Code != "invalid_value" {
			t.Errorf("Parse(%q) = %v; want invalid_value on time_zone", name, err)
		}
	}
}

func TestLocationFallsBackToUTC(t *testing.T) {
	if loc := timezone.Location("America/New_York"); loc.String() != "America/New_York" {
		t.Fatalf("Location(America/New_York) = %v", loc)
	}
	for _, name := range []string{"", "Nowhere/Town"} {
		if loc := timezone.Location(name); loc != time.UTC {
			t.Errorf("Location(%q) = %v, want UTC", name, loc)
		}
	}
}

func TestEveryOfferedNameLoads(t *testing.T) {
	names := timezone.Names()
	if names[0] != "UTC" || len(names) < 300 {
		t.Fatalf("Names() starts with %q and has %d names", names[0], len(names))
	}
	for _, n := range names {
		if _, _, err := timezone.Parse("time_zone", n); err != nil {
			t.Errorf("offered zone %q does not load: %v", n, err)
		}
	}
}
