package webhook

import (
	"time"

	"github.com/formward/formward/domain/retry"
)

// RetrySchedule is the retry schedule of deliveries, shared with workflow actions: retry.Schedule.
type RetrySchedule = retry.Schedule

// Attempt is one try to deliver: retry.Attempt.
type Attempt = retry.Attempt

// DefaultRetrySchedule is 30s,5m,30m,2h: five attempts over about two and a half hours.
func DefaultRetrySchedule() RetrySchedule { return retry.Default() }

// MaxRetryAttempts is the most attempts a schedule may allow (X-Service-Attempt stays 1–5 by default).
const MaxRetryAttempts = retry.AttemptLimit

// NewRetrySchedule checks the waits: at least one, each positive, at most MaxRetryAttempts-1.
func NewRetrySchedule(delays ...time.Duration) (RetrySchedule, error) { return retry.New(delays...) }

// ParseRetrySchedule reads comma-separated positive durations such as "30s,5m,30m,2h", one per
// retry, so four waits allow five attempts.
func ParseRetrySchedule(s string) (RetrySchedule, error) { return retry.Parse(s) }
