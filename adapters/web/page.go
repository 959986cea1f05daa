package web

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/domain/submission"
)

// honeypotName is the hidden field bots fill in; it reads like an ordinary form field.
const honeypotName = "website"

type option struct {
	ID, Value string
	Checked   bool
	// Label is the option's text in the page's language when it differs from Value (the
	// default language's option, which is what is posted and stored); empty: Value.
	Label string
}

// fieldView is one question as the template draws it.
type fieldView struct {
	ID, InputID, ErrorID, Label, Kind, InputType, Placeholder, Value, Error string
	Accept                                                                  string // file inputs: the browser's picker filter
	Required, Checked                                                       bool
	Options                                                                 []option
	// Help is the text shown under the label (empty: none); HelpID is its element's id.
	Help, HelpID string
	// Rule is the field's display rule as JSON for the page's script (data-show-if); empty
	// when the field has none.
	Rule string
	// LabelParts and HelpParts draw a label or help that recalls answers (recall.go); nil
	// when it recalls none.
	LabelParts, HelpParts []recallPiece
}

// FirstID is where the error summary's link lands: the input, or a group's first option.
func (f fieldView) FirstID() string {
	if len(f.Options) > 0 && (f.Kind == "radios" || f.Kind == "checkboxes") {
		return f.Options[0].ID
	}
	return f.InputID
}

// DescribedBy lists the ids that describe the control (or the group): the help text, then the
// error line; empty when there is neither.
func (f fieldView) DescribedBy() string {
	var ids []string
	if f.Help != "" {
		ids = append(ids, f.HelpID)
	}
	if f.Error != "" {
		ids = append(ids, f.ErrorID)
	}
	return strings.Join(ids, " ")
}

type errorLink struct{ Target, Label, Message string }

type captchaView struct{ Script, Class, SiteKey string }

type pageData struct {
	Title, Description, Action, Token, Challenge, FormError string
	Multipart, PoW, Honeypot                                bool
	Fields                                                  []fieldView
	Errors                                                  []errorLink
	UTM                                                     []utmValue
	Captcha                                                 *captchaView
	// Carry are the answers not drawn on this page (hidden fields, other pages), sent on as
	// hidden inputs; the final post is validated whole, so nothing carried is trusted.
	Carry []utmValue
	// Steps is set on a form with several pages: which one this is, of how many.
	Steps *stepView
	// Notice says why a post that broke no rule of the form was not accepted (it was sent too
	// soon after the page opened, or the page had been open too long).
	Notice string
	// Wait is how many seconds the page's script holds the final post so that it meets the
	// minimum fill time (the form's min_fill_seconds on a first view).
	Wait int
	// Theme is the form's appearance class, accent stylesheet and logo.
	Theme themeView
	// Partial is set when the form saves drafts: the page has "Save and continue later" and
	// carries the visit's resume token (Resume, empty until a draft exists).
	Partial bool
	Resume  string
	// W are the page's own words; Lang the page's language and switcher, nil on a form
	// without languages (i18n.go).
	W    *words
	Lang *langView
}

// stepView is the position of a multi-page form's page.
type stepView struct {
	Page, Index, Count int
	Action             string
}

// First reports whether this is the first step (no Back button).
func (s stepView) First() bool { return s.Index == 1 }

// Last reports whether this is the last step (the Submit button).
func (s stepView) Last() bool { return s.Index == s.Count }

type utmValue struct{ Name, Value string }

type messageData struct {
	Title, Heading, Message string
	// Lang is the page's language on a form with languages (i18n.go); nil: English.
	Lang *langView
	// Note and Again are the builder's preview's: what it did not do, and a link to fill it
	// in again.
	Note, Again string
}

// fieldKinds maps field types to how they are drawn: the template's kind and the input's type.
// Another type is a text input; checkboxes with options are a group (see kindOf).
var fieldKinds = map[form.FieldType][2]string{
	form.TypeTextarea: {"textarea", ""},
	form.TypeDropdown: {"select", ""},
	form.TypeRadio:    {"radios", "radio"},
	form.TypeCheckbox: {"checkbox", "checkbox"},
	form.TypeFile:     {"file", "file"},
	form.TypeNumber:   {"input", "number"},
	form.TypeEmail:    {"input", "email"},
	form.TypeDate:     {"input", "date"},
}

// kindOf is how a field is drawn (see fieldKinds).
func kindOf(f form.Field) (kind, inputType string) {
	if f.Type == form.TypeCheckbox && len(f.Options) > 0 {
		return "checkboxes", "checkbox"
	}
	if k, ok := fieldKinds[f.Type]; ok {
		return k[0], k[1]
	}
	return "input", "text"
}

// views builds the fields drawn on page (0: a single-page form) with the respondent's
// values and the errors of a failed post, and the values carried on as hidden inputs.
func views(f *form.Form, fields []form.Field, values map[string][]string, errs map[string]string, page int) ([]fieldView, []errorLink, []utmValue) {
	out := make([]fieldView, 0, len(fields))
	var links []errorLink
	var carry []utmValue
	var skipped map[string]bool
	logic := form.HasLogic(fields)
	if logic {
		skipped = submission.Skipped(f, inputOf(fields, values))
	}
	var pageOf map[string]int // only a form with rules needs it
	if logic {
		pageOf = make(map[string]int, len(fields))
		for _, fl := range fields {
			pageOf[fl.ID] = fl.Page
		}
	}
	for _, fl := range fields {
		kind, typ := kindOf(fl)
		onPage := page == 0 || fl.Page == page
		if fl.Hidden || !onPage || (skipped[fl.ID] && !testsPage(fl, pageOf, page)) {
			if kind != "file" && !skipped[fl.ID] {
				for _, val := range values[fl.ID] {
					carry = append(carry, utmValue{Name: fl.ID, Value: val})
				}
			}
			continue
		}
		errorID := "f-" + fl.ID + "-error" // the input's ID is its prefix: one string for both
		v := fieldView{ID: fl.ID, InputID: errorID[:len(errorID)-len("-error")], ErrorID: errorID, Label: fl.Label,
			Kind: kind, InputType: typ, Required: fl.Required, Error: errs[fl.ID], Accept: strings.Join(fl.Accept, ",")}
		if fl.Placeholder != nil {
			v.Placeholder = *fl.Placeholder
		}
		if fl.Help != nil && strings.TrimSpace(*fl.Help) != "" {
			v.Help, v.HelpID = *fl.Help, "f-"+fl.ID+"-help"
		}
		if fl.ShowIf != nil {
			v.Rule = ruleJSON(fl.ShowIf, fields)
		}
		recallView(&v, fields, values)
		vals := values[fl.ID]
		if len(vals) > 0 && kind != "file" {
			v.Value = vals[0]
		}
		if kind == "checkbox" {
			v.Checked = v.Value == "true"
		}
		var chosen map[string]bool
		if len(vals) > 0 {
			chosen = make(map[string]bool, len(vals))
			for _, s := range vals {
				chosen[s] = true
			}
		}
		if len(fl.Options) > 0 {
			v.Options = make([]option, 0, len(fl.Options))
			for j, o := range fl.Options {
				v.Options = append(v.Options, option{ID: v.InputID + "-" + itoa(j), Value: o, Checked: chosen[o]})
			}
		}
		out = append(out, v)
		if v.Error != "" {
			links = append(links, errorLink{Target: v.FirstID(), Label: v.Label, Message: v.Error})
		}
	}
	return out, links, carry
}

// testsPage reports whether a field's rule tests a field of page: its answer is not known
// before the respondent fills that page, so the field is drawn (the script hides it at once;
// without JavaScript the server drops its answer when the rule does not hold).
func testsPage(fl form.Field, pageOf map[string]int, page int) bool {
	if fl.ShowIf == nil {
		return false
	}
	for _, c := range fl.ShowIf.Conditions {
		if page == 0 || pageOf[c.FieldID] == page {
			return true
		}
	}
	return false
}

// inputOf turns values as typed into the inputs the domain reads (lists for multi-value
// fields).
func inputOf(fields []form.Field, values map[string][]string) map[string]submission.Input {
	in := make(map[string]submission.Input, len(values))
	for _, fl := range fields {
		vals, ok := values[fl.ID]
		if !ok || len(vals) == 0 || fl.Type == form.TypeFile {
			continue
		}
		if fl.Multiple() {
			in[fl.ID] = append([]string(nil), vals...)
		} else {
			in[fl.ID] = vals[0]
		}
	}
	return in
}

// ruleJSON is a display rule for the page's script: {"any": bool, "c": [[field ID, operator,
// value, list]]}, list telling whether the tested field holds a list.
func ruleJSON(r *form.ShowIf, fields []form.Field) string {
	multiple := map[string]bool{}
	for _, fl := range fields {
		multiple[fl.ID] = fl.Multiple()
	}
	conds := make([][]any, len(r.Conditions))
	for i, c := range r.Conditions {
		conds[i] = []any{c.FieldID, c.Operator, c.Value, multiple[c.FieldID]}
	}
	b, _ := json.Marshal(map[string]any{"any": r.Any, "c": conds})
	return string(b)
}

// prefill reads the page URL's ?<key>= answers (hidden fields and any other); nil without any.
func prefill(f *form.Form, q url.Values) map[string][]string {
	var out map[string][]string
	if len(q) == 0 {
		return nil
	}
	for _, fl := range f.Fields() {
		vals, ok := q[fl.Key]
		if !ok || fl.Type == form.TypeFile || len(vals) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		switch {
		case fl.Multiple():
			out[fl.ID] = vals
		case fl.Type == form.TypeCheckbox:
			on := vals[0] != "" && vals[0] != "false"
			out[fl.ID] = []string{strconv.FormatBool(on)}
		default:
			out[fl.ID] = vals[:1]
		}
	}
	return out
}

// securityHeaders sets the CSP and framing rules of one form's pages. Owner settings reach
// the header only as origin.Origin values written out in canonical form (scheme://host[:port]),
// so no owner text can add a directive.
func (h *Handler) securityHeaders(c *gin.Context, s *form.Settings) {
	if s == nil || s.Spam.Captcha == nil && s.RedirectURL == nil && len(s.Embed.FrameAncestors) == 0 {
		setSecurityHeaders(c.Writer.Header(), defaultCSP, false)
		return
	}
	scripts := []string{"'self'"}
	frames := []string{}
	actions := []string{"'self'"}
	if cp := s.Spam.Captcha; cp != nil {
		if info, ok := h.opts.Captchas[cp.Provider]; ok {
			scripts = append(scripts, info.Origins...)
			frames = append(frames, info.Origins...)
		}
	}
	if s.RedirectURL != nil {
		if r, err := form.ParseRedirectURL(*s.RedirectURL); err == nil {
			actions = append(actions, r.Origin.String())
		}
	}
	ancestors := form.OriginStrings(s.Embed.FrameAncestors)
	setSecurityHeaders(c.Writer.Header(), buildCSP(scripts, frames, actions, ancestors), len(ancestors) > 0)
}

// defaultCSP is the policy of a form without a captcha, a redirect or framing sites (and of
// the pages of no form).
var defaultCSP = buildCSP([]string{"'self'"}, nil, []string{"'self'"}, nil)

// buildCSP writes the Content-Security-Policy of a page from its sources.
func buildCSP(scripts, frames, actions, ancestors []string) string {
	framing := "'none'"
	if len(ancestors) > 0 {
		framing = strings.Join(ancestors, " ")
	}
	csp := "default-src 'self'; script-src " + strings.Join(scripts, " ") + "; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"form-action " + strings.Join(actions, " ") + "; frame-ancestors " + framing + "; base-uri 'none'; object-src 'none'"
	if len(frames) > 0 {
		csp += "; frame-src " + strings.Join(frames, " ")
	}
	return csp
}

// setSecurityHeaders sets the policy and the headers every public page has; X-Frame-Options
// only when no site may frame it.
func setSecurityHeaders(hd http.Header, csp string, framed bool) {
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	if !framed {
		hd.Set("X-Frame-Options", "DENY")
	}
	hd.Set("Cache-Control", "no-store")
}

// redirectTarget is the form's redirect URL, written out again after the domain's strict
// parse; a value that does not parse is not followed (the thank-you page shows).
func redirectTarget(s form.Settings) (string, bool) {
	if s.RedirectURL == nil {
		return "", false
	}
	r, err := form.ParseRedirectURL(*s.RedirectURL)
	if err != nil {
		return "", false
	}
	return r.URL, true
}

func (h *Handler) render(c *gin.Context, status int, name string, data any) {
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		h.d.Logger.Error("render public form", zap.String("template", name), zap.Error(err))
		c.Status(http.StatusInternalServerError)
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

func (h *Handler) message(c *gin.Context, status int, s *form.Settings, title, heading, msg string) {
	h.themedMessage(c, status, s, themeView{}, title, heading, msg)
}

// messagePage is a message drawn in a form's theme (the thank-you page).
type messagePage struct {
	messageData
	Theme themeView
}

func (h *Handler) themedMessage(c *gin.Context, status int, s *form.Settings, theme themeView, title, heading, msg string) {
	h.securityHeaders(c, s)
	h.renderMessage(c, status, messagePage{messageData{Title: title, Heading: heading, Message: msg}, theme}, true)
}

// lookup finds the form of the URL; drafts are as good as unknown to respondents.
func (h *Handler) lookup(c *gin.Context) (*form.Form, error) {
	id := c.Param("form_id")
	if !httpkit.WellFormedID(id) {
		// A malformed ID (NUL, invalid UTF-8, …) names no form; it never reaches storage.
		return nil, domain.ErrNotFound
	}
	f, err := h.d.App.Queries.GetPublicForm.Handle(c.Request.Context(), capture.GetPublicForm{ID: id})
	if err != nil {
		return nil, err
	}
	if f.Status() == form.StatusDraft {
		return nil, domain.ErrNotFound
	}
	return f, nil
}

// page renders a published form; archived forms and forms their closing rules close show the
// closed page (200), drafts and unknown IDs the not-found page (404).
func (h *Handler) page(c *gin.Context) {
	f, err := h.lookup(c)
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	if !h.openOrClosed(c, f) {
		return
	}
	// Counted in memory (written every few seconds): the page waits for no storage.
	_ = h.d.App.Commands.RecordFormView.Handle(c.Request.Context(), capture.RecordFormView{FormID: f.ID()})
	utm := map[string]string{}
	var q url.Values // most views have no query: nothing to parse
	if c.Request.URL.RawQuery != "" {
		q = c.Request.URL.Query()
	}
	for _, k := range submission.UTMKeys {
		if v := q.Get(k); v != "" {
			utm[k] = v
		}
	}
	if token := q.Get("resume"); token != "" {
		h.resumePage(c, f, token, utm)
		return
	}
	if values := prefill(f, q); values != nil {
		h.showForm(c, http.StatusOK, f, view{values: values, utm: utm, issued: h.d.Clock.Now()})
		return
	}
	h.showCleanForm(c, f, utm, h.d.Clock.Now())
}

// showCleanForm serves the form as a first view shows it (no values, no errors) from the page
// cache: rendered once per form version, the render token, challenge and UTM inputs spliced in.
func (h *Handler) showCleanForm(c *gin.Context, f *form.Form, utm map[string]string, issued time.Time) {
	data := formData(f, h.opts.Captchas, nil, nil, "", 0)
	if lang, notice := pickLanguage(f, c.Request, ""); lang != "" {
		if q := c.Request.URL.Query(); len(q) > 1 || len(q) == 1 && !q.Has("lang") {
			// The language links keep the page URL's query (UTM): drawn for this view alone.
			h.showForm(c, http.StatusOK, f, view{utm: utm, issued: issued})
			return
		}
		localize(&data, f, lang, nil, false, nil)
		data.Notice = notice
	}
	key := pageKey(f, &data)
	p := h.pages.get(key)
	if p == nil {
		var err error
		if p, err = h.buildPage(data); err != nil {
			h.d.Logger.Error("cache public form page", zap.Error(err))
			h.showForm(c, http.StatusOK, f, view{utm: utm, issued: issued})
			return
		}
		h.pages.put(key, p)
	}
	tok, challenge, err := h.issue(f, issued, "")
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	s := f.Settings()
	h.securityHeaders(c, &s)
	hd := c.Writer.Header()
	varyAcceptEncoding(hd)
	b := viewBufs.Get().(*viewBuf)
	defer viewBufs.Put(b)
	b.out.Reset()
	if acceptsGzip(c.Request) {
		// Compressed once per page (pagegzip.go): the compression middleware leaves a response
		// that has a Content-Encoding alone.
		p.writeGzip(&b.out, &b.scratch, tok, challenge, utmValues(utm))
		hd.Set("Content-Encoding", "gzip")
	} else {
		p.write(&b.out, tok, challenge, utmValues(utm))
	}
	hd.Set("Content-Length", strconv.Itoa(b.out.Len()))
	c.Data(http.StatusOK, "text/html; charset=utf-8", b.out.Bytes())
}

// viewBuf is a view's output and scratch space; c.Data writes the response before it returns,
// so the buffers are reused.
type viewBuf struct{ out, scratch bytes.Buffer }

var viewBufs = sync.Pool{New: func() any { return new(viewBuf) }}

func (h *Handler) lookupFailed(c *gin.Context, err error) {
	b := httperr.Problem(err)
	if b.Status >= 500 {
		h.d.Logger.Error("load public form", zap.Error(err))
	}
	h.errorPage(c, nil, b)
}

// view is what one drawing of the form shows besides the form itself.
type view struct {
	values map[string][]string
	errs   map[string]string
	utm    map[string]string
	// issued is the render token's time, kept across drawings so that the fill time counts
	// from the first view.
	issued    time.Time
	formError string
	// notice tells why a post was not accepted although nothing in it was wrong.
	notice string
	// page is the page of a multi-page form to draw (0: the first step).
	page int
	// nonce is the render token's nonce of the visit, kept across its drawings (empty: a new
	// one).
	nonce string
	// resume is the visit's resume token, once it has a draft.
	resume string
	// lang is the page's language as posted (_lang), codes the violation codes of errs by
	// field ID (i18n.go).
	lang  string
	codes map[string]string
}

// showForm draws the form. On a form with several pages it shows the page of the first error
// (the last page for an error of the whole post), else the first page.
func (h *Handler) showForm(c *gin.Context, status int, f *form.Form, v view) {
	v.page = errorStep(f, v.errs, v.formError)
	h.showPage(c, status, f, v)
}

// errorStep is the page that shows a refused post's first error: the page of the first field
// in error, the last page for an error of the whole post (its files), else the first step (0).
func errorStep(f *form.Form, errs map[string]string, formError string) int {
	if len(errs) == 0 {
		if formError != "" {
			return math.MaxInt
		}
		return 0
	}
	for _, fl := range f.Fields() {
		if _, bad := errs[fl.ID]; bad && !fl.Hidden {
			return fl.Page
		}
	}
	return 0
}

// showPage draws v.page of the form.
func (h *Handler) showPage(c *gin.Context, status int, f *form.Form, v view) {
	data := formData(f, h.opts.Captchas, v.values, v.errs, v.formError, v.page)
	tok, challenge, err := h.issue(f, v.issued, v.nonce)
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	data.Token, data.Challenge = tok, challenge
	data.UTM = utmValues(v.utm)
	data.Notice = v.notice
	data.Resume = v.resume
	data.Wait = waitSeconds(f.Settings().Spam.MinFillSeconds, v.issued, h.d.Clock.Now())
	if lang, notice := pickLanguage(f, c.Request, v.lang); lang != "" {
		post := c.Request.Method == http.MethodPost
		var query url.Values
		if !post {
			query = c.Request.URL.Query()
		}
		localize(&data, f, lang, v.codes, post, query)
		if data.Notice == "" {
			data.Notice = notice
		}
	}
	s := f.Settings()
	h.securityHeaders(c, &s)
	h.render(c, status, "form.html", data)
}

// waitSeconds is how long the page's script holds a post so that it meets the minimum fill
// time of a token issued at issued (whole seconds, as the token keeps it), counted from now.
func waitSeconds(minFill int, issued, now time.Time) int {
	left := time.Duration(minFill)*time.Second - now.Sub(time.Unix(issued.Unix(), 0))
	if left <= 0 {
		return 0
	}
	return int((left + time.Second - 1) / time.Second)
}

// formData is everything the form template draws except the per-view parts (the render
// token, the proof-of-work challenge and the UTM inputs). pageKey digests all of it: a new
// pageData field must be added there too.
// page is the page to draw on a form with several pages (0: the first step); a single-page
// form ignores it.
// captchas are the providers this build has; a form's provider missing there draws no widget.
func formData(f *form.Form, captchas map[form.CaptchaProvider]Captcha, values map[string][]string, errs map[string]string, formError string, page int) pageData {
	s := f.Settings()
	var steps *stepView
	all := f.Fields()
	if form.Paged(all) {
		steps = stepOf(f, all, values, page)
		page = steps.Page
	} else {
		page = 0
	}
	fields, links, carry := views(f, all, values, errs, page)
	data := pageData{Title: f.Name(), Action: "/f/" + f.ID(), Multipart: f.HasFileFields(), Fields: fields, Errors: links,
		Honeypot: s.Spam.Honeypot, PoW: s.Spam.ProofOfWork, FormError: formError, Carry: carry, Steps: steps, Wait: s.Spam.MinFillSeconds,
		Theme: themeOf(f.ID(), s.Theme), W: english, Partial: s.Partial.Enabled}
	if f.Description() != nil {
		data.Description = *f.Description()
	}
	if cp := s.Spam.Captcha; cp != nil {
		if info, ok := captchas[cp.Provider]; ok {
			data.Captcha = &captchaView{Script: info.Script, Class: info.Class, SiteKey: cp.SiteKey}
		}
	}
	return data
}

// stepOf places page among the steps the values lead through; a page the values skip (or 0)
// becomes the nearest step before it, or the first.
func stepOf(f *form.Form, fields []form.Field, values map[string][]string, page int) *stepView {
	var skipped map[string]bool
	if form.HasLogic(fields) {
		skipped = submission.Skipped(f, inputOf(fields, values))
	}
	steps := form.Steps(fields, skipped)
	at := 0
	for i, p := range steps {
		if p <= page {
			at = i
		}
	}
	return &stepView{Page: steps[at], Index: at + 1, Count: len(steps), Action: "/f/" + f.ID() + "/page"}
}

// step moves a respondent between the pages of a multi-page form (POST /f/{id}/page, the
// Next and Back buttons): Next checks the answers of the page shown and draws the next page
// the answers lead to, Back the previous one. Nothing is stored; every answer travels on in
// the page and the final post to /f/{id} is checked whole.
func (h *Handler) step(c *gin.Context) {
	f, err := h.lookup(c)
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	if err := f.AcceptsPublicSubmissions(); err != nil {
		s := f.Settings()
		h.errorPage(c, &s, httperr.Problem(err))
		return
	}
	p, err := h.readPost(c, f)
	defer p.cleanup()
	if err != nil || p.json {
		if err == nil {
			err = errBadBody
		}
		h.refuse(c, f, p, err)
		return
	}
	issued, nonce := h.d.Clock.Now(), ""
	tok, terr := h.tokens.Verify(f.ID(), p.cmd.Token, issued)
	if terr == nil {
		issued, nonce = tok.Issued, tok.Nonce
	}
	page, _ := strconv.Atoi(c.Request.PostFormValue("_page"))
	if c.Request.PostFormValue("_nav") == "save" {
		h.saveForLater(c, f, p, view{values: p.values, utm: p.cmd.UTM, issued: issued, page: page, nonce: nonce, resume: p.resume, lang: p.lang})
		return
	}
	if to := c.Request.PostFormValue("_switch"); to != "" {
		// The language switcher: the same page, answers kept, in the chosen language.
		h.showPage(c, http.StatusOK, f, view{values: p.values, utm: p.cmd.UTM, issued: issued, page: page, nonce: nonce, lang: to, resume: p.resume})
		return
	}
	fields := f.Fields()
	var skipped map[string]bool
	if form.HasLogic(fields) {
		skipped = submission.Skipped(f, p.cmd.Data)
	}
	steps := form.Steps(fields, skipped)
	to := page
	if c.Request.PostFormValue("_nav") == "back" {
		to = prevStep(steps, page)
	} else if err := submission.CheckPage(f, p.cmd.Data, page); err != nil {
		errs, formError := fieldErrors(httperr.Problem(err))
		h.countStep(c, f, p.cmd.Token, page, page)
		resume, _ := h.saveDraft(c, f, p, page, terr == nil)
		h.showPage(c, http.StatusUnprocessableEntity, f, view{values: p.values, errs: errs, utm: p.cmd.UTM, issued: issued, formError: formError, page: page, nonce: nonce,
			lang: p.lang, codes: fieldCodes(httperr.Problem(err)), resume: resume})
		return
	} else {
		to = nextStep(steps, page)
	}
	h.countStep(c, f, p.cmd.Token, page, to)
	resume, _ := h.saveDraft(c, f, p, to, terr == nil)
	h.showPage(c, http.StatusOK, f, view{values: p.values, utm: p.cmd.UTM, issued: issued, page: to, nonce: nonce, lang: p.lang, resume: resume})
}

// countStep counts a page move of a visit without JavaScript as its start (the first post of
// the page) and the pages it came from and reached; in memory, the page waits for no storage.
func (h *Handler) countStep(c *gin.Context, f *form.Form, token string, from, to int) {
	_ = h.starts.Step(c.Request.Context(), capture.RecordFormStep{FormID: f.ID(), Token: token, From: from, To: to})
}

// prevStep is the step before page among steps (the pages the answers lead through), or the
// first.
func prevStep(steps []int, page int) int {
	prev := steps[0]
	for _, s := range steps {
		if s < page {
			prev = s
		}
	}
	return prev
}

// nextStep is the step after page among steps, or the last.
func nextStep(steps []int, page int) int {
	next := steps[len(steps)-1]
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i] > page {
			next = steps[i]
		}
	}
	return next
}

// issue makes a view's render token and, when the form asks for proof of work, its challenge
// as JSON.
func (h *Handler) issue(f *form.Form, issued time.Time, nonce string) (token, challenge string, err error) {
	tok, rt, err := issueTokenFor(h.opts.TokenKey, f.ID(), issued, nonce)
	if err != nil {
		return "", "", err
	}
	if f.Settings().Spam.ProofOfWork {
		ch, err := newChallenge(h.opts.PoWKey, rt.Nonce, h.opts.PoWMaxNumber, h.d.Clock.Now().Add(h.opts.TokenTTL))
		if err != nil {
			return "", "", err
		}
		b, _ := json.Marshal(ch)
		challenge = string(b)
	}
	return tok, challenge, nil
}

// utmValues are the UTM hidden inputs, in the order of submission.UTMKeys.
func utmValues(utm map[string]string) []utmValue {
	var out []utmValue
	for _, k := range submission.UTMKeys {
		if v := utm[k]; v != "" {
			out = append(out, utmValue{Name: "_" + k, Value: v})
		}
	}
	return out
}

// challenge gives scripts on the owner's site (JSON posts) a render token and a challenge.
// It is rate-limited like posts.
func (h *Handler) challenge(c *gin.Context) {
	f, err := h.lookup(c)
	if err != nil {
		h.jsonFail(c, err)
		return
	}
	s := f.Settings()
	cors(c, s)
	if err := f.AcceptsPublicSubmissions(); err != nil {
		h.jsonFail(c, err)
		return
	}
	now := h.d.Clock.Now()
	// Counted apart from the posts, so that a script's challenge and post are not two posts.
	if err := h.submit.Limit(f.ID()+"/challenge", httpkit.ClientIP(c.Request, h.opts.TrustedProxies), now); err != nil {
		h.spam(f, ReasonRateLimited)
		h.jsonFail(c, err)
		return
	}
	tok, rt, err := issueToken(h.opts.TokenKey, f.ID(), now)
	if err != nil {
		h.jsonFail(c, err)
		return
	}
	out := gin.H{"token": tok, "altcha": nil}
	if s.Spam.ProofOfWork {
		ch, err := newChallenge(h.opts.PoWKey, rt.Nonce, h.opts.PoWMaxNumber, now.Add(h.opts.TokenTTL))
		if err != nil {
			h.jsonFail(c, err)
			return
		}
		out["altcha"] = ch
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, out)
}

// jsonFail answers a script through the shared error table.
func (h *Handler) jsonFail(c *gin.Context, err error) {
	b := httperr.Problem(err)
	if b.Status >= 500 {
		h.d.Logger.Error("public form", zap.Error(err))
	}
	httperr.Write(c, b)
}

// cors allows the form's configured origins to call it from the owner's own site: the
// request's Origin is parsed as the settings' origins are, so equal origins match whatever
// their spelling (case, default port, IPv6 literal), and the header carries its canonical form.
func cors(c *gin.Context, s form.Settings) bool {
	from := c.GetHeader("Origin")
	if from == "" {
		return false
	}
	c.Writer.Header().Add("Vary", "Origin")
	sent, err := origin.Parse(from)
	if err != nil {
		return false
	}
	if slices.Contains(s.PostOrigins(), sent) {
		c.Header("Access-Control-Allow-Origin", sent.String())
		return true
	}
	return false
}

func (h *Handler) preflight(c *gin.Context) {
	f, err := h.lookup(c)
	if err != nil {
		b := httperr.Problem(err)
		httperr.SetRetryAfter(c, b)
		c.Status(b.Status)
		return
	}
	if !cors(c, f.Settings()) {
		c.Status(http.StatusForbidden)
		return
	}
	c.Header("Access-Control-Allow-Methods", "GET, POST")
	c.Header("Access-Control-Allow-Headers", "Content-Type")
	c.Header("Access-Control-Max-Age", "600")
	c.Status(http.StatusNoContent)
}
