package webhook

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// RetrySchedule is the wait after each failed attempt of a delivery (and of a workflow action):
// attempt 1 is made at once, attempt n+1 after the n-th wait, and the failure after the last
// wait gives up. It is parsed once at start and passed by value; the zero value is the default.
type RetrySchedule struct {
	delays []time.Duration
}

// defaultRetryDelays: attempt 1 at once, then after 30 s, 5 min, 30 min and 2 h (five attempts).
// A constant, built afresh on each call, so no caller can change the default for the others.
func defaultRetryDelays() []time.Duration {
	return []time.Duration{30 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}
}

// DefaultRetrySchedule is 30s,5m,30m,2h: five attempts over about two and a half hours.
func DefaultRetrySchedule() RetrySchedule { return RetrySchedule{} }

// MaxRetryAttempts is the most attempts a schedule may allow (X-Service-Attempt stays 1–5 by default).
const MaxRetryAttempts = 100

// NewRetrySchedule checks the waits: at least one, each positive, at most MaxRetryAttempts-1.
func NewRetrySchedule(delays ...time.Duration) (RetrySchedule, error) {
	if len(delays) == 0 {
		return RetrySchedule{}, errors.New("retry schedule: give at least one wait, e.g. 30s,5m,30m,2h")
	}
	if len(delays) >= MaxRetryAttempts {
		return RetrySchedule{}, fmt.Errorf("retry schedule: %d waits, at most %d", len(delays), MaxRetryAttempts-1)
	}
	for _, d := range delays {
		if d <= 0 {
			return RetrySchedule{}, fmt.Errorf("retry schedule: wait %s is not positive", d)
		}
	}
	return RetrySchedule{delays: append([]time.Duration(nil), delays...)}, nil
}

// ParseRetrySchedule reads comma-separated positive durations such as "30s,5m,30m,2h", one per
// retry, so four waits allow five attempts.
func ParseRetrySchedule(s string) (RetrySchedule, error) {
	var delays []time.Duration
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			return RetrySchedule{}, fmt.Errorf("retry schedule %q: %q is not a positive duration such as 30s", s, part)
		}
		delays = append(delays, d)
	}
	sched, err := NewRetrySchedule(delays...)
	if err != nil {
		return RetrySchedule{}, fmt.Errorf("retry schedule %q: %w", s, err)
	}
	return sched, nil
}

func (s RetrySchedule) waits() []time.Duration {
	if len(s.delays) == 0 {
		return defaultRetryDelays()
	}
	return s.delays
}

// MaxAttempts is the number of attempts one cycle allows: one more than the waits.
func (s RetrySchedule) MaxAttempts() int { return len(s.waits()) + 1 }

// After returns the wait after failed attempt n (1-based), or false when attempt n was the last.
func (s RetrySchedule) After(n int) (time.Duration, bool) {
	w := s.waits()
	if n < 1 || n > len(w) {
		return 0, false
	}
	return w[n-1], true
}

// Delays returns a copy of the waits.
func (s RetrySchedule) Delays() []time.Duration { return append([]time.Duration(nil), s.waits()...) }

// String gives the schedule in the form ParseRetrySchedule reads.
func (s RetrySchedule) String() string {
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
