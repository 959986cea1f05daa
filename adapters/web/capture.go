package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/application"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// post is one respondent post, whatever its content type.
type post struct {
	json     bool
	data     map[string]submission.Input
	values   map[string][]string // as typed, to draw the page again
	token    string
	altcha   string
	captcha  string
	honeypot string
	utm      map[string]string
	errs     map[string]string // per field, found while reading (uploads)
	files    map[string][]*multipart.FileHeader
	uploaded []string // references stored by this post, discarded if it is refused later
}

var errBadBody = errors.New("the body could not be read")

// readPost maps the body to field IDs: checkbox groups become lists, a single checkbox "true"
// or "false"; everything else is one string.
func readPost(c *gin.Context, f *form.Form, captchaField string, uploads bool) (*post, error) {
	ct, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	p := &post{data: map[string]submission.Input{}, values: map[string][]string{}, utm: map[string]string{}, errs: map[string]string{},
		files: map[string][]*multipart.FileHeader{}}
	switch ct {
	case "application/json":
		p.json = true
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxFormBytes)
		raw, err := io.ReadAll(c.Request.Body)
		if err != nil {
			return nil, err
		}
		var body struct {
			Data     map[string]json.RawMessage `json:"data"`
			Token    string                     `json:"token"`
			Altcha   string                     `json:"altcha"`
			Captcha  string                     `json:"captcha"`
			Honeypot string                     `json:"website"`
			UTM      map[string]string          `json:"utm"`
		}
		if err := json.Unmarshal(raw, &body); err != nil || body.Data == nil {
			return nil, errBadBody
		}
		p.token, p.altcha, p.captcha, p.honeypot = body.Token, body.Altcha, body.Captcha, body.Honeypot
		for k, v := range body.UTM {
			p.utm[k] = v
		}
		for k, v := range body.Data {
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			var x any
			if err := dec.Decode(&x); err != nil {
				return nil, errBadBody
			}
			p.data[k] = toInput(x)
		}
		return p, nil
	case "multipart/form-data":
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxMultipartBytes)
		if err := c.Request.ParseMultipartForm(1 << 20); err != nil {
			return nil, err
		}
	case "application/x-www-form-urlencoded", "":
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxFormBytes)
		if err := c.Request.ParseForm(); err != nil {
			return nil, err
		}
	default:
		return nil, errBadBody
	}
	pf := c.Request.PostForm
	p.token, p.altcha, p.honeypot = pf.Get("_token"), pf.Get("altcha"), pf.Get(honeypotName)
	if captchaField != "" {
		p.captcha = pf.Get(captchaField)
	}
	for _, k := range submission.UTMKeys {
		if v := pf.Get("_" + k); v != "" {
			p.utm[k] = v
		}
	}
	for _, fl := range f.Fields() {
		vals := pf[fl.ID]
		switch {
		case fl.Type == form.TypeFile:
			if c.Request.MultipartForm != nil && len(c.Request.MultipartForm.File[fl.ID]) > 0 {
				var pending []submission.Upload
				for _, fh := range c.Request.MultipartForm.File[fl.ID] {
					if fh.Filename == "" && fh.Size == 0 {
						continue // an empty file input
					}
					if !uploads {
						// Without an object store a file is refused, never dropped silently.
						p.errs[fl.ID] = fl.Label + ": file uploads are not available on this server"
						continue
					}
					p.files[fl.ID] = append(p.files[fl.ID], fh)
					pending = append(pending, submission.Upload{Ref: "pending"})
				}
				if len(pending) > 0 {
					p.data[fl.ID] = pending
				}
			}
		case fl.Multiple():
			p.values[fl.ID] = vals
			if len(vals) > 0 {
				p.data[fl.ID] = append([]string(nil), vals...)
			}
		case fl.Type == form.TypeCheckbox:
			on := len(vals) > 0 && vals[0] != "" && vals[0] != "false"
			p.data[fl.ID] = strconv.FormatBool(on)
			p.values[fl.ID] = []string{strconv.FormatBool(on)}
		default:
			if len(vals) > 0 {
				p.data[fl.ID] = vals[0]
				p.values[fl.ID] = vals[:1]
			}
		}
	}
	return p, nil
}

func toInput(v any) submission.Input {
	switch x := v.(type) {
	case json.Number:
		return submission.Number(x.String())
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toInput(e)
		}
		return out
	}
	return v
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

func fieldErrors(err error) (map[string]string, []errorDetail, bool) {
	var verr *domain.ValidationError
	if !errors.As(err, &verr) {
		return nil, nil, false
	}
	errs := map[string]string{}
	var details []errorDetail
	for _, v := range verr.Violations {
		if _, seen := errs[v.Field]; !seen {
			errs[v.Field] = v.Message
		}
		details = append(details, errorDetail{Field: v.Field, Code: v.Code, Message: v.Message})
	}
	return errs, details, true
}

// capture handles a respondent's post: validate, screen for spam, store through the shared
// capture use case, then thank (or redirect).
func (h *Handler) capture(c *gin.Context) {
	f, err := h.lookup(c)
	isJSON := strings.HasPrefix(c.GetHeader("Content-Type"), "application/json")
	if err != nil {
		if isJSON && errors.Is(err, domain.ErrNotFound) {
			jsonError(c, http.StatusNotFound, "not_found", "no such resource", nil)
			return
		}
		h.lookupFailed(c, err)
		return
	}
	s := f.Settings()
	if isJSON {
		cors(c, s)
	}
	if f.Status() != form.StatusPublished {
		if isJSON {
			jsonError(c, http.StatusConflict, "form_closed", "this form does not accept submissions in its current status", nil)
			return
		}
		h.closed(c, &s)
		return
	}
	captchaField := ""
	if s.Spam.Captcha != nil {
		captchaField = captchaProviders[s.Spam.Captcha.Provider].Response
	}
	p, err := readPost(c, f, captchaField, h.opts.Uploader != nil)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			h.fail(c, isJSON, &s, http.StatusRequestEntityTooLarge, "payload_too_large", "The response is too large.")
			return
		}
		h.fail(c, isJSON, &s, http.StatusBadRequest, "invalid_request", "The response could not be read. Please try again.")
		return
	}
	now := h.d.Clock.Now()
	ip := clientIP(c.Request, h.opts.TrustedProxies)
	if wait := h.limiter.allow(h.d.IPHasher.Hash(ip)+"|"+f.ID(), now); wait > 0 {
		h.spam(f, ReasonRateLimited)
		c.Header("Retry-After", strconv.Itoa(wait))
		if p.json {
			jsonError(c, http.StatusTooManyRequests, "rate_limited", "too many responses from this address; retry after the Retry-After delay", nil)
			return
		}
		h.message(c, http.StatusTooManyRequests, &s, "Please wait a moment", "Too many responses",
			"We received several responses from your connection in a short time. Please wait a minute and try again.")
		return
	}
	ref := c.GetHeader("Referer")
	utmFromReferrer(ref, p.utm)

	// 1. Validate again on the server: a modified client cannot bypass the form's rules.
	errs := p.errs
	var details []errorDetail
	if _, verr := submission.Validate(f.Fields(), p.data); verr != nil {
		var ok bool
		var more map[string]string
		more, details, ok = fieldErrors(verr)
		if !ok {
			h.internal(c, isJSON, &s, verr)
			return
		}
		for k, v := range more {
			if _, seen := errs[k]; !seen {
				errs[k] = v
			}
		}
	}
	for k, v := range p.errs {
		if len(details) == 0 || !hasDetail(details, k) {
			details = append(details, errorDetail{Field: k, Code: "upload_unavailable", Message: v})
		}
	}
	if len(errs) > 0 {
		h.invalid(c, f, p, errs, details, now)
		return
	}

	// 2. Spam and abuse: nothing of a spam post is stored.
	reason, fake, spend := h.screen(c, f, p, ip, now)
	if reason != "" {
		h.spam(f, reason)
		if fake {
			h.thank(c, f, p.json, "sub_"+strings.Repeat("0", 26))
			return
		}
		h.fail(c, p.json, &s, http.StatusForbidden, "rejected", "Your response could not be accepted. Please reload the page and try again.")
		return
	}

	// 3. Files go to object storage; the submission keeps their references.
	if len(p.files) > 0 {
		if ok := h.upload(c, f, p, now); !ok {
			return
		}
	}

	// 4. Store through the one capture path.
	var ua, referrer *string
	if v := c.GetHeader("User-Agent"); v != "" {
		ua = &v
	}
	if ref != "" {
		referrer = &ref
	}
	sub, err := h.d.App.Commands.CaptureSubmission.Handle(c.Request.Context(), application.CaptureSubmission{
		WorkspaceID: f.WorkspaceID(), FormID: f.ID(), Data: p.data, Source: submission.SourceForm,
		IP: ip, UserAgent: ua, Referrer: referrer, UTM: p.utm, Token: spend,
	})
	if err != nil {
		h.discard(c, f, p)
		if errors.Is(err, ports.ErrTokenUsed) {
			// The nonce is spent with the submission, in its transaction: a replay stores nothing.
			h.spam(f, ReasonTokenReplay)
			h.fail(c, p.json, &s, http.StatusForbidden, "rejected", "Your response could not be accepted. Please reload the page and try again.")
			return
		}
		if errs, details, ok := fieldErrors(err); ok {
			h.invalid(c, f, p, errs, details, now)
			return
		}
		if errors.Is(err, domain.ErrFormClosed) {
			if p.json {
				jsonError(c, http.StatusConflict, "form_closed", "this form does not accept submissions in its current status", nil)
				return
			}
			h.closed(c, &s)
			return
		}
		h.internal(c, p.json, &s, err)
		return
	}
	h.thank(c, f, p.json, sub.ID())
}

// upload stores every file of the post; a rejected file draws the page again with its error.
func (h *Handler) upload(c *gin.Context, f *form.Form, p *post, now time.Time) bool {
	errs := map[string]string{}
	var details []errorDetail
	for _, fl := range f.Fields() {
		fhs := p.files[fl.ID]
		if len(fhs) == 0 {
			continue
		}
		refs := make([]submission.Upload, 0, len(fhs))
		for _, fh := range fhs {
			ref, err := h.opts.Uploader.Upload(c.Request.Context(), f, fl.ID, fh)
			var ve interface{ Violation(string) domain.Violation }
			if errors.As(err, &ve) {
				v := ve.Violation(fl.ID)
				errs[fl.ID] = fl.Label + ": " + fh.Filename + ": " + v.Message
				details = append(details, errorDetail{Field: v.Field, Code: v.Code, Message: v.Message})
				break
			}
			if err != nil {
				h.discard(c, f, p)
				s := f.Settings()
				h.internal(c, p.json, &s, err)
				return false
			}
			p.uploaded = append(p.uploaded, ref)
			refs = append(refs, submission.Upload{Ref: ref})
		}
		p.data[fl.ID] = refs
	}
	if len(errs) > 0 {
		h.discard(c, f, p)
		h.invalid(c, f, p, errs, details, now)
		return false
	}
	return true
}

// discard deletes what this post uploaded; it runs after the request's own context may be done.
func (h *Handler) discard(c *gin.Context, f *form.Form, p *post) {
	if len(p.uploaded) == 0 || h.opts.Uploader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), 30*time.Second)
	defer cancel()
	h.opts.Uploader.Discard(ctx, f, p.uploaded)
	p.uploaded = nil
}

func hasDetail(ds []errorDetail, field string) bool {
	for _, d := range ds {
		if d.Field == field {
			return true
		}
	}
	return false
}

// screen applies the form's spam rules; fake is true when the bot should believe it succeeded.
// A post that passes and carries a render token gets the token to spend with its submission
// (in the same transaction), so a replay is caught when the capture is stored.
func (h *Handler) screen(c *gin.Context, f *form.Form, p *post, ip string, now time.Time) (reason string, fake bool, spend *ports.SpentToken) {
	sp := f.Settings().Spam
	if sp.Honeypot && strings.TrimSpace(p.honeypot) != "" {
		return ReasonHoneypot, true, nil
	}
	needToken := sp.MinFillSeconds > 0 || sp.ProofOfWork
	var tok renderToken
	if needToken || p.token != "" {
		var err error
		tok, err = parseToken(h.opts.TokenKey, f.ID(), p.token, now, h.opts.TokenTTL)
		switch {
		case errors.Is(err, errTokenMissing):
			return ReasonTokenMissing, false, nil
		case errors.Is(err, errTokenExpired):
			return ReasonTokenExpired, false, nil
		case err != nil:
			return ReasonTokenInvalid, false, nil
		}
		if sp.MinFillSeconds > 0 && now.Sub(tok.Issued) < time.Duration(sp.MinFillSeconds)*time.Second {
			return ReasonTooFast, false, nil
		}
	}
	if sp.ProofOfWork {
		switch err := verifySolution(h.opts.PoWKey, p.altcha, tok.Nonce, now); {
		case errors.Is(err, errPoWMissing):
			return ReasonPoWMissing, false, nil
		case err != nil:
			return ReasonPoWInvalid, false, nil
		}
	}
	if cp := sp.Captcha; cp != nil {
		if err := h.verifyCaptcha(c.Request.Context(), cp, p.captcha, ip); err != nil {
			return ReasonCaptcha, false, nil
		}
	}
	if tok.Nonce != "" {
		spend = &ports.SpentToken{Nonce: tok.Nonce, ExpiresAt: tok.Issued.Add(h.opts.TokenTTL + time.Minute)}
	}
	return "", false, spend
}

func (h *Handler) spam(f *form.Form, reason string) {
	h.d.Metrics.Spam.WithLabelValues(f.ID(), reason).Inc()
}

// invalid answers a post that breaks the form's rules: the page again (422) with every error
// next to its field and every value kept, or the API's error body.
func (h *Handler) invalid(c *gin.Context, f *form.Form, p *post, errs map[string]string, details []errorDetail, now time.Time) {
	if p.json {
		jsonError(c, http.StatusUnprocessableEntity, "validation_failed", "the request breaks one or more rules; see details", details)
		return
	}
	issued := now
	if tok, err := parseToken(h.opts.TokenKey, f.ID(), p.token, now, h.opts.TokenTTL); err == nil {
		issued = tok.Issued
	}
	h.showForm(c, http.StatusUnprocessableEntity, f, p.values, errs, p.utm, issued, "")
}

func (h *Handler) thank(c *gin.Context, f *form.Form, isJSON bool, id string) {
	if isJSON {
		c.JSON(http.StatusCreated, gin.H{"id": id})
		return
	}
	s := f.Settings()
	if s.RedirectURL != nil {
		securityHeaders(c, &s)
		c.Redirect(http.StatusSeeOther, *s.RedirectURL)
		return
	}
	msg := "Your response has been recorded."
	if s.ThankYouMessage != nil && *s.ThankYouMessage != "" {
		msg = *s.ThankYouMessage
	}
	h.message(c, http.StatusOK, &s, "Thank you", "Thank you!", msg)
}

func (h *Handler) fail(c *gin.Context, isJSON bool, s *form.Settings, status int, code, msg string) {
	if isJSON {
		jsonError(c, status, code, msg, nil)
		return
	}
	h.message(c, status, s, "Response not accepted", "Your response was not accepted", msg)
}

func (h *Handler) internal(c *gin.Context, isJSON bool, s *form.Settings, err error) {
	h.d.Logger.Error("public form capture failed", zap.Error(err))
	h.fail(c, isJSON, s, http.StatusInternalServerError, "internal_error", "Something went wrong on our side. Please try again in a moment.")
}

func itoa(n int) string { return strconv.Itoa(n) }
