package user_test

import (
	"testing"

	"github.com/formward/formward/domain/user"
)

// TestChooseTimeZone: a person has no zone until they choose an IANA one; an unknown name is
// refused on time_zone and keeps the zone they had; the empty choice clears it.
func TestChooseTimeZone(t *testing.T) {
	u, err := user.New("usr_1", "ada@example.org", "Ada", t0)
	if err != nil {
		t.Fatal(err)
	}
	if u.TimeZone() != "" {
		t.Fatalf("a new person's zone is %q, want none", u.TimeZone())
	}
	if err := u.ChooseTimeZone(" Europe/Paris "); err != nil || u.TimeZone() != "Europe/Paris" {
		t.Fatalf("ChooseTimeZone(Europe/Paris) = %v; zone %q", err, u.TimeZone())
	}
	for _, bad := range []string{"Local", "Paris", "Europe/Atlantis"} {
		if v := violation(t, u.ChooseTimeZone(bad)); v.Field != "time_zone" || v.Code != "invalid_value" {
			t.Fatalf("ChooseTimeZone(%q): %+v, want invalid_value on time_zone", bad, v)
		}
	}
	if u.TimeZone() != "Europe/Paris" {
		t.Fatalf("a refused zone replaced the chosen one: %q", u.TimeZone())
	}
	if err := u.ChooseTimeZone(""); err != nil || u.TimeZone() != "" {
		t.Fatalf("clearing the zone: %v; zone %q", err, u.TimeZone())
	}
}
