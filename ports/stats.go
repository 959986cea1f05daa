package ports

import (
	"context"
	"time"

	"github.com/formward/formward/domain/formstats"
)

// FormActivity counts what happens on a form's public page as it happens: cheap, in memory,
// written to a FormStatsRepository every few seconds and on shutdown.
type FormActivity interface {
	// Viewed counts one rendered public page of the form.
	Viewed(formID string, at time.Time)
	// Started counts the first interaction with a rendered page, once per page (its render
	// token's nonce); it reports whether this call counted.
	Started(formID, pageNonce string, at time.Time) bool
	// Reached counts a page of a multi-page form reached by the visit of a rendered page (its
	// render token's nonce, kept across the form's pages), at most once per visit and page.
	Reached(formID, pageNonce string, page int, at time.Time)
	// Submitted counts one stored submission, its answers and the pages it went through; it
	// keeps nothing of s after it returns (the caller recycles its lists).
	Submitted(formID string, at time.Time, s CountedSubmission)
	// Flush writes the counts held in memory.
	Flush(ctx context.Context) error
}

// CountedSubmission is what a stored submission adds to its form's counts.
type CountedSubmission struct {
	// API is true for a submission through the API, false for the public page's and
	// form-backend posts.
	API bool
	// FromPage is true for a submission from a rendered page, whose Fill (the time from the
	// page's render) is known and whose Nonce (its render token's) names the visit.
	FromPage bool
	Fill     time.Duration
	Nonce    string
	// Answers are the submission's answers as the counters keep them (formstats.Answers).
	Answers []formstats.Answer
	// Pages are the pages of a multi-page form the submission went through; none for the API.
	Pages []int
}

// FormDay is one form's counts of one UTC day.
type FormDay struct {
	FormID string
	// Day is midnight UTC.
	Day         time.Time
	Views       int64
	Starts      int64
	Submissions int64
	// FormSubmissions and APISubmissions split Submissions by where they came from.
	FormSubmissions, APISubmissions int64
	// Completions are the submissions that came from a rendered page, whose fill time is known.
	Completions int64
	// FillTimes counts completions per fill-time bucket, keyed by the bucket's upper bound in
	// seconds (formstats.Buckets).
	FillTimes map[int]int64
	// Fields count the answers of each field by field ID.
	Fields map[string]formstats.FieldCounts
	// Pages count the visits that reached each page of a multi-page form.
	Pages map[int]int64
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
