package capture

import (
	"context"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/formstats"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/ports"
)

// MaxStatsDays bounds the period of a form's stats report.
const MaxStatsDays = 366

// GetFormStats asks how a form's public page performed over the last Days UTC days, today
// included.
type GetFormStats struct {
	FormID string
	Days   int
}

// GetFormStatsHandler reads the daily counts of a form.
type GetFormStatsHandler struct {
	forms    ports.FormRepository
	stats    ports.FormStatsRepository
	activity ports.FormActivity
	clock    ports.Clock
}

// NewGetFormStatsHandler makes the query; activity may be nil (nothing counted in memory).
func NewGetFormStatsHandler(forms ports.FormRepository, stats ports.FormStatsRepository, activity ports.FormActivity, clock ports.Clock) GetFormStatsHandler {
	return GetFormStatsHandler{forms: forms, stats: stats, activity: activity, clock: clock}
}

// Handle returns the report; the counts this process holds in memory are written first, so a
// report includes them (other processes' reach storage within their flush interval).
func (h GetFormStatsHandler) Handle(ctx context.Context, q GetFormStats) (formstats.Report, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return formstats.Report{}, err
	}
	if q.Days < 1 || q.Days > MaxStatsDays {
		return formstats.Report{}, domain.Validation("days", "invalid_value", "days must be an integer from 1 to 366")
	}
	f, err := h.forms.Get(ctx, p.WorkspaceID, q.FormID)
	if err != nil {
		return formstats.Report{}, err
	}
	if h.activity != nil {
		if err := h.activity.Flush(ctx); err != nil {
			return formstats.Report{}, err
		}
	}
	last := formstats.Day(h.clock.Now())
	first := last.AddDate(0, 0, 1-q.Days)
	days, err := h.stats.Daily(ctx, f.ID(), first, last)
	if err != nil {
		return formstats.Report{}, err
	}
	counts := make([]formstats.Counts, len(days))
	for i, d := range days {
		counts[i] = formstats.Counts{Day: d.Day, Views: d.Views, Starts: d.Starts, Submissions: d.Submissions,
			Completions: d.Completions, FillTimes: d.FillTimes}
	}
	return formstats.NewReport(first, last, counts), nil
}

// RecordFormView counts one rendered public page of a form.
type RecordFormView struct{ FormID string }

// RecordFormViewHandler counts views in memory (no storage on the page's path).
type RecordFormViewHandler struct {
	activity ports.FormActivity
	clock    ports.Clock
}

// NewRecordFormViewHandler makes the command; activity may be nil (nothing is counted).
func NewRecordFormViewHandler(activity ports.FormActivity, clock ports.Clock) RecordFormViewHandler {
	return RecordFormViewHandler{activity: activity, clock: clock}
}

// Handle counts the view. It needs no principal: the public page is anyone's.
func (h RecordFormViewHandler) Handle(_ context.Context, cmd RecordFormView) error {
	if h.activity != nil {
		h.activity.Viewed(cmd.FormID, h.clock.Now())
	}
	return nil
}

// RecordFormStart is the public page's report of a respondent's first interaction, naming the
// page by its render token.
type RecordFormStart struct {
	FormID string
	Token  string
	// IP is the respondent's address as seen by the edge: it is only counted by the rate limit
	// (as its keyed hash, in memory), never stored.
	IP string
}

// RecordFormStartHandler counts starts: at most one per rendered page (the render token's
// nonce), only with a valid token of this form, under the public rate limit.
type RecordFormStartHandler struct {
	activity ports.FormActivity
	clock    ports.Clock
	ipHasher ports.IPHasher
	checks   SpamChecks
}

// NewRecordFormStartHandler makes the command; activity may be nil (nothing is counted).
func NewRecordFormStartHandler(activity ports.FormActivity, clock ports.Clock, ipHasher ports.IPHasher) RecordFormStartHandler {
	return RecordFormStartHandler{activity: activity, clock: clock, ipHasher: ipHasher}
}

// WithSpamChecks returns the command with the web adapter's render tokens and rate limiter.
// Without tokens no start is counted.
func (h RecordFormStartHandler) WithSpamChecks(c SpamChecks) RecordFormStartHandler {
	h.checks = c
	return h
}

// Handle counts the start and reports whether it counted (false: this page's start was
// counted already). Refusals: *spam.RateLimited, *spam.Rejection (no valid token).
func (h RecordFormStartHandler) Handle(_ context.Context, cmd RecordFormStart) (bool, error) {
	now := h.clock.Now()
	if h.checks.Limiter != nil {
		if wait := h.checks.Limiter.Allow("start|"+h.ipHasher.Hash(spam.Client(cmd.IP))+"|"+cmd.FormID, now); wait > 0 {
			return false, &spam.RateLimited{RetryAfter: wait}
		}
	}
	if h.checks.Tokens == nil {
		return false, &spam.Rejection{Reason: spam.ReasonTokenInvalid}
	}
	tok, err := h.checks.Tokens.Verify(cmd.FormID, cmd.Token, now)
	if err != nil {
		return false, &spam.Rejection{Reason: spam.ReasonTokenInvalid}
	}
	if h.activity == nil {
		return false, nil
	}
	return h.activity.Started(cmd.FormID, tok.Nonce, now), nil
}

// countSubmission tells activity (when there is one) about a stored submission; issued is the
// render time of the page it came from, zero when it came from none.
func countSubmission(activity ports.FormActivity, formID string, at, issued time.Time) {
	if activity == nil {
		return
	}
	activity.Submitted(formID, at, at.Sub(issued), !issued.IsZero())
}
