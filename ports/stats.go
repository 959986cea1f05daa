package ports

import (
	"context"
	"time"
)

// FormActivity counts what happens on a form's public page as it happens: cheap, in memory,
// written to a FormStatsRepository every few seconds and on shutdown.
type FormActivity interface {
	// Viewed counts one rendered public page of the form.
	Viewed(formID string, at time.Time)
	// Started counts the first interaction with a rendered page, once per page (its render
	// token's nonce); it reports whether this call counted.
	Started(formID, pageNonce string, at time.Time) bool
	// Submitted counts one stored submission. fill is the time from the page's render to the
	// submission; fromPage is false (and fill ignored) for submissions that did not come from a
	// rendered page (the API, form-backend posts).
	Submitted(formID string, at time.Time, fill time.Duration, fromPage bool)
	// Flush writes the counts held in memory.
	Flush(ctx context.Context) error
}

// FormDay is one form's counts of one UTC day.
type FormDay struct {
	FormID string
	// Day is midnight UTC.
	Day         time.Time
	Views       int64
	Starts      int64
	Submissions int64
	// Completions are the submissions that came from a rendered page, whose fill time is known.
	Completions int64
	// FillTimes counts completions per fill-time bucket, keyed by the bucket's upper bound in
	// seconds (formstats.Buckets).
	FillTimes map[int]int64
}

// FormStatsRepository stores the daily counts of forms.
type FormStatsRepository interface {
	// Add adds the counts to the stored ones (creating days as needed). Counts of a form that
	// no longer exists are dropped.
	Add(ctx context.Context, days []FormDay) error
	// Daily returns the stored days of the form from from to to (both midnight UTC,
	// inclusive), oldest first; days without counts are absent.
	Daily(ctx context.Context, formID string, from, to time.Time) ([]FormDay, error)
}
