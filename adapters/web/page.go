package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/application"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// honeypotName is the hidden field bots fill in; it reads like an ordinary form field.
const honeypotName = "website"

type option struct {
	ID, Value string
	Checked   bool
}

// fieldView is one question as the template draws it.
type fieldView struct {
	ID, InputID, ErrorID, Label, Kind, InputType, Placeholder, Value, Error string
	Accept                                                                  string // file inputs: the browser's picker filter
	Required, Checked                                                       bool
	Options                                                                 []option
}

// FirstID is where the error summary's link lands: the input, or a group's first option.
func (f fieldView) FirstID() string {
	if len(f.Options) > 0 && (f.Kind == "radios" || f.Kind == "checkboxes") {
		return f.Options[0].ID
	}
	return f.InputID
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
}

type utmValue struct{ Name, Value string }

type messageData struct {
	Title, Heading, Message string
}

// kinds maps field types to how they are drawn.
func kindOf(f form.Field) (kind, inputType string) {
	switch f.Type {
	case form.TypeTextarea:
		return "textarea", ""
	case form.TypeDropdown:
		return "select", ""
	case form.TypeRadio:
		return "radios", "radio"
	case form.TypeCheckbox:
		if len(f.Options) > 0 {
			return "checkboxes", "checkbox"
		}
		return "checkbox", "checkbox"
	case form.TypeFile:
		return "file", "file"
	case form.TypeNumber:
		return "input", "number"
	case form.TypeEmail:
		return "input", "email"
	case form.TypeDate:
		return "input", "date"
	}
	return "input", "text"
}

// views builds the fields with the respondent's values and the errors of a failed post.
func views(f *form.Form, values map[string][]string, errs map[string]string) ([]fieldView, []errorLink) {
	var out []fieldView
	var links []errorLink
	for i, fl := range f.Fields() {
		kind, typ := kindOf(fl)
		v := fieldView{ID: fl.ID, InputID: "f-" + fl.ID, ErrorID: "f-" + fl.ID + "-error", Label: fl.Label,
			Kind: kind, InputType: typ, Required: fl.Required, Error: errs[fl.ID], Accept: strings.Join(fl.Accept, ",")}
		if fl.Placeholder != nil {
			v.Placeholder = *fl.Placeholder
		}
		vals := values[fl.ID]
		if len(vals) > 0 && kind != "file" {
			v.Value = vals[0]
		}
		if kind == "checkbox" {
			v.Checked = v.Value == "true"
		}
		chosen := make(map[string]bool, len(vals))
		for _, s := range vals {
			chosen[s] = true
		}
		for j, o := range fl.Options {
			v.Options = append(v.Options, option{ID: v.InputID + "-" + itoa(j), Value: o, Checked: chosen[o]})
		}
		_ = i
		out = append(out, v)
		if v.Error != "" {
			links = append(links, errorLink{Target: v.FirstID(), Label: fl.Label, Message: v.Error})
		}
	}
	return out, links
}

// securityHeaders sets the CSP and framing rules of one form's pages. Owner settings reach
// the header only as origins parsed and written out again here (scheme://host[:port]);
// anything that does not parse as one is dropped, so no owner text can add a directive.
func securityHeaders(c *gin.Context, s *form.Settings) {
	scripts := []string{"'self'"}
	frames := []string{}
	actions := []string{"'self'"}
	var ancestors []string
	if s != nil {
		if cp := s.Spam.Captcha; cp != nil {
			if info, ok := captchaProviders[cp.Provider]; ok {
				scripts = append(scripts, info.Origins...)
				frames = append(frames, info.Origins...)
			}
		}
		if s.RedirectURL != nil {
			if o, ok := origin(*s.RedirectURL, false); ok {
				actions = append(actions, o)
			}
		}
		for _, a := range s.Embed.FrameAncestors {
			if o, ok := origin(a, true); ok {
				ancestors = append(ancestors, o)
			}
		}
	}
	framing := "'none'"
	if len(ancestors) > 0 {
		framing = strings.Join(ancestors, " ")
	}
	csp := "default-src 'self'; script-src " + strings.Join(scripts, " ") + "; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"form-action " + strings.Join(actions, " ") + "; frame-ancestors " + framing + "; base-uri 'none'; object-src 'none'"
	if len(frames) > 0 {
		csp += "; frame-src " + strings.Join(frames, " ")
	}
	hd := c.Writer.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	if len(ancestors) == 0 {
		hd.Set("X-Frame-Options", "DENY")
	}
	hd.Set("Cache-Control", "no-store")
}

// origin parses s as an http(s) URL and returns its origin as this server writes it:
// lowercase scheme and host, the port when there is one, nothing else. bare requires s to be
// an origin already (no path, query, fragment or user info), as frame ancestors and CORS
// origins are; a redirect URL may have a path. Wildcard hosts ("https://*.example.com") are
// kept for frame ancestors, where CSP allows them.
func origin(s string, bare bool) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", false
	}
	if bare && (strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#")) {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	wildcard := bare && strings.HasPrefix(host, "*.")
	check := host
	if wildcard {
		check = host[2:]
	}
	if strings.HasPrefix(check, "[") || strings.Contains(u.Host, "[") {
		return "", false // IPv6 literals: not worth a header's risk
	}
	for _, r := range check {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return "", false
		}
	}
	out := strings.ToLower(u.Scheme) + "://" + host
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", false
		}
		out += ":" + strconv.Itoa(n)
	}
	return out, true
}

// redirectTarget is the form's redirect URL, written out again after a strict parse; a value
// that does not parse as an absolute http(s) URL is not followed (the thank-you page shows).
func redirectTarget(s form.Settings) (string, bool) {
	if s.RedirectURL == nil {
		return "", false
	}
	if _, ok := origin(*s.RedirectURL, false); !ok {
		return "", false
	}
	u, err := url.Parse(*s.RedirectURL)
	if err != nil {
		return "", false
	}
	return u.String(), true
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
	securityHeaders(c, s)
	h.render(c, status, "message.html", messageData{Title: title, Heading: heading, Message: msg})
}

// lookup finds the form of the URL; drafts are as good as unknown to respondents.
func (h *Handler) lookup(c *gin.Context) (*form.Form, error) {
	id := c.Param("form_id")
	if !httpapi.WellFormedID(id) {
		// A malformed ID (NUL, invalid UTF-8, …) names no form; it never reaches storage.
		return nil, domain.ErrNotFound
	}
	f, err := h.d.App.Queries.GetPublicForm.Handle(c.Request.Context(), application.GetPublicForm{ID: id})
	if err != nil {
		return nil, err
	}
	if f.Status() == form.StatusDraft {
		return nil, domain.ErrNotFound
	}
	return f, nil
}

// page renders a published form; archived forms show the closed page (410), drafts and
// unknown IDs the not-found page (404).
func (h *Handler) page(c *gin.Context) {
	f, err := h.lookup(c)
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	if !h.openOrClosed(c, f) {
		return
	}
	utm := map[string]string{}
	for _, k := range submission.UTMKeys {
		if v := c.Query(k); v != "" {
			utm[k] = v
		}
	}
	h.showCleanForm(c, f, utm, h.d.Clock.Now())
}

// showCleanForm serves the form as a first view shows it (no values, no errors) from the page
// cache: rendered once per form version, the render token, challenge and UTM inputs spliced in.
func (h *Handler) showCleanForm(c *gin.Context, f *form.Form, utm map[string]string, issued time.Time) {
	data := formData(f, nil, nil, "")
	key := pageKey(f, &data)
	p := h.pages.get(key)
	if p == nil {
		var err error
		if p, err = h.buildPage(data); err != nil {
			h.d.Logger.Error("cache public form page", zap.Error(err))
			h.showForm(c, http.StatusOK, f, nil, nil, utm, issued, "")
			return
		}
		h.pages.put(key, p)
	}
	tok, challenge, err := h.issue(f, issued)
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	var buf bytes.Buffer
	p.write(&buf, tok, challenge, utmValues(utm))
	s := f.Settings()
	securityHeaders(c, &s)
	c.Data(http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
}

func (h *Handler) lookupFailed(c *gin.Context, err error) {
	b := httperr.Problem(err)
	if b.Status >= 500 {
		h.d.Logger.Error("load public form", zap.Error(err))
	}
	h.errorPage(c, nil, b)
}

// showForm draws the form; issued is the render token's time (kept across re-renders so the
// timing rule measures from the first view).
func (h *Handler) showForm(c *gin.Context, status int, f *form.Form, values map[string][]string, errs map[string]string, utm map[string]string, issued time.Time, formError string) {
	data := formData(f, values, errs, formError)
	tok, challenge, err := h.issue(f, issued)
	if err != nil {
		h.lookupFailed(c, err)
		return
	}
	data.Token, data.Challenge = tok, challenge
	data.UTM = utmValues(utm)
	s := f.Settings()
	securityHeaders(c, &s)
	h.render(c, status, "form.html", data)
}

// formData is everything the form template draws except the per-view parts (the render
// token, the proof-of-work challenge and the UTM inputs). pageKey digests all of it: a new
// pageData field must be added there too.
func formData(f *form.Form, values map[string][]string, errs map[string]string, formError string) pageData {
	s := f.Settings()
	fields, links := views(f, values, errs)
	data := pageData{Title: f.Name(), Action: "/f/" + f.ID(), Multipart: f.HasFileFields(), Fields: fields, Errors: links,
		Honeypot: s.Spam.Honeypot, PoW: s.Spam.ProofOfWork, FormError: formError}
	if f.Description() != nil {
		data.Description = *f.Description()
	}
	if cp := s.Spam.Captcha; cp != nil {
		if info, ok := captchaProviders[cp.Provider]; ok {
			data.Captcha = &captchaView{Script: info.Script, Class: info.Class, SiteKey: cp.SiteKey}
		}
	}
	return data
}

// issue makes a view's render token and, when the form asks for proof of work, its challenge
// as JSON.
func (h *Handler) issue(f *form.Form, issued time.Time) (token, challenge string, err error) {
	tok, rt, err := issueToken(h.opts.TokenKey, f.ID(), issued)
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
	if err := h.submit.Limit(f.ID()+"/challenge", clientIP(c.Request, h.opts.TrustedProxies), now); err != nil {
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

// cors allows the form's configured origins to call it from the owner's own site.
func cors(c *gin.Context, s form.Settings) bool {
	from := c.GetHeader("Origin")
	if from == "" {
		return false
	}
	c.Writer.Header().Add("Vary", "Origin")
	sent, ok := origin(from, true)
	if !ok || strings.Contains(sent, "*") {
		return false
	}
	for _, o := range s.PostOrigins() {
		// Only an allowed origin that parses is compared, and the header carries the parsed
		// form of the request's origin, never the stored text.
		if allowed, ok := origin(o, true); ok && allowed == sent {
			c.Header("Access-Control-Allow-Origin", sent)
			return true
		}
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
