package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/draft"
	"github.com/formward/formward/domain/form"
)

// Save and resume (settings.partial). The page carries its visit's resume token in the hidden
// _resume input once a draft exists: every page move saves the answers to that draft (the
// first creates it), "Save and continue later" saves and shows the resume link, and the
// page's script saves a few seconds after a change (POST /f/{id}/draft). The final post ends
// the draft. A draft is saved only for a page drawn by this server (a render token that
// verifies), and new drafts are rate-limited per address, so nobody fills the table from a
// script.

// resumeNotices tell a respondent why a resume link brought nothing back (in the page's
// language); the form is drawn empty below.
var resumeNotices = map[error]struct {
	status int
	text   func(*resumeWords) string
}{
	draft.ErrUnknown:   {http.StatusNotFound, func(w *resumeWords) string { return w.Unknown }},
	draft.ErrOtherForm: {http.StatusNotFound, func(w *resumeWords) string { return w.OtherForm }},
	draft.ErrExpired:   {http.StatusGone, func(w *resumeWords) string { return w.Expired }},
	draft.ErrUsed:      {http.StatusGone, func(w *resumeWords) string { return w.Used }},
}

// resumePage draws the page a resume link saved, with its answers, in the language it was
// saved in (?lang= wins); or, for a link that resumes nothing, the form's first page with a
// notice saying why.
func (h *Handler) resumePage(c *gin.Context, f *form.Form, token string, utm map[string]string) {
	now := h.d.Clock.Now()
	// The answers were typed before: the fill time counts as already spent.
	issued := now.Add(-time.Duration(f.Settings().Spam.MinFillSeconds) * time.Second)
	d, err := h.d.App.Queries.ResumeDraft.Handle(c.Request.Context(), capture.ResumeDraft{FormID: f.ID(), Token: token})
	if err != nil {
		n, known := resumeNotices[resumeError(err)]
		if !known {
			h.lookupFailed(c, err)
			return
		}
		lang, _ := pickLanguage(f, c.Request, c.Query("lang"))
		h.showPage(c, n.status, f, view{utm: utm, issued: now, notice: n.text(resumeWordsFor(lang)), lang: lang})
		return
	}
	lang := d.Language()
	if q := c.Query("lang"); q != "" {
		lang = q
	}
	shown, _ := pickLanguage(f, c.Request, lang)
	h.showPage(c, http.StatusOK, f, view{values: d.Answers(), utm: utm, issued: issued, page: d.Page(), resume: token, lang: lang,
		notice: resumeWordsFor(shown).Welcome})
}

// resumeError is the resume error err is, or err.
func resumeError(err error) error {
	for e := range resumeNotices {
		if errors.Is(err, e) {
			return e
		}
	}
	return err
}

// saveDraft saves the visit's answers on page to its draft, returning the draft's resume token
// (resume when nothing could be saved). A visit without a draft gets one only when its render
// token verifies and its address is under the draft limit. A failure is logged, never shown:
// the respondent's page move goes on.
func (h *Handler) saveDraft(c *gin.Context, f *form.Form, p *post, page int, tokenOK bool) (string, error) {
	if !f.SavesDrafts() {
		return p.resume, nil
	}
	if p.resume == "" {
		if !tokenOK {
			return "", nil
		}
		if h.drafts.Allow(f.ID()+"/"+httpkit.ClientIP(c.Request, h.opts.TrustedProxies), h.d.Clock.Now()) > 0 {
			return "", nil
		}
	}
	saved, err := h.d.App.Commands.SaveDraft.Handle(c.Request.Context(), capture.SaveDraft{FormID: f.ID(), Resume: p.resume,
		Answers: p.values, Page: page, Language: p.lang})
	if err != nil {
		h.d.Logger.Warn("save draft", zap.String("form_id", f.ID()), zap.Error(err))
		return p.resume, err
	}
	return saved.Token, nil
}

// draft is the page script's save a few seconds after a change: the form's fields as the
// page would post them, urlencoded. It answers {"resume": token, "resume_url", "expires_at"}.
func (h *Handler) draft(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	f, err := h.lookup(c)
	if err != nil {
		h.jsonFail(c, err)
		return
	}
	p, err := h.readPost(c, f)
	defer p.cleanup()
	if err == nil && p.json {
		err = errBadBody
	}
	if err != nil {
		h.jsonFail(c, err)
		return
	}
	_, terr := h.tokens.Verify(f.ID(), p.cmd.Token, h.d.Clock.Now())
	if p.resume == "" {
		if terr != nil {
			h.jsonFail(c, domain.Validation("_token", "invalid_token", "the page's token is not valid: reload the page"))
			return
		}
		if wait := h.drafts.Allow(f.ID()+"/"+httpkit.ClientIP(c.Request, h.opts.TrustedProxies), h.d.Clock.Now()); wait > 0 {
			c.Header("Retry-After", itoa(int(wait.Seconds())+1))
			c.JSON(http.StatusTooManyRequests, gin.H{"code": "rate_limited", "message": "too many drafts from this address"})
			return
		}
	}
	saved, err := h.d.App.Commands.SaveDraft.Handle(c.Request.Context(), capture.SaveDraft{FormID: f.ID(), Resume: p.resume,
		Answers: p.values, Page: p.page, Language: p.lang})
	if err != nil {
		h.jsonFail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"resume": saved.Token, "resume_url": h.resumeURL(c, f.ID(), saved.Token),
		"expires_at": saved.Draft.ExpiresAt().UTC().Format(time.RFC3339)})
}

// resumeURL is a draft's resume link under the server's public URL (or this request's origin
// when none is configured).
func (h *Handler) resumeURL(c *gin.Context, formID, token string) string {
	base := h.opts.PublicURL
	if base == "" {
		scheme := "http"
		if c.Request.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.Request.Host
	}
	return capture.ResumeURL(base, formID, token)
}

// savedData is the page that shows a saved draft's resume link, in the page's language.
type savedData struct {
	Title, Link, Token, Expires, EmailAction, Email, EmailError, Sent, Lang string
	Mail, Files                                                             bool
	Theme                                                                   themeView
	W                                                                       *resumeWords
	Language                                                                *langView
}

// showSaved draws the resume link of the draft token names, with the form to email it.
func (h *Handler) showSaved(c *gin.Context, status int, f *form.Form, token string, expires time.Time, sd savedData) {
	s := f.Settings()
	lang, _ := pickLanguage(f, c.Request, sd.Lang)
	sd.W = resumeWordsFor(lang)
	if lang != "" {
		sd.Language = &langView{Tag: lang, Dir: dirOf(lang)}
	}
	sd.Title, sd.Token, sd.Link = sd.W.SavedTitle+": "+f.Name(), token, h.resumeURL(c, f.ID(), token)
	sd.Expires = expires.UTC().Format("2006-01-02")
	sd.EmailAction = "/f/" + f.ID() + "/resume-email"
	sd.Mail = h.d.App.Commands.EmailResumeLink.Sends()
	sd.Theme = themeOf(f.ID(), s.Theme)
	h.securityHeaders(c, &s)
	h.render(c, status, "saved.html", sd)
}

// Text is the saved page's explanation with the date in it; SentText the confirmation.
func (sd savedData) Text() string     { return fill(sd.W.SavedText, "date", sd.Expires) }
func (sd savedData) SentText() string { return fill(sd.W.Sent, "email", sd.Sent) }

// saveForLater is the "Save and continue later" button: the answers of every page so far are
// saved (unchecked: a half-filled page is fine) and the resume link shown.
func (h *Handler) saveForLater(c *gin.Context, f *form.Form, p *post, v view) {
	if !f.SavesDrafts() {
		h.showPage(c, http.StatusOK, f, v)
		return
	}
	saved, err := h.d.App.Commands.SaveDraft.Handle(c.Request.Context(), capture.SaveDraft{FormID: f.ID(), Resume: p.resume,
		Answers: p.values, Page: v.page, Language: p.lang})
	if err != nil {
		h.d.Logger.Warn("save draft", zap.String("form_id", f.ID()), zap.Error(err))
		lang, _ := pickLanguage(f, c.Request, p.lang)
		v.notice = resumeWordsFor(lang).SaveFailed
		h.showPage(c, httperr.Problem(err).Status, f, v)
		return
	}
	h.showSaved(c, http.StatusOK, f, saved.Token, saved.Draft.ExpiresAt(), savedData{Files: f.HasFileFields(), Lang: p.lang})
}

// resumeEmail sends the resume link to the address typed on the saved page.
func (h *Handler) resumeEmail(c *gin.Context) {
	f, err := h.lookup(c)
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxFormBytes)
	if err := c.Request.ParseForm(); err != nil {
		h.errorPage(c, nil, httperr.Problem(errBadBody))
		return
	}
	token, email := c.Request.PostFormValue("_resume"), strings.TrimSpace(c.Request.PostFormValue("email"))
	lang := c.Request.PostFormValue("_lang")
	w := resumeWordsFor(lang)
	if picked, _ := pickLanguage(f, c.Request, lang); picked != "" {
		w = resumeWordsFor(picked)
	}
	d, err := h.d.App.Queries.ResumeDraft.Handle(c.Request.Context(), capture.ResumeDraft{FormID: f.ID(), Token: token})
	if err != nil {
		if n, known := resumeNotices[resumeError(err)]; known {
			h.showPage(c, n.status, f, view{issued: h.d.Clock.Now(), notice: n.text(w), lang: lang})
			return
		}
		h.lookupFailed(c, err)
		return
	}
	if err := h.submit.Limit(f.ID()+"/resume-email", httpkit.ClientIP(c.Request, h.opts.TrustedProxies), h.d.Clock.Now()); err != nil {
		h.showSaved(c, http.StatusTooManyRequests, f, token, d.ExpiresAt(), savedData{Email: email, Lang: lang, EmailError: w.TooMany})
		return
	}
	err = h.d.App.Commands.EmailResumeLink.Handle(c.Request.Context(), capture.EmailResumeLink{FormID: f.ID(), Token: token, Email: email})
	switch {
	case err == nil:
		h.showSaved(c, http.StatusOK, f, token, d.ExpiresAt(), savedData{Sent: email, Lang: lang})
	case errors.Is(err, draft.ErrTooManyEmails):
		h.showSaved(c, http.StatusConflict, f, token, d.ExpiresAt(), savedData{Email: email, Lang: lang, EmailError: w.TooOften})
	case errors.Is(err, capture.ErrNoMail):
		h.showSaved(c, http.StatusServiceUnavailable, f, token, d.ExpiresAt(), savedData{Email: email, Lang: lang, EmailError: w.NoMail})
	default:
		b := httperr.Problem(err)
		if b.Status == http.StatusUnprocessableEntity {
			h.showSaved(c, b.Status, f, token, d.ExpiresAt(), savedData{Email: email, Lang: lang, EmailError: w.BadEmail})
			return
		}
		h.lookupFailed(c, err)
	}
}

// endDraft ends the draft of a visit whose response was stored; a failure is logged (the
// response is safe, and the draft expires on its own).
func (h *Handler) endDraft(c *gin.Context, f *form.Form, token string) {
	if token == "" {
		return
	}
	if err := h.d.App.Commands.EndDraft.Handle(c.Request.Context(), capture.EndDraft{FormID: f.ID(), Token: token}); err != nil {
		h.d.Logger.Warn("end draft", zap.String("form_id", f.ID()), zap.Error(err))
	}
}
