package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// SubmitPublicForm is one respondent's post to a public form (/f/{id}), as the web adapter
// read it from the request.
type SubmitPublicForm struct {
	FormID string
	// Data holds the typed answers (strings, lists, booleans), each field named by its ID or
	// its key.
	Data map[string]submission.Input
	// Uploads are the files of the post by field ID; only a multipart post has any.
	Uploads map[string][]Upload
	// Token is the render token of the page the post comes from; ProofOfWork the solved
	// challenge; Captcha the provider's response; Honeypot the hidden field people never fill.
	Token, ProofOfWork, Captcha, Honeypot string
	// IP is the respondent's address as seen by the edge; only its keyed hash is kept.
	IP        string
	UserAgent *string
	Referrer  *string
	UTM       map[string]string
	// Origin is the origin of the page the post came from, from its Origin header or else its
	// Referer; zero when the post named none, or when it is this server's own page.
	Origin origin.Origin
	// ReplyTo and Subject are a form-backend post's _replyto and _subject, kept with the
	// submission for the owner's notification.
	ReplyTo, Subject *string
	// Language is the page's language on a form with languages, one of its tags; "" otherwise.
	Language string
}

// ReasonOriginNotAllowed is the refusal (403) of a post from a site the form does not allow
// when its allowed_origins list is not empty.
const ReasonOriginNotAllowed spam.Reason = "origin_not_allowed"

// alreadySubmitted is the field error of a second response with the same email answer to a
// form that takes one per address.
const alreadySubmitted = "already_submitted"

// Upload is one uploaded file: what the client said of it and how to read it.
type Upload struct {
	Info submission.FileInfo
	Open func() (io.ReadCloser, error)
}

// SpamChecks are the spam rules that need a key or a remote service.
type SpamChecks struct {
	Tokens      ports.RenderTokens
	ProofOfWork ports.ProofOfWork
	Captcha     ports.Captcha
	// Limiter counts posts per address and form; nil: no limit.
	Limiter ports.RateLimiter
}

// SubmitPublicFormHandler is the public form's capture, in this order: the form is looked up
// and must be published and open (closing rules); the post's origin must be allowed (a post
// from an allowed origin without a render token is a form-backend post); the spam policy turns bots away; the post is validated once (answers,
// file rules, file counts); the files go to the object store under the new submission's own
// prefix, within the plan's storage; the submission is stored with its spent render token in
// one transaction, which also applies max_submissions and one_per_email_field. Whatever refuses the post after files were stored deletes them again.
type SubmitPublicFormHandler struct {
	forms       ports.FormRepository
	workspaces  ports.WorkspaceRepository
	submissions ports.SubmissionRepository
	files       ports.ObjectStore
	ids         ports.IDs
	clock       ports.Clock
	ipHasher    ports.IPHasher
	checks      SpamChecks
	limits      submission.FileLimits
	activity    ports.FormActivity
	lists       *answerLists
}

// NewSubmitPublicFormHandler builds the capture. files may be nil: posts with files are then
// refused with a field error. activity (may be nil) counts submissions and their fill times.
func NewSubmitPublicFormHandler(forms ports.FormRepository, workspaces ports.WorkspaceRepository, submissions ports.SubmissionRepository,
	files ports.ObjectStore, ids ports.IDs, clock ports.Clock, ipHasher ports.IPHasher, checks SpamChecks, limits submission.FileLimits,
	activity ports.FormActivity) SubmitPublicFormHandler {
	return SubmitPublicFormHandler{forms: forms, workspaces: workspaces, submissions: submissions, files: files, ids: ids,
		clock: clock, ipHasher: ipHasher, checks: checks, limits: limits, activity: activity, lists: newAnswerLists()}
}

// WithSpamChecks returns the capture with the spam checks of the web adapter. Without them
// every check a form asks for fails (closed, not open).
func (h SubmitPublicFormHandler) WithSpamChecks(c SpamChecks) SubmitPublicFormHandler {
	h.checks = c
	return h
}

// Handle stores the post and returns its submission. Refusals: domain.ErrNotFound (unknown
// or draft form), domain.ErrFormClosed, *spam.RateLimited, *spam.Rejection (Silent: answer
// as if stored), *domain.ValidationError; nothing of a refused post stays stored.
func (h SubmitPublicFormHandler) Handle(ctx context.Context, cmd SubmitPublicForm) (*submission.Submission, error) {
	f, err := h.forms.Find(ctx, cmd.FormID)
	if err != nil {
		return nil, err
	}
	return h.HandleFor(ctx, f, cmd)
}

// HandleFor is Handle for a post to f, the form of cmd.FormID as the caller has just read it
// (the public page's handler reads it to parse the post): it is not read again.
func (h SubmitPublicFormHandler) HandleFor(ctx context.Context, f *form.Form, cmd SubmitPublicForm) (*submission.Submission, error) {
	if f.ID() != cmd.FormID {
		return nil, domain.ErrNotFound
	}
	if f.Status() == form.StatusDraft {
		return nil, domain.ErrNotFound // a draft is as good as unknown to respondents
	}
	now := h.clock.Now()
	if err := h.open(ctx, f, now); err != nil {
		return nil, err
	}
	if err := h.Limit(f.ID(), cmd.IP, now); err != nil {
		return nil, err
	}
	backend, err := fromOtherSite(f.Settings(), cmd)
	if err != nil {
		return nil, err
	}
	spend, issued, err := h.screen(ctx, f, cmd, now, backend)
	if err != nil {
		return nil, err
	}
	if spend != nil && h.activity != nil {
		// A post of a rendered page is its visit's start when no script reported one (once
		// per page nonce, whether the post is then stored or refused for its answers).
		h.activity.Started(f.ID(), spend.Nonce, now)
	}

	input := make(map[string]submission.Input, len(cmd.Data)+len(cmd.Uploads))
	for k, v := range cmd.Data {
		input[k] = v
	}
	for fieldID, ups := range cmd.Uploads {
		if len(ups) == 0 {
			continue
		}
		if h.files == nil {
			// Without an object store a file is refused, never dropped silently.
			return nil, domain.Validation(fieldID, "upload_unavailable", "file uploads are not available on this server")
		}
		infos := make([]submission.FileInfo, len(ups))
		for i, u := range ups {
			infos[i] = u.Info
		}
		input[fieldID] = infos
	}
	draft, err := submission.Prepare(f, input, h.metadata(cmd), h.limits)
	if err := bothInvalid(err, submission.CheckReply(cmd.ReplyTo, cmd.Subject)); err != nil {
		return nil, err
	}

	id := h.ids.New(ports.PrefixSubmission)
	stored, err := h.store(ctx, f, id, draft, cmd.Uploads)
	if err != nil {
		h.discard(ctx, stored)
		return nil, err
	}
	s, err := draft.Submit(id, now)
	if err != nil {
		h.discard(ctx, stored)
		return nil, err
	}
	e := event.ForSubmission(h.ids.New(ports.PrefixEvent), event.SubmissionCreated, s, now)
	guards := ports.CaptureGuards{Token: spend, MaxSubmissions: f.SubmissionLimit()}
	emailField, onePerEmail := f.OnePerEmailField()
	if onePerEmail {
		guards.EmailKey = h.emailKey(f, s, emailField)
	}
	if err := h.submissions.AddGuarded(ctx, s, e, guards); err != nil {
		h.discard(ctx, stored)
		switch {
		case errors.Is(err, ports.ErrTokenUsed):
			// The nonce is spent with the submission, in its transaction: a replay stores nothing.
			return nil, &spam.Rejection{Reason: spam.ReasonTokenReplay}
		case errors.Is(err, ports.ErrEmailUsed):
			return nil, domain.Validation(emailField.ID, alreadySubmitted, "a response with this email address was already received")
		case errors.Is(err, domain.ErrFormClosed):
			// The form filled up while this post was on its way.
			return nil, closed(f, form.ClosedByLimit)
		}
		return nil, err
	}
	var page *ports.RenderToken
	if spend != nil {
		page = &ports.RenderToken{Issued: issued, Nonce: spend.Nonce}
	}
	countSubmission(h.activity, h.lists, f, s, page, input)
	return s, nil
}

// Open reports whether the form takes respondents' posts now: published, and not closed by
// its closing rules (its count is read only when it has max_submissions). The refusal is
// domain.ErrFormClosed, a *form.ClosedError when a closing rule closed it.
func (h SubmitPublicFormHandler) Open(ctx context.Context, f *form.Form) error {
	return h.open(ctx, f, h.clock.Now())
}

func (h SubmitPublicFormHandler) open(ctx context.Context, f *form.Form, now time.Time) error {
	if err := f.AcceptsPublicSubmissions(); err != nil {
		return err
	}
	var count int64
	if f.SubmissionLimit() > 0 {
		counts, err := h.forms.SubmissionCounts(ctx, f.WorkspaceID(), []string{f.ID()})
		if err != nil {
			return fmt.Errorf("count submissions: %w", err)
		}
		count = counts[f.ID()]
	}
	return f.AcceptsRespondents(now, count)
}

// closed is the refusal of a form closed by a closing rule, with the owner's message.
func closed(f *form.Form, reason form.ClosedReason) error {
	msg := ""
	if m := f.Settings().Closing.Message; m != nil {
		msg = *m
	}
	return &form.ClosedError{Reason: reason, Message: msg}
}

// fromOtherSite applies allowed_origins: a post without a render token from an allowed origin
// is a form-backend post (true); a post from another site that the form allows neither for
// form-backend posts nor for its embedding scripts is refused when the list is not empty.
func fromOtherSite(s form.Settings, cmd SubmitPublicForm) (bool, error) {
	if cmd.Origin.IsZero() {
		return false, nil
	}
	if s.AllowsPostsFrom(cmd.Origin) {
		return cmd.Token == "", nil
	}
	if len(s.AllowedOrigins) > 0 && !slices.Contains(s.Embed.CORSOrigins, cmd.Origin) {
		return false, &spam.Rejection{Reason: ReasonOriginNotAllowed}
	}
	return false, nil
}

// emailKey is the blind index of the submission's answer to the one-per-email field: a keyed
// hash (the server's keyed hasher, separated from IP hashes by its prefix) of the form ID and
// the trimmed, lower-cased address, so the address itself is never stored in clear. An empty
// answer (an optional field) has no key.
func (h SubmitPublicFormHandler) emailKey(f *form.Form, s *submission.Submission, fl form.Field) string {
	v, ok := s.Data()[fl.ID]
	if !ok {
		return ""
	}
	addr := form.EmailIdentity(v.String())
	if addr == "" {
		return ""
	}
	return h.ipHasher.Hash("one-per-email\x00" + f.ID() + "\x00" + addr)
}

// Limit counts one request of ip to the form (a post, or a challenge for a script's post)
// against the public rate limit, which counts an IPv4 address or an IPv6 /64.
func (h SubmitPublicFormHandler) Limit(formID, ip string, now time.Time) error {
	if h.checks.Limiter == nil {
		return nil
	}
	if wait := h.checks.Limiter.Allow(h.ipHasher.Hash(spam.Client(ip))+"|"+formID, now); wait > 0 {
		return &spam.RateLimited{RetryAfter: wait}
	}
	return nil
}

// screen applies the form's spam settings. A post that passes with a render token gets the
// token to spend with its submission (in the same transaction), so a replay is caught when
// the capture is stored, and the token's issue time (the page's render), zero without one.
func (h SubmitPublicFormHandler) screen(ctx context.Context, f *form.Form, cmd SubmitPublicForm, now time.Time, backend bool) (*ports.SpentToken, time.Time, error) {
	sp := f.Settings().Spam
	if sp.Honeypot && spam.Honeypot(cmd.Honeypot) {
		return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonHoneypot, Silent: true}
	}
	if backend {
		// A form-backend post comes from the owner's own page, not ours: there is no render
		// token to check, hence no fill time and no proof of work; the captcha still applies.
		sp.MinFillSeconds, sp.ProofOfWork = 0, false
	}
	var tok ports.RenderToken
	if sp.MinFillSeconds > 0 || sp.ProofOfWork || cmd.Token != "" {
		var err error
		err = ports.ErrTokenInvalid
		if h.checks.Tokens != nil {
			tok, err = h.checks.Tokens.Verify(f.ID(), cmd.Token, now)
		}
		switch {
		case errors.Is(err, ports.ErrTokenMissing):
			return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonTokenMissing}
		case errors.Is(err, ports.ErrTokenExpired):
			return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonTokenExpired}
		case err != nil:
			return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonTokenInvalid}
		}
		if spam.TooFast(sp.MinFillSeconds, tok.Issued, now) {
			return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonTooFast}
		}
	}
	if sp.ProofOfWork {
		err := ports.ErrPoWInvalid
		if h.checks.ProofOfWork != nil {
			err = h.checks.ProofOfWork.Verify(cmd.ProofOfWork, tok.Nonce, now)
		}
		switch {
		case errors.Is(err, ports.ErrPoWMissing):
			return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonPoWMissing}
		case err != nil:
			return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonPoWInvalid}
		}
	}
	if cp := sp.Captcha; cp != nil {
		if h.checks.Captcha == nil || h.checks.Captcha.Verify(ctx, cp, cmd.Captcha, cmd.IP) != nil {
			return nil, time.Time{}, &spam.Rejection{Reason: spam.ReasonCaptcha}
		}
	}
	if tok.Nonce == "" {
		return nil, time.Time{}, nil
	}
	return &ports.SpentToken{Nonce: tok.Nonce, ExpiresAt: tok.ExpiresAt.Add(time.Minute)}, tok.Issued, nil
}

func (h SubmitPublicFormHandler) metadata(cmd SubmitPublicForm) submission.Metadata {
	meta := submission.Metadata{Source: submission.SourceForm, UserAgent: cmd.UserAgent, Referrer: cmd.Referrer, UTM: keepUTM(cmd.UTM),
		ReplyTo: cmd.ReplyTo, Subject: cmd.Subject}
	if cmd.Language != "" { // the page chose it among the form's languages
		lang := cmd.Language
		meta.Language = &lang
	}
	if cmd.IP != "" {
		hash := h.ipHasher.Hash(cmd.IP)
		meta.IPHash = &hash
	}
	return meta
}

// store puts the draft's files under the submission's own prefix, within the plan's storage,
// and attaches their keys; it returns the keys stored so far, to discard on any failure.
func (h SubmitPublicFormHandler) store(ctx context.Context, f *form.Form, id string, draft *submission.Draft, uploads map[string][]Upload) ([]string, error) {
	pending := draft.Files()
	if len(pending) == 0 {
		return nil, nil
	}
	ws, err := h.workspaces.Get(ctx, f.WorkspaceID())
	if err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	var incoming int64
	for _, p := range pending {
		incoming += p.Info.Size
	}
	used, err := h.files.Usage(ctx, ports.FormFilesPrefix(f.WorkspaceID(), f.ID()))
	if err != nil {
		return nil, fmt.Errorf("file storage usage: %w", err)
	}
	if err := workspace.CheckStorage(ws.Plan(), used, incoming); err != nil {
		return nil, domain.Validation(pending[0].FieldID, "storage_quota_exceeded", err.Error())
	}
	prefix := ports.SubmissionFilesPrefix(f.WorkspaceID(), f.ID(), id)
	var stored []string
	keys := map[string][]string{}
	next := map[string]int{}
	for _, p := range pending {
		up := uploads[p.FieldID][next[p.FieldID]]
		next[p.FieldID]++
		key := prefix + h.ids.New("obj") + "/" + submission.FileName(p.Info.Name)
		if err := h.put(ctx, key, up, p); err != nil {
			return stored, err
		}
		stored = append(stored, key)
		keys[p.FieldID] = append(keys[p.FieldID], key)
	}
	for _, fl := range f.Fields() {
		if ks, ok := keys[fl.ID]; ok {
			if err := draft.Attach(fl.ID, ks); err != nil {
				return stored, err
			}
		}
	}
	return stored, nil
}

func (h SubmitPublicFormHandler) put(ctx context.Context, key string, up Upload, p submission.PendingFile) error {
	r, err := up.Open()
	if err != nil {
		return fmt.Errorf("upload %s: %w", p.Info.Name, err)
	}
	defer func() { _ = r.Close() }()
	if err := h.files.Put(ctx, key, r, p.Info.Size, p.ContentType); err != nil {
		return fmt.Errorf("upload %s: %w", p.Info.Name, err)
	}
	return nil
}

// discard deletes what a refused post stored; it runs even when the request's own context
// is done (best effort: a failure leaves an unreferenced object, never a broken submission).
func (h SubmitPublicFormHandler) discard(ctx context.Context, keys []string) {
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, k := range keys {
		_ = h.files.Delete(ctx, k)
	}
}

// bothInvalid joins the violations of the answers and of a form-backend post's _replyto and
// _subject, so one 422 names every broken rule; any other error of the answers wins.
func bothInvalid(answers, reply error) error {
	var a, r *domain.ValidationError
	switch {
	case reply == nil:
		return answers
	case answers == nil:
		return reply
	case errors.As(answers, &a) && errors.As(reply, &r):
		return &domain.ValidationError{Violations: append(append([]domain.Violation{}, a.Violations...), r.Violations...)}
	}
	return answers
}
