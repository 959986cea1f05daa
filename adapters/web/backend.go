package web

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
)

// Form-backend mode: a plain HTML form on the owner's own site posts here. Its special names
// follow the common form-backend convention.
const (
	backendHoneypot = "_gotcha"
	backendNext     = "_next"
	backendReplyTo  = "_replyto"
	backendSubject  = "_subject"
)

// fieldNamed resolves a posted name to the form's field: its field ID or its key, so a plain
// HTML form can use readable names (<input name="email">).
func fieldNamed(f *form.Form, name string) (form.Field, bool) {
	return f.FieldByName(name)
}

// readBackendFields keeps a form-backend post's _next, _replyto and _subject (checked by the
// use case; _next by the form's allowed origins).
func readBackendFields(pf url.Values, p *post) {
	p.next = pf.Get(backendNext)
	if _, ok := pf[backendReplyTo]; ok {
		v := strings.TrimSpace(pf.Get(backendReplyTo))
		if v != "" {
			p.cmd.ReplyTo = &v
		}
	}
	if _, ok := pf[backendSubject]; ok {
		v := pf.Get(backendSubject)
		if strings.TrimSpace(v) != "" {
			p.cmd.Subject = &v
		}
	}
}

// acceptsJSON reports whether the client asked for a JSON answer (Accept: application/json),
// as scripts posting a form's FormData do.
func acceptsJSON(c *gin.Context) bool {
	accept := c.GetHeader("Accept")
	if !strings.Contains(strings.ToLower(accept), "json") {
		return false // a browser's Accept: no media type to parse
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "application/json" {
			return true
		}
	}
	return false
}

// postOrigin is the origin of the page a post came from: its Origin header, or lacking one
// its Referer's origin; zero when neither names a web origin or when it is this server itself
// (the host the request was sent to).
func postOrigin(r *http.Request) origin.Origin {
	var o origin.Origin
	var err error
	if raw := r.Header.Get("Origin"); raw != "" && raw != "null" {
		o, err = origin.Parse(raw)
	} else {
		var ref *url.URL
		if ref, err = url.Parse(r.Header.Get("Referer")); err == nil {
			o, err = origin.Of(ref)
		}
	}
	if err != nil {
		return origin.Origin{}
	}
	// This server's own page posts with the host the browser sent the request to; behind a
	// proxy that rewrites Host, X-Forwarded-Host names it. Taking either as "own" is safe
	// whoever sets them: an own-page post must pass every rule of the hosted page.
	fwd, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ",")
	if sameHost(o, r.Host) || sameHost(o, strings.TrimSpace(fwd)) {
		return origin.Origin{}
	}
	return o
}

// sameHost reports whether host (a Host header: host[:port]) names o's host, read with o's
// scheme so that default ports and spelling compare as origins do.
func sameHost(o origin.Origin, host string) bool {
	if host == "" {
		return false
	}
	h, err := origin.Parse(o.Scheme() + "://" + host)
	return err == nil && h == o
}

// closedPage shows the owner's message of a form closed by its closing rules, in status.
func (h *Handler) closedPage(c *gin.Context, status int, f *form.Form, closed *form.ClosedError) {
	s := f.Settings()
	m := errorPages[httperr.Problem(closed).Code]
	msg := m.Message
	if closed.Message != "" {
		msg = closed.Message
	}
	if h.closedInLanguage(c, status, f, closed.Message) {
		return
	}
	h.themedMessage(c, status, &s, themeOf(f.ID(), s.Theme), m.Title, m.Heading, msg)
}

// openOrClosed answers the page of a form that does not take responses now; it reports
// whether the form is open. A closed form's page (archived, or closed by a closing rule) is
// a page like any other and answers 200: only posts to it are refused (409 form_closed).
func (h *Handler) openOrClosed(c *gin.Context, f *form.Form) bool {
	err := h.submit.Open(c.Request.Context(), f)
	if err == nil {
		return true
	}
	s := f.Settings()
	var closed *form.ClosedError
	if errors.As(err, &closed) {
		h.closedPage(c, http.StatusOK, f, closed)
		return false
	}
	b := httperr.Problem(err)
	if b.Status >= 500 {
		h.d.Logger.Error("load public form", zap.Error(err))
	}
	if errors.Is(err, domain.ErrFormClosed) {
		// The archived form's closed page, in the form's theme.
		m := errorPages[b.Code]
		if h.closedInLanguage(c, http.StatusOK, f, "") {
			return false
		}
		h.themedMessage(c, http.StatusOK, &s, themeOf(f.ID(), s.Theme), m.Title, m.Heading, m.Message)
		return false
	}
	h.errorPage(c, &s, b)
	return false
}
