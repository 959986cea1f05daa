// Package retry is the retry schedule shared by webhook deliveries, workflow actions and
// account mail, and the record of one attempt.
package retry

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Schedule is the wait after each failed attempt of a delivery (and of a workflow action):
// attempt 1 is made at once, attempt n+1 after the n-th wait, and the failure after the last
// wait gives up. It is parsed once at start and passed by value; the zero value is the default.
type Schedule struct {
	delays []time.Duration
}

// defaultDelays: attempt 1 at once, then after 30 s, 5 min, 30 min and 2 h (five attempts).
// A constant, built afresh on each call, so no caller can change the default for the others.
func defaultDelays() []time.Duration {
	return []time.Duration{30 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}
}

// Default is 30s,5m,30m,2h: five attempts over about two and a half hours.
func Default() Schedule { return Schedule{} }

// AttemptLimit is the most attempts a schedule may allow (X-Service-Attempt stays 1–5 by default).
const AttemptLimit = 100

// New checks the waits: at least one, each positive, at most AttemptLimit-1.
func New(delays ...time.Duration) (Schedule, error) {
	if len(delays) == 0 {
		return Schedule{}, errors.New("retry schedule: give at least one wait, e.g. 30s,5m,30m,2h")
	}
	if len(delays) >= AttemptLimit {
		return Schedule{}, fmt.Errorf("retry schedule: %d waits, at most %d", len(delays), AttemptLimit-1)
	}
	for _, d := range delays {
		if d <= 0 {
			return Schedule{}, fmt.Errorf("retry schedule: wait %s is not positive", d)
		}
	}
	return Schedule{delays: append([]time.Duration(nil), delays...)}, nil
}

// Parse reads comma-separated positive durations such as "30s,5m,30m,2h", one per
// retry, so four waits allow five attempts.
func Parse(s string) (Schedule, error) {
	var delays []time.Duration
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			return Schedule{}, fmt.Errorf("retry schedule %q: %q is not a positive duration such as 30s", s, part)
		}
		delays = append(delays, d)
	}
	sched, err := New(delays...)
	if err != nil {
		return Schedule{}, fmt.Errorf("retry schedule %q: %w", s, err)
	}
	return sched, nil
}

func (s Schedule) waits() []time.Duration {
	if len(s.delays) == 0 {
		return defaultDelays()
	}
	return s.delays
}

// MaxAttempts is the number of attempts one cycle allows: one more than the waits.
func (s Schedule) MaxAttempts() int { return len(s.waits()) + 1 }

// After returns the wait after failed attempt n (1-based), or false when attempt n was the last.
func (s Schedule) After(n int) (time.Duration, bool) {
	w := s.waits()
	if n < 1 || n > len(w) {
		return 0, false
	}
	return w[n-1], true
}

// Delays returns a copy of the waits.
func (s Schedule) Delays() []time.Duration { return append([]time.Duration(nil), s.waits()...) }

// String gives the schedule in the form Parse reads.
func (s Schedule) String() string {
	parts := make([]string, 0, len(s.waits()))
	for _, d := range s.waits() {
		// 5m0s reads 5m, 2h0m0s reads 2h, as people write them.
		t := d.String()
		if strings.HasSuffix(t, "m0s") {
			t = strings.TrimSuffix(t, "0s")
		}
		if strings.HasSuffix(t, "h0m") {
			t = strings.TrimSuffix(t, "0m")
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, ",")
}

// Attempt is one try of a delivery or a workflow action. StatusCode is nil when no answer came;
// Error is nil on success.
type Attempt struct {
	Number     int
	At         time.Time
	StatusCode *int
	Duration   time.Duration
	Error      *string
}
