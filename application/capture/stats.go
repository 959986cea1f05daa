package capture

import (
	"context"
	"sync"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/formstats"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/domain/submission"
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
	// drafts, when set, adds the open drafts waiting at each page to a multi-page report.
	drafts ports.DraftRepository
}

// WithDrafts returns the query reporting open drafts per page too.
func (h GetFormStatsHandler) WithDrafts(drafts ports.DraftRepository) GetFormStatsHandler {
	h.drafts = drafts
	return h
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
			Completions: d.Completions, FormSubmissions: d.FormSubmissions, APISubmissions: d.APISubmissions,
			FillTimes: d.FillTimes, Fields: d.Fields, Pages: d.Pages}
	}
	r := formstats.NewReport(first, last, counts, f.Fields())
	if h.drafts != nil && len(r.Pages) > 0 && f.SavesDrafts() {
		saved, err := h.drafts.CountByPage(ctx, p.WorkspaceID, f.ID(), h.clock.Now())
		if err != nil {
			return formstats.Report{}, err
		}
		for i := range r.Pages {
			r.Pages[i].Saved = int64(saved[r.Pages[i].Page])
		}
	}
	return r, nil
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
	// Page is the page of a multi-page form the start came from, counted as reached; 0: none.
	Page int
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
	counted := h.activity.Started(cmd.FormID, tok.Nonce, now)
	if cmd.Page > 0 && cmd.Page <= form.DefaultLimits.MaxFields {
		h.activity.Reached(cmd.FormID, tok.Nonce, cmd.Page, now)
	}
	return counted, nil
}

// RecordFormStep is a page move of a multi-page form's visit (its Next or Back button posted
// with the page's render token), from page From to page To.
type RecordFormStep struct {
	FormID   string
	Token    string
	From, To int
}

// Step counts a page move: the visit's start (without JavaScript its first post is its first
// interaction; with it, the beacon counted it already) and the two pages as reached, each at
// most once per visit (the render token's nonce, which the visit's pages share). A token that
// is not a valid one of this form counts nothing. The page move itself is the public post the
// rate limit counts, so the start limiter does not count it again.
func (h RecordFormStartHandler) Step(_ context.Context, cmd RecordFormStep) error {
	if h.activity == nil || h.checks.Tokens == nil {
		return nil
	}
	now := h.clock.Now()
	tok, err := h.checks.Tokens.Verify(cmd.FormID, cmd.Token, now)
	if err != nil {
		return &spam.Rejection{Reason: spam.ReasonTokenInvalid}
	}
	h.activity.Started(cmd.FormID, tok.Nonce, now)
	for _, p := range []int{cmd.From, cmd.To} {
		if p > 0 && p <= form.DefaultLimits.MaxFields {
			h.activity.Reached(cmd.FormID, tok.Nonce, p, now)
		}
	}
	return nil
}

// countSubmission tells activity (when there is one) about a stored submission: its answers,
// read from the submission in memory before anything is sealed, and for one from the public
// page the pages it went through. page is the render token of the page it came from (nil:
// none, as for the API and form-backend posts); input is a public post's input (nil for the
// API), which says which pages of a multi-page form it went through.
func countSubmission(activity ports.FormActivity, lists *answerLists, f *form.Form, s *submission.Submission, page *ports.RenderToken, input map[string]submission.Input) {
	if activity == nil {
		return
	}
	buf := lists.get()
	defer lists.put(buf)
	*buf = formstats.AppendAnswers((*buf)[:0], f, s)
	c := ports.CountedSubmission{API: s.Metadata().Source == submission.SourceAPI, Answers: *buf}
	if page != nil {
		c.FromPage, c.Fill, c.Nonce = true, s.SubmittedAt().Sub(page.Issued), page.Nonce
	}
	if !c.API {
		if fields := f.Fields(); form.Paged(fields) {
			var skipped map[string]bool
			if form.HasLogic(fields) {
				skipped = submission.Skipped(f, input)
			}
			c.Pages = form.Steps(fields, skipped)
		}
	}
	activity.Submitted(f.ID(), s.SubmittedAt(), c)
}

// answerLists recycles the answer lists of counted submissions (FormActivity.Submitted keeps
// none), so that counting a submission allocates nothing on the capture path.
type answerLists struct{ pool sync.Pool }

func newAnswerLists() *answerLists {
	return &answerLists{pool: sync.Pool{New: func() any { return new([]formstats.Answer) }}}
}

// get returns an empty list; a nil *answerLists (a handler built without its constructor)
// gives a new one each time.
func (l *answerLists) get() *[]formstats.Answer {
	if l == nil {
		return new([]formstats.Answer)
	}
	return l.pool.Get().(*[]formstats.Answer)
}

func (l *answerLists) put(b *[]formstats.Answer) {
	if l == nil {
		return
	}
	clear(*b) // drop the references to the submission's answers
	l.pool.Put(b)
}
