package dashboard

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"math"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/domain"
)

// assets are the dashboard's embedded files, served under /app/assets/.
var assets = httpkit.MustLoadAssets(assetFS, "/app/assets/")

// view is what every page template gets.
type view struct {
	Title string
	// Shell is the signed-in frame (header, navigation); nil on the signed-out pages.
	Shell *shell
	Flash string
	// Error is a message about the whole page; Errors are messages next to a control, by
	// the control's name, and Form the values to draw again after a failed post.
	Error  string
	Errors map[string]string
	Form   map[string]string
	Data   any
}

// inputView is one labelled input as the "input" template draws it.
type inputView struct {
	ID, Name, Label, Type, Autocomplete, Hint, Value, Error string
	Required                                                bool
	Extra                                                   template.HTMLAttr
}

// input builds an input of v: its value comes back after a failed post (never a password's)
// and its error sits next to it.
func input(v *view, name, label, typ, autocomplete, hint string, required bool, extra string) inputView {
	in := inputView{ID: "f-" + name, Name: name, Label: label, Type: typ, Autocomplete: autocomplete, Hint: hint,
		Required: required, Extra: template.HTMLAttr(extra)} // extra comes from the templates only
	if v != nil {
		if typ != "password" {
			in.Value = v.Form[name]
		}
		in.Error = v.Errors[name]
	}
	return in
}

type link struct{ Href, Label string }

// confirmData is a confirmation page: what will happen, and the button that does it.
type confirmData struct {
	Heading, Action, Button, Cancel string
	Paragraphs                      []string
	Danger                          bool
	Hidden                          []hiddenInput
}

type hiddenInput struct{ Name, Value string }

// message is the data of the message page: errors, throttling, notices.
type message struct {
	Heading    string
	Paragraphs []string
	RetryAfter string
	Action     *link
	SignOut    bool
}

// pageSet is every page template, drawn in the viewer's time zone: the parsed templates are
// never executed themselves (html/template clones only those), and each zone a viewer reads in
// gets its own clone, whose time functions format in that zone.
type pageSet struct {
	parsed map[string]*template.Template
	mu     sync.Mutex // held while a zone's pages are cloned
	zones  sync.Map   // zone name → map[string]*template.Template
}

// in returns the pages that show times in loc, cloning them on the zone's first use.
func (p *pageSet) in(loc *time.Location) (map[string]*template.Template, error) {
	if pages, ok := p.zones.Load(loc.String()); ok {
		return pages.(map[string]*template.Template), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pages, ok := p.zones.Load(loc.String()); ok {
		return pages.(map[string]*template.Template), nil
	}
	pages := make(map[string]*template.Template, len(p.parsed))
	for name, t := range p.parsed {
		c, err := t.Clone()
		if err != nil {
			return nil, fmt.Errorf("clone page %s: %w", name, err)
		}
		pages[name] = c.Funcs(zoneFuncs(loc))
	}
	p.zones.Store(loc.String(), pages)
	return pages, nil
}

// The formats of times on the pages: day and time in the viewer's zone (with its abbreviation),
// and in UTC for the title a pointer shows on hover.
const (
	dateLayout     = "2 Jan 2006"
	datetimeLayout = "2 Jan 2006, 15:04 MST"
)

// zoneFuncs are the template functions that depend on the viewer's zone: date and datetime
// format in it, zone names it.
func zoneFuncs(loc *time.Location) template.FuncMap {
	return template.FuncMap{
		"date":     func(t time.Time) string { return t.In(loc).Format(dateLayout) },
		"datetime": func(t time.Time) string { return t.In(loc).Format(datetimeLayout) },
		"zone":     func() string { return loc.String() },
	}
}

func parsePages() (*pageSet, error) {
	funcs := template.FuncMap{
		"asset": assets.URL,
		"input": input,
		// toggle is the enabled switch of a webhook row; from "list" brings the person back to
		// the list, small draws a small button.
		"toggle": func(r webhookRow, from string, small bool) webhookToggle {
			return webhookToggle{ID: r.ID, URL: r.URL, Enabled: r.Enabled, From: from, Small: small}
		},
		"iso":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"inc":   func(i int) int { return i + 1 },
		"addAt": addAt,
		// utc is a time in UTC, for the title of a <time> shown in the viewer's zone.
		"utc": func(t time.Time) string { return t.UTC().Format(datetimeLayout) },
		// day is a calendar day kept as midnight UTC (a day of the analytics), in no zone.
		"day": func(t time.Time) string { return t.UTC().Format(dateLayout) },
	}
	maps.Copy(funcs, zoneFuncs(time.UTC))
	base, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		if strings.HasSuffix(n, "/layout.html") {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, err
		}
		pages[strings.TrimSuffix(path.Base(n), ".html")] = t
	}
	return &pageSet{parsed: pages}, nil
}

// render draws a page with status 200, or status when given.
func (h *Handler) render(c *gin.Context, status int, page string, v *view) {
	if v.Shell == nil {
		if sp, ok := sessionOf(c); ok && sp.Principal.WorkspaceID != "" {
			v.Shell = h.shellFor(c, sp)
		}
	}
	if v.Flash == "" {
		v.Flash = h.takeFlash(c)
	}
	h.renderIn(c.Writer, h.zone(c), status, page, v)
	c.Abort()
}

// renderStatus draws a page outside a signed-in request, with times in UTC.
func (h *Handler) renderStatus(w http.ResponseWriter, status int, page string, v *view) {
	h.renderIn(w, time.UTC, status, page, v)
}

func (h *Handler) renderIn(w http.ResponseWriter, loc *time.Location, status int, page string, v *view) {
	pages, err := h.pages.in(loc)
	if err != nil {
		h.log.Error("render dashboard page", zap.String("page", page), zap.Error(err))
		http.Error(w, "The page could not be drawn.", http.StatusInternalServerError)
		return
	}
	t, ok := pages[page]
	if !ok {
		panic("dashboard: no page template " + page)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "page", v); err != nil {
		h.log.Error("render dashboard page", zap.String("page", page), zap.Error(err))
		http.Error(w, "The page could not be drawn.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// problem classifies err through the shared table; Body.Details carry the fields at fault.
func problem(err error) httperr.Body { return httperr.Problem(err) }

// selectOption is one choice of a select control.
type selectOption struct {
	Value, Label string
	Selected     bool
}

// invalid returns the validation failure (422) err carries, for the page to draw next to its
// controls; any other failure it answers itself (see fail), and ok is false.
func (h *Handler) invalid(c *gin.Context, err error) (b httperr.Body, ok bool) {
	b = problem(err)
	if b.Status != http.StatusUnprocessableEntity {
		h.fail(c, err)
		return b, false
	}
	return b, true
}

// fieldErrors spreads a validation failure over the controls that caused it; what names no
// control of the page (known lists the page's field names and maps domain fields to them)
// becomes the page message.
func fieldErrors(b httperr.Body, known map[string]string) (map[string]string, string) {
	errs := map[string]string{}
	var rest []string
	for _, d := range b.Details {
		if name, ok := known[d.Field]; ok {
			if errs[name] == "" {
				errs[name] = sentence(d.Message)
			}
			continue
		}
		rest = append(rest, sentence(d.Message))
	}
	return errs, strings.Join(rest, " ")
}

// sentence makes a domain message read as one: the property it starts with in words ("url
// must use https" reads "The URL must use https."), a capital first letter and a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = propertyInWords(s)
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}

// friendly is the message a person reads for an error the table classified.
func friendly(b httperr.Body) string {
	switch b.Code {
	case "validation_failed":
		var msgs []string
		for _, d := range b.Details {
			msgs = append(msgs, sentence(d.Message))
		}
		return strings.Join(msgs, " ")
	case "forbidden":
		return "Your role in this workspace does not allow this. Ask an owner or an admin."
	case "not_found":
		return "We could not find that. It may have been removed."
	case "conflict":
		// The error table's message says what clashed, as the API shows it.
		return sentence(b.Message)
	case "rate_limited":
		return "Too many attempts. Wait a moment and try again."
	case "unavailable":
		return "Formward cannot store changes right now. Try again in a few seconds."
	case "invalid_request":
		return sentence(b.Message)
	}
	return "Something went wrong on our side. Try again; if it keeps happening, tell your administrator."
}

// fail draws the friendly page of an error that belongs to no control: 403, 404, 409, 429,
// 500. Unknown errors are logged (never with request values, which may hold secrets).
func (h *Handler) fail(c *gin.Context, err error) {
	b := problem(err)
	if b.Status >= 500 {
		h.log.Error("dashboard request failed", zap.String("path", c.FullPath()), zap.Error(err))
	}
	httperr.SetRetryAfter(c, b)
	heading := map[int]string{400: "That request could not be read", 403: "Not allowed", 404: "Not found",
		409: "That did not work", 422: "That did not work", 429: "Too many attempts", 503: "Try again shortly"}[b.Status]
	if heading == "" {
		heading = "Something went wrong"
	}
	m := message{Heading: heading, Paragraphs: []string{friendly(b)}, Action: &link{Href: "/app", Label: "Back to the dashboard"}}
	if b.RetryAfter > 0 {
		m.RetryAfter = humanDuration(b.RetryAfter)
	}
	h.render(c, b.Status, "message", &view{Title: heading, Data: m})
}

// humanDuration is a wait a person reads: "40 seconds", "12 minutes".
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		n := int(math.Max(1, math.Ceil(d.Seconds())))
		return plural(n, "second")
	case d < time.Hour:
		return plural(int(math.Ceil(d.Minutes())), "minute")
	}
	return plural(int(math.Ceil(d.Hours())), "hour")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// NotFound answers a dashboard path that no route matches (and a method a page does not
// take) with the dashboard's own 404 page and security headers, not the API's JSON.
func (h *Handler) NotFound(c *gin.Context) {
	h.headers(c)
	h.notFound(c)
}

// notFound is the dashboard's 404 page.
func (h *Handler) notFound(c *gin.Context) {
	h.fail(c, fmt.Errorf("dashboard page: %w", domain.ErrNotFound))
}

// propertyVerbs are the words that follow a property's name at the start of a domain message.
var propertyVerbs = map[string]bool{"must": true, "is": true, "are": true, "may": true, "cannot": true, "has": true}

// notProperties are words that start a message as a sentence already does ("it must…").
var notProperties = map[string]bool{"the": true, "this": true, "that": true, "it": true, "there": true, "nothing": true,
	"each": true, "every": true, "one": true, "a": true, "an": true, "you": true, "your": true, "which": true, "what": true}

// acronyms are the parts of a property's name written in capitals.
var acronyms = map[string]string{"url": "URL", "id": "ID", "json": "JSON", "ids": "IDs", "ip": "IP"}

// propertyInWords turns a message that starts with a property's name followed by a verb
// ("redirect_url must use https") into one that starts with the property in words ("the
// redirect URL must use https"); any other message is returned as it is.
func propertyInWords(s string) string {
	name, rest, ok := strings.Cut(s, " ")
	if !ok || name == "" {
		return s
	}
	verb, _, _ := strings.Cut(rest, " ")
	if !propertyVerbs[verb] || notProperties[name] {
		return s
	}
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '.' })
	if len(words) == 0 {
		return s
	}
	for i, w := range words {
		if strings.IndexFunc(w, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }) >= 0 {
			return s
		}
		if a, ok := acronyms[w]; ok {
			words[i] = a
		}
	}
	if verb == "are" {
		return strings.Join(words, " ") + " " + rest // a plural reads without the article: "Options are required"
	}
	return "the " + strings.Join(words, " ") + " " + rest
}
