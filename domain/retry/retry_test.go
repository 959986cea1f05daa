package retry_test

import (
	"slices"
	"testing"
	"time"

	"github.com/formward/formward/domain/retry"
)

func TestParse(t *testing.T) {
	s, err := retry.Parse("30s,5m,30m,2h")
	if err != nil || !slices.Equal(s.Delays(), []time.Duration{30 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}) {
		t.Fatalf("default schedule = %v, %v", s.Delays(), err)
	}
	if s.String() != "30s,5m,30m,2h" || s.MaxAttempts() != 5 {
		t.Fatalf("String %q, MaxAttempts %d", s, s.MaxAttempts())
	}
	if d := retry.Default(); d.String() != s.String() || d.MaxAttempts() != 5 {
		t.Fatalf("default %q", d)
	}
	if s, err := retry.Parse(" 200ms , 1m30s "); err != nil || s.String() != "200ms,1m30s" || s.MaxAttempts() != 3 {
		t.Fatalf("spaced schedule = %q, %v", s, err)
	}
	for _, bad := range []string{"", ",", "soon", "1s,-1s", "0s", "30"} {
		if _, err := retry.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if _, err := retry.New(make([]time.Duration, retry.AttemptLimit)...); err == nil {
		t.Error("a schedule of too many attempts was accepted")
	}
}

func TestScheduleAfter(t *testing.T) {
	s, err := retry.New(time.Second, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]time.Duration{1: time.Second, 2: time.Minute} {
		if got, ok := s.After(n); !ok || got != want {
			t.Errorf("After(%d) = %v, %v", n, got, ok)
		}
	}
	for _, n := range []int{0, 3} {
		if _, ok := s.After(n); ok {
			t.Errorf("After(%d) gave a wait", n)
		}
	}
	// The caller's slice does not change the schedule.
	delays := []time.Duration{time.Second}
	s, _ = retry.New(delays...)
	delays[0] = time.Hour
	if got, _ := s.After(1); got != time.Second {
		t.Fatalf("schedule changed with the caller's slice: %v", got)
	}
}
