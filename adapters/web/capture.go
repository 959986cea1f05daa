package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/domain/submission"
)

// post is one respondent post, whatever its content type, read into the use case's command.
type post struct {
	json    bool
	cmd     capture.SubmitPublicForm
	values  map[string][]string // as typed, to draw the page again
	page    int                 // the page of a multi-page form it was sent from (_page)
	lang    string              // the page's language (_lang) on a form with languages, as posted
	next    string              // a form-backend post's _next, as sent
	resume  string              // the visit's resume token (_resume), when it has a draft
	cleanup func()
}

// files reports whether the post carried a file: a page drawn again cannot show it.
func (p *post) files() bool {
	for _, ups := range p.cmd.Uploads {
		if len(ups) > 0 {
			return true
		}
	}
	return false
}

var errBadBody = httperr.BadRequest("The response could not be read. Please try again.")

// readPost maps the body to field IDs: checkbox groups become lists, a single checkbox "true"
// or "false"; everything else is one string; files go to the command's uploads.
func (h *Handler) readPost(c *gin.Context, f *form.Form) (*post, error) {
	ct, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	p := &post{values: map[string][]string{}, cleanup: func() {}, cmd: capture.SubmitPublicForm{
		FormID: f.ID(), Data: map[string]submission.Input{}, UTM: map[string]string{}}}
	var pf url.Values
	switch ct {
	case "application/json":
		p.json = true
		return p, readJSON(c, p)
	case "multipart/form-data":
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxMultipartBytes)
		mp, err := readMultipart(c.Request, h.opts.MaxFilesPerPost, h.opts.TempDir, h.d.Logger)
		if mp != nil {
			p.cleanup = mp.cleanup
		}
		if errors.Is(err, errTooManyFiles) {
			// Nothing is stored: reading stops at the first file over the limit.
			return p, domain.Validation("files", "too_many_files",
				"at most "+strconv.Itoa(h.opts.MaxFilesPerPost)+" files can be sent with one response")
		}
		if err != nil {
			return p, err
		}
		pf = mp.values
		p.cmd.Uploads = map[string][]capture.Upload{}
		for _, sp := range mp.files {
			name := sp.field
			if fl, ok := fieldNamed(f, name); ok {
				name = fl.ID
			}
			p.cmd.Uploads[name] = append(p.cmd.Uploads[name], capture.Upload{
				Info: submission.FileInfo{Name: sp.name, Size: sp.size, Declared: sp.contentType, Sniffed: sp.sniffed},
				Open: sp.open,
			})
		}
	case "application/x-www-form-urlencoded", "":
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxFormBytes)
		if err := c.Request.ParseForm(); err != nil {
			return p, readFailed(err)
		}
		pf = c.Request.PostForm
	default:
		return p, errBadBody
	}
	cmd := &p.cmd
	cmd.Token, cmd.ProofOfWork, cmd.Honeypot = pf.Get("_token"), pf.Get("altcha"), pf.Get(honeypotName)
	if cmd.Honeypot == "" {
		cmd.Honeypot = pf.Get(backendHoneypot)
	}
	readBackendFields(pf, p)
	p.page, _ = strconv.Atoi(pf.Get("_page"))
	p.resume = pf.Get("_resume")
	p.lang = pf.Get("_lang")
	if cp := f.Settings().Spam.Captcha; cp != nil {
		cmd.Captcha = pf.Get(h.opts.Captchas[cp.Provider].Response)
	}
	for _, k := range submission.UTMKeys {
		if v := pf.Get("_" + k); v != "" {
			cmd.UTM[k] = v
		}
	}
	p.values, cmd.Data = answers(f, pf)
	return p, nil
}

// answers maps a browser post's values to the form's fields (named by ID or key): values as
// typed, to draw the page again, and the answers the domain checks. Checkbox groups become
// lists, a single checkbox "true" or "false"; everything else is one string. Typed text in a
// file field is passed on, and refused.
func answers(f *form.Form, pf url.Values) (values map[string][]string, data map[string]submission.Input) {
	values, data = map[string][]string{}, map[string]submission.Input{}
	posted := map[string][]string{}
	for name, vals := range pf {
		if fl, ok := fieldNamed(f, name); ok {
			posted[fl.ID] = append(posted[fl.ID], vals...)
		}
	}
	for _, fl := range f.Fields() {
		vals := posted[fl.ID]
		switch {
		case fl.Type == form.TypeFile:
			// A file field takes uploads; typed text there is passed on, and refused.
			if len(vals) > 0 && strings.TrimSpace(strings.Join(vals, "")) != "" {
				data[fl.ID] = append([]string(nil), vals...)
			}
		case fl.Multiple():
			values[fl.ID] = vals
			if len(vals) > 0 {
				data[fl.ID] = append([]string(nil), vals...)
			}
		case fl.Type == form.TypeCheckbox:
			on := len(vals) > 0 && vals[0] != "" && vals[0] != "false"
			data[fl.ID] = strconv.FormatBool(on)
			values[fl.ID] = []string{strconv.FormatBool(on)}
		default:
			if len(vals) > 0 {
				data[fl.ID] = vals[0]
				values[fl.ID] = vals[:1]
			}
		}
	}
	return values, data
}

// readJSON reads a script's post: {"data": {...}, "token", "altcha", "captcha", "website", "utm"}.
// data names each field by its ID or its key, as the API's does.
func readJSON(c *gin.Context, p *post) error {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxFormBytes)
	raw, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return readFailed(err)
	}
	var body struct {
		Data     map[string]json.RawMessage `json:"data"`
		Token    string                     `json:"token"`
		Altcha   string                     `json:"altcha"`
		Captcha  string                     `json:"captcha"`
		Honeypot string                     `json:"website"`
		UTM      map[string]string          `json:"utm"`
	}
	if httpkit.CheckUTF8(raw) != nil {
		return errBadBody // not valid UTF-8: 400, as the API answers
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Data == nil {
		return errBadBody
	}
	cmd := &p.cmd
	cmd.Token, cmd.ProofOfWork, cmd.Captcha, cmd.Honeypot = body.Token, body.Altcha, body.Captcha, body.Honeypot
	for k, v := range body.UTM {
		cmd.UTM[k] = v
	}
	for k, v := range body.Data {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return errBadBody
		}
		cmd.Data[k] = httpkit.ToInput(x) // named by field ID or key: the capture resolves it
	}
	return nil
}

// utmFromReferrer reads the campaign parameters of the page the post came from.
func utmFromReferrer(ref string, into map[string]string) {
	u, err := url.Parse(ref)
	if err != nil {
		return
	}
	q := u.Query()
	for _, k := range submission.UTMKeys {
		if _, ok := into[k]; !ok {
			if v := q.Get(k); v != "" {
				into[k] = v
			}
		}
	}
}

// capture reads a respondent's post and hands it to the public capture use case, then thanks
// (or redirects), or answers its refusal.
func (h *Handler) capture(c *gin.Context) {
	isJSON := strings.HasPrefix(c.GetHeader("Content-Type"), "application/json") || acceptsJSON(c)
	f, err := h.lookup(c)
	if err != nil {
		h.refuse(c, nil, &post{json: isJSON}, err)
		return
	}
	if c.GetHeader("Origin") != "" {
		cors(c, f.Settings())
	}
	p, err := h.readPost(c, f)
	defer p.cleanup()
	p.json = p.json || isJSON
	if err != nil {
		h.refuse(c, f, p, err)
		return
	}
	cmd := p.cmd
	cmd.Origin = postOrigin(c.Request)
	cmd.IP = httpkit.ClientIP(c.Request, h.opts.TrustedProxies)
	if v := c.GetHeader("User-Agent"); v != "" {
		cmd.UserAgent = &v
	}
	if ref := c.GetHeader("Referer"); ref != "" {
		cmd.Referrer = &ref
		utmFromReferrer(ref, cmd.UTM)
	}
	cmd.Language, _ = pickLanguage(f, c.Request, p.lang)
	// The form read above: the capture does not read it again.
	sub, err := h.submit.HandleFor(c.Request.Context(), f, cmd)
	if err != nil {
		h.refuse(c, f, p, err)
		return
	}
	h.endDraft(c, f, p.resume)
	if next, ok := f.Settings().NextURL(p.next); ok && !p.json && !cmd.Origin.IsZero() {
		// A form-backend post goes back to the owner's site, where _next says.
		c.Redirect(http.StatusSeeOther, next)
		return
	}
	if !p.json && f.ThankYouRecalls() {
		// Only a thank-you message with {{…}} reads the stored answers and score: every
		// other post skips both the context's map and the copy of the answers.
		c.Set(thankedKey, sub)
	}
	h.thank(c, f, p.json, sub.ID(), cmd.Language)
}

// fakeSubmissionID answers a silently refused post (the honeypot) as if it had been stored.
var fakeSubmissionID = "sub_" + strings.Repeat("0", 26)

// refuse answers a refused post through the shared error table: the API's error body for a
// script's JSON post; for a browser, the form again with its errors (422) or a message page.
// f is nil when the form could not be read.
func (h *Handler) refuse(c *gin.Context, f *form.Form, p *post, err error) {
	err = unreadable(err)
	var rej *spam.Rejection
	var rl *spam.RateLimited
	var closed *form.ClosedError
	switch {
	case errors.As(err, &closed) && !p.json && closed.Message != "":
		// The owner's own words for a form their closing rules closed.
		h.closedPage(c, http.StatusConflict, f, closed)
		return
	case errors.As(err, &rej):
		h.spam(f, string(rej.Reason))
		if rej.Silent {
			lang, _ := pickLanguage(f, c.Request, p.lang)
			h.thank(c, f, p.json, fakeSubmissionID, lang)
			return
		}
		if notice, timed := timedOut[rej.Reason]; timed && !p.json && f != nil {
			h.again(c, f, p, notice)
			return
		}
	case errors.As(err, &rl) && f != nil:
		h.spam(f, ReasonRateLimited)
	}
	b := httperr.Problem(err)
	if closed != nil || errors.As(err, &closed) {
		// A script shows the owner's words too.
		b.Message = "this form is closed"
		if closed.Message != "" {
			b.Message = closed.Message
		}
	}
	if b.Status >= 500 {
		h.d.Logger.Error("public form capture failed", zap.Int("status", b.Status), zap.Error(err))
	}
	if p.json {
		httperr.Write(c, b)
		return
	}
	var s *form.Settings
	if f != nil {
		st := f.Settings()
		s = &st
	}
	if b.Status == http.StatusUnprocessableEntity && f != nil {
		errs, formError := fieldErrors(b)
		issued, nonce := h.d.Clock.Now(), ""
		if tok, err := h.tokens.Verify(f.ID(), p.cmd.Token, issued); err == nil {
			issued, nonce = tok.Issued, tok.Nonce
		}
		httperr.SetRetryAfter(c, b)
		h.showForm(c, b.Status, f, view{values: p.values, errs: errs, utm: p.cmd.UTM, issued: issued, formError: formError, nonce: nonce, lang: p.lang, codes: fieldCodes(b),
			resume: p.resume})
		return
	}
	h.errorPage(c, s, b)
}

// timedOut are the spam rules that refuse a post for when it was sent, not for what it holds,
// with the notice a respondent reads on the form drawn again.
var timedOut = map[spam.Reason]string{
	spam.ReasonTooFast: "This form was sent faster than a person usually fills it in, so it was not accepted yet. " +
		"Your answers are kept: check them and send the form again.",
	spam.ReasonTokenExpired: "This page was open for a long time, so it was renewed and the form was not accepted yet. " +
		"Your answers are kept: check them and send the form again.",
}

// filesNotKept ends the notice of a post that carried files, which a page cannot show again.
const filesNotKept = " Files cannot be kept: please attach them again."

// again answers a browser's post refused by a rule that timed it (the minimum fill time, an
// expired render token): the same page of the form once more, with every answer kept, the
// notice, and a render token the next post passes with. The fill time still counts from the
// first view of the form (a bot gains nothing by posting early); after an expired token the
// page was shown long ago, so the new token counts as shown min_fill_seconds ago. Every other
// rule (honeypot, proof of work, captcha, rate limit, replay) applies to the next post as ever.
// The status stays 403, the spam rules' refusal.
func (h *Handler) again(c *gin.Context, f *form.Form, p *post, notice string) {
	now := h.d.Clock.Now()
	issued := now.Add(-time.Duration(f.Settings().Spam.MinFillSeconds) * time.Second)
	if tok, err := h.tokens.Verify(f.ID(), p.cmd.Token, now); err == nil {
		issued = tok.Issued
	}
	if p.files() {
		notice += filesNotKept
	}
	// A new nonce (a new proof-of-work challenge with it): a start reported for the page
	// drawn again may count once more, on this rare path only.
	h.showPage(c, http.StatusForbidden, f, view{values: p.values, utm: p.cmd.UTM, issued: issued, notice: notice, page: p.page, lang: p.lang,
		resume: p.resume})
}

// fieldErrors are the messages of a 422 by field ID (the first per field) and the message of
// the post as a whole, if any.
func fieldErrors(b httperr.Body) (map[string]string, string) {
	errs := map[string]string{}
	var whole []string
	for _, d := range b.Details {
		if d.Field == "files" || d.Field == "" || strings.HasPrefix(d.Field, "_") { // _replyto, _subject: no input shows them
			whole = append(whole, d.Message)
			continue
		}
		if _, seen := errs[d.Field]; !seen {
			errs[d.Field] = d.Message
		}
	}
	return errs, strings.Join(whole, " ")
}

func (h *Handler) spam(f *form.Form, reason string) {
	if f != nil {
		h.d.Metrics.Spam.WithLabelValues(f.ID(), reason).Inc()
	}
}

func (h *Handler) thank(c *gin.Context, f *form.Form, isJSON bool, id, lang string) {
	if isJSON {
		c.JSON(http.StatusCreated, gin.H{"ok": true, "id": id})
		return
	}
	s := f.Settings()
	if target, ok := redirectTarget(s); ok {
		h.securityHeaders(c, &s)
		c.Redirect(http.StatusSeeOther, target)
		return
	}
	msg := "Your response has been recorded."
	if s.ThankYouMessage != nil && *s.ThankYouMessage != "" {
		msg = *s.ThankYouMessage
	}
	mp := messagePage{messageData{Title: "Thank you", Heading: "Thank you!", Message: msg}, themeOf(f.ID(), s.Theme)}
	if lang != "" {
		mp.Title, mp.Heading, mp.Message = thankYouIn(f, lang)
		mp.Lang = &langView{Tag: lang, Dir: dirOf(lang)}
	}
	// A message that recalls answers or the score is this respondent's: drawn for them alone.
	recalls := strings.Contains(mp.Message, "{{")
	if recalls {
		mp.Message = thankYouScore(thankYouRecall(mp.Message, f, thankedAnswers(c)), f, thankedScore(c))
	}
	h.securityHeaders(c, &s)
	h.renderMessage(c, http.StatusOK, mp, !recalls)
}

// errorPages are what a browser sees for each error code of the shared table.
var errorPages = map[string]messageData{
	"not_found":         {Title: "Form not found", Heading: "This form does not exist", Message: "Check the link you followed, or ask the person who shared it."},
	"form_closed":       {Title: "Form closed", Heading: "This form is closed", Message: "It no longer accepts responses."},
	"rate_limited":      {Title: "Please wait a moment", Heading: "Too many responses", Message: "We received several responses from your connection in a short time. Please wait a minute and try again."},
	"rejected":          {Title: "Response not accepted", Heading: "Your response was not accepted", Message: "Your response could not be accepted. Please reload the page and try again."},
	"payload_too_large": {Title: "Response not accepted", Heading: "Your response was not accepted", Message: "The response is too large."},
	"invalid_request":   {Title: "Response not accepted", Heading: "Your response was not accepted", Message: "The response could not be read. Please try again."},
	"validation_failed": {Title: "Response not accepted", Heading: "Your response was not accepted", Message: "The response breaks the form's rules. Please reload the page and try again."},
	"unavailable":       {Title: "Try again shortly", Heading: "We cannot take your response right now", Message: "Our storage is briefly unavailable. Nothing was saved: please try again shortly."},
}

// errorPage answers an error with its message page, in the status of the shared table.
func (h *Handler) errorPage(c *gin.Context, s *form.Settings, b httperr.Body) {
	m, ok := errorPages[b.Code]
	if !ok {
		m = messageData{Title: "Something went wrong", Heading: "Something went wrong", Message: "Something went wrong on our side. Please try again in a moment."}
	}
	httperr.SetRetryAfter(c, b)
	h.message(c, b.Status, s, m.Title, m.Heading, m.Message)
}

// unreadable keeps the httperr table's view of a body that could not be read.
func unreadable(err error) error {
	if errors.Is(err, errUnreadable) {
		return errBadBody
	}
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }
