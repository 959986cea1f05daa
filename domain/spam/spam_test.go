package spam

import (
	"testing"
	"time"
)

func TestClientCountsAnIPv6Slash64(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.7":          "203.0.113.7",
		"::ffff:203.0.113.7":   "203.0.113.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not an address":       "not an address",
	} {
		if got := Client(in); got != want {
			t.Errorf("Client(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPureRules(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if !Honeypot(" x ") || Honeypot("  ") {
		t.Fatal("honeypot")
	}
	if !TooFast(5, now.Add(-4*time.Second), now) || TooFast(5, now.Add(-5*time.Second), now) || TooFast(0, now, now) {
		t.Fatal("fill time")
	}
}
