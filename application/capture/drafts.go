package capture

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/draft"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// A form with settings.partial on keeps each respondent's progress in a draft: the public page
// saves it at each page move (and, with JavaScript, a few seconds after a change) and shows a
// resume link, /f/{id}?resume=<token>. The token is the draft's ID and a secret of 256 random
// bits; only the secret's SHA-256 is stored, so a database read gives no link.

// ErrDraftsOff refuses a draft for a form that keeps none.
var ErrDraftsOff = domain.Validation("partial", "drafts_off", "this form does not save responses for later")

// ErrNoMail refuses to email a resume link when the server sends no mail.
var ErrNoMail = errors.New("this server sends no mail")

// maxDraftValues bounds the values one draft keeps (a checkbox group's choices count each).
const maxDraftValues = 2000

// ResumeToken is a resume link's token: the draft's ID and its secret.
func resumeToken(id string, secret []byte) string {
	return id + "." + base64.RawURLEncoding.EncodeToString(secret)
}

// parseResumeToken splits a token; ok is false for one that cannot be a draft's.
func parseResumeToken(token string) (id string, secretHash []byte, ok bool) {
	id, enc, found := strings.Cut(token, ".")
	if !found || !strings.HasPrefix(id, ports.PrefixDraft+"_") || len(id) > 64 {
		return "", nil, false
	}
	secret, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(secret) != 32 {
		return "", nil, false
	}
	h := sha256.Sum256(secret)
	return id, h[:], true
}

// findDraft loads the draft a token names and checks its secret in constant time; every
// failure to match is draft.ErrUnknown.
func findDraft(ctx context.Context, drafts ports.DraftRepository, token string) (*draft.Draft, error) {
	id, hash, ok := parseResumeToken(token)
	if !ok {
		return nil, draft.ErrUnknown
	}
	d, err := drafts.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, draft.ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(d.SecretHash(), hash) != 1 {
		return nil, draft.ErrUnknown
	}
	return d, nil
}

// draftForm loads a public form that keeps drafts and takes responses.
func draftForm(ctx context.Context, forms ports.FormRepository, formID string) (*form.Form, error) {
	f, err := forms.Find(ctx, formID)
	if err != nil {
		return nil, err
	}
	if f.Status() == form.StatusDraft {
		return nil, domain.ErrNotFound
	}
	if err := f.AcceptsPublicSubmissions(); err != nil {
		return nil, err
	}
	if !f.SavesDrafts() {
		return nil, ErrDraftsOff
	}
	return f, nil
}

// SaveDraft keeps a respondent's answers as typed (field ID to values) and the page reached.
// Resume is the token of the visit's draft, if it has one; a token that does not resume a
// draft of this form starts a new draft, so nothing typed is lost.
type SaveDraft struct {
	FormID   string
	Resume   string
	Answers  map[string][]string
	Page     int
	Language string
}

// SavedDraft is the saved draft and its resume token.
type SavedDraft struct {
	Draft *draft.Draft
	Token string
}

// SaveDraftHandler saves drafts (public: the page's visit is the caller).
type SaveDraftHandler struct {
	forms  ports.FormRepository
	drafts ports.DraftRepository
	ids    ports.IDs
	clock  ports.Clock
}

// NewSaveDraftHandler makes the command.
func NewSaveDraftHandler(forms ports.FormRepository, drafts ports.DraftRepository, ids ports.IDs, clock ports.Clock) SaveDraftHandler {
	return SaveDraftHandler{forms: forms, drafts: drafts, ids: ids, clock: clock}
}

// Handle saves the draft; ErrDraftsOff for a form without drafts.
func (h SaveDraftHandler) Handle(ctx context.Context, cmd SaveDraft) (SavedDraft, error) {
	f, err := draftForm(ctx, h.forms, cmd.FormID)
	if err != nil {
		return SavedDraft{}, err
	}
	answers, emails, err := draftAnswers(f, cmd.Answers)
	if err != nil {
		return SavedDraft{}, err
	}
	now := h.clock.Now()
	var d *draft.Draft
	token := cmd.Resume
	if token != "" {
		d, err = findDraft(ctx, h.drafts, token)
		if err == nil {
			err = d.Resumable(f.ID(), now)
		}
		if err != nil && !isResumeError(err) {
			return SavedDraft{}, err
		}
		if err != nil {
			d = nil
		}
	}
	if d == nil {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return SavedDraft{}, err
		}
		hash := sha256.Sum256(secret)
		d = draft.New(h.ids.New(ports.PrefixDraft), f.WorkspaceID(), f.ID(), hash[:], now)
		token = resumeToken(d.ID(), secret)
	}
	if err := d.Save(answers, max(cmd.Page, 0), cmd.Language, emails, now, f.Settings().Partial.TTL()); err != nil {
		return SavedDraft{}, err
	}
	if err := h.drafts.Save(ctx, d); err != nil {
		return SavedDraft{}, err
	}
	return SavedDraft{Draft: d, Token: token}, nil
}

// isResumeError reports whether err is one of the reasons a link does not resume a draft.
func isResumeError(err error) bool {
	for _, e := range []error{draft.ErrUnknown, draft.ErrExpired, draft.ErrUsed, draft.ErrOtherForm} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// draftAnswers keeps the answers to the form's fields (files are not kept: a resumed page asks
// for them again), and the addresses its email fields hold.
func draftAnswers(f *form.Form, in map[string][]string) (map[string][]string, []string, error) {
	out := make(map[string][]string, len(in))
	var emails []string
	n := 0
	for _, fl := range f.Fields() {
		vals, ok := in[fl.ID]
		if !ok || fl.Type == form.TypeFile {
			continue
		}
		n += len(vals)
		out[fl.ID] = append([]string(nil), vals...)
		if fl.Type == form.TypeEmail && len(vals) > 0 {
			if e := submission.NormalizeEmail(vals[0]); strings.Contains(e, "@") {
				emails = append(emails, e)
			}
		}
	}
	if n > maxDraftValues {
		return nil, nil, domain.Validation("answers", "too_many", "a draft keeps at most 2000 values")
	}
	return out, emails, nil
}

// ResumeDraft finds the draft a resume link names, for the form of the link.
type ResumeDraft struct {
	FormID string
	Token  string
}

// ResumeDraftHandler reads drafts back (public: the link's token is the proof).
type ResumeDraftHandler struct {
	drafts ports.DraftRepository
	clock  ports.Clock
}

// NewResumeDraftHandler makes the query.
func NewResumeDraftHandler(drafts ports.DraftRepository, clock ports.Clock) ResumeDraftHandler {
	return ResumeDraftHandler{drafts: drafts, clock: clock}
}

// Handle returns the draft with its answers, or draft.ErrUnknown (forged, or no such draft),
// ErrExpired, ErrUsed or ErrOtherForm.
func (h ResumeDraftHandler) Handle(ctx context.Context, q ResumeDraft) (*draft.Draft, error) {
	d, err := findDraft(ctx, h.drafts, q.Token)
	if err != nil {
		return nil, err
	}
	if err := d.Resumable(q.FormID, h.clock.Now()); err != nil {
		return nil, err
	}
	return d, nil
}

// EndDraft ends the draft of a visit whose response was submitted: its answers are forgotten
// and its link says it was used.
type EndDraft struct {
	FormID string
	Token  string
}

// EndDraftHandler ends drafts (public: the token is the proof).
type EndDraftHandler struct {
	drafts ports.DraftRepository
	clock  ports.Clock
}

// NewEndDraftHandler makes the command.
func NewEndDraftHandler(drafts ports.DraftRepository, clock ports.Clock) EndDraftHandler {
	return EndDraftHandler{drafts: drafts, clock: clock}
}

// Handle ends the draft; a token that names no open draft of the form is nothing to end.
func (h EndDraftHandler) Handle(ctx context.Context, cmd EndDraft) error {
	d, err := findDraft(ctx, h.drafts, cmd.Token)
	if err == nil {
		err = d.Resumable(cmd.FormID, h.clock.Now())
	}
	if isResumeError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d.Submit(h.clock.Now())
	return h.drafts.Save(ctx, d)
}

// EmailResumeLink sends a draft's resume link to the address the respondent typed.
type EmailResumeLink struct {
	FormID string
	Token  string
	Email  string
}

// EmailResumeLinkHandler mails resume links (public: the token is the proof).
type EmailResumeLinkHandler struct {
	forms     ports.FormRepository
	drafts    ports.DraftRepository
	mail      ports.MailQueue
	clock     ports.Clock
	publicURL string
	appName   string
}

// NewEmailResumeLinkHandler makes the command; mail is nil when the server sends no mail.
func NewEmailResumeLinkHandler(forms ports.FormRepository, drafts ports.DraftRepository, mail ports.MailQueue, clock ports.Clock,
	publicURL, appName string) EmailResumeLinkHandler {
	return EmailResumeLinkHandler{forms: forms, drafts: drafts, mail: mail, clock: clock, publicURL: strings.TrimRight(publicURL, "/"), appName: appName}
}

// Sends reports whether the server can mail links at all.
func (h EmailResumeLinkHandler) Sends() bool { return h.mail != nil }

// Handle queues the mail; a validation error for an address that is not one, the resume
// errors for a token that resumes nothing, draft.ErrTooManyEmails past the limit.
func (h EmailResumeLinkHandler) Handle(ctx context.Context, cmd EmailResumeLink) error {
	if h.mail == nil {
		return ErrNoMail
	}
	email := submission.NormalizeEmail(cmd.Email)
	if !submission.ValidEmail(email) {
		return domain.Validation("email", "invalid_email", "Enter an email address like name@example.com.")
	}
	f, err := draftForm(ctx, h.forms, cmd.FormID)
	if err != nil {
		return err
	}
	d, err := findDraft(ctx, h.drafts, cmd.Token)
	if err != nil {
		return err
	}
	now := h.clock.Now()
	if err := d.EmailTo(email, now); err != nil {
		return err
	}
	if err := h.drafts.Save(ctx, d); err != nil {
		return err
	}
	return h.mail.Queue(ctx, ports.Mail{To: email, Subject: "Continue your response: " + oneLine(f.Name()),
		Text: "You saved your answers to \"" + oneLine(f.Name()) + "\" to finish later.\n\n" +
			"Continue where you left off:\n\n" + ResumeURL(h.publicURL, f.ID(), cmd.Token) + "\n\n" +
			"The link works until " + d.ExpiresAt().UTC().Format("2 January 2006 15:04 MST") + ". " +
			"Anyone with it can see and change your answers, so do not share it.\n\n" + h.appName + "\n"})
}

// ResumeURL is a draft's resume link.
func ResumeURL(base, formID, token string) string {
	return strings.TrimRight(base, "/") + "/f/" + formID + "?resume=" + token
}

// oneLine keeps a form name on the subject line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ListDrafts lists a form's open drafts, without their answers.
type ListDrafts struct {
	FormID string
	Page   ports.Page
}

// ListDraftsHandler lists drafts (read scope).
type ListDraftsHandler struct {
	forms  ports.FormRepository
	drafts ports.DraftRepository
}

// NewListDraftsHandler makes the query.
func NewListDraftsHandler(forms ports.FormRepository, drafts ports.DraftRepository) ListDraftsHandler {
	return ListDraftsHandler{forms: forms, drafts: drafts}
}

// Handle returns a page of drafts and whether more follow; domain.ErrNotFound for a form not
// in the workspace.
func (h ListDraftsHandler) Handle(ctx context.Context, q ListDrafts) ([]*draft.Draft, bool, error) {
	p, _, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*draft.Draft, error) {
		return h.drafts.List(ctx, p.WorkspaceID, q.FormID, page)
	})
}

// draftSweepBatch is how many expired drafts one retention step deletes at most.
const draftSweepBatch = 1000

// SweepDrafts deletes expired drafts, batch after batch, returning how many.
func SweepDrafts(ctx context.Context, drafts ports.DraftRepository, now time.Time) (int64, error) {
	var total int64
	for {
		n, err := drafts.DeleteExpired(ctx, now, draftSweepBatch)
		total += n
		if err != nil || n < draftSweepBatch {
			return total, err
		}
	}
}
