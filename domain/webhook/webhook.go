// Package webhook is the webhook aggregate (a registered HTTPS endpoint and its subscriptions)
// and the delivery aggregate (one event to one endpoint, with its attempts and retry schedule).
package webhook

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/text"
	"github.com/formward/formward/domain/weburl"
)

// MaxURL bounds the length of an endpoint URL.
const MaxURL = 2048

// Webhook is a registered endpoint of a workspace.
type Webhook struct {
	id          string
	workspaceID string
	url         string
	events      []event.Type
	formID      *string
	secret      string
	// enabled is false while deliveries are switched off: events that happen meanwhile are
	// skipped for good. enabledSince is when it was last switched back on (zero when never
	// switched off): events that happened earlier are skipped too, even when they are handed
	// to the fan-out later (a lagging worker, a redelivered event).
	enabled      bool
	enabledSince time.Time
	createdAt    time.Time
	updatedAt    time.Time
}

// Draft is what a client registers.
type Draft struct {
	URL    string
	Events []string
	FormID *string
	Secret *string
	// Enabled, when set, overrides the default of a new webhook (enabled).
	Enabled *bool
}

// New checks a draft and builds a webhook. Whether the URL resolves to a public address is
// checked by the application through a port, since it needs the network.
func New(id, workspaceID string, d Draft, now time.Time) (*Webhook, error) {
	var vs domain.Violations
	w := &Webhook{id: id, workspaceID: workspaceID, formID: d.FormID, enabled: d.Enabled == nil || *d.Enabled,
		createdAt: now.UTC(), updatedAt: now.UTC()}
	w.url = checkURL(&vs, d.URL)
	w.events = checkEvents(&vs, d.Events)
	checkFormID(&vs, d.FormID)
	if d.Secret != nil {
		w.secret = checkSecret(&vs, *d.Secret)
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	return w, nil
}

// UnmarshalFromDatabase rebuilds a stored webhook without re-checking it.
func UnmarshalFromDatabase(id, workspaceID, rawURL string, events []event.Type, formID *string, secret string, enabled bool,
	enabledSince, createdAt, updatedAt time.Time) *Webhook {
	return &Webhook{id: id, workspaceID: workspaceID, url: rawURL, events: events, formID: formID, secret: secret,
		enabled: enabled, enabledSince: enabledSince.UTC(), createdAt: createdAt.UTC(), updatedAt: updatedAt.UTC()}
}

// Patch holds the properties a PATCH included; nil means "leave as is". FormID and Secret are
// double pointers so that null (all forms; no secret) differs from absent.
type Patch struct {
	URL     *string
	Events  *[]string
	FormID  **string
	Secret  **string
	Enabled *bool
}

// Apply changes the included properties; nothing changes when one is invalid.
func (w *Webhook) Apply(p Patch, now time.Time) error {
	var vs domain.Violations
	next := *w
	if p.URL != nil {
		next.url = checkURL(&vs, *p.URL)
	}
	if p.Events != nil {
		next.events = checkEvents(&vs, *p.Events)
	}
	if p.FormID != nil {
		checkFormID(&vs, *p.FormID)
		next.formID = *p.FormID
	}
	if p.Secret != nil {
		next.secret = ""
		if *p.Secret != nil {
			next.secret = checkSecret(&vs, **p.Secret)
		}
	}
	if p.Enabled != nil {
		if *p.Enabled && !w.enabled {
			next.enabledSince = now.UTC()
		}
		next.enabled = *p.Enabled
	}
	if err := vs.Err(); err != nil {
		return err
	}
	next.updatedAt = now.UTC()
	*w = next
	return nil
}

// Matches reports whether the webhook takes the event: it subscribes to it (Subscribes), and
// it was enabled already when the event happened.
func (w *Webhook) Matches(e event.Event) bool {
	return w.Subscribes(e) && !e.OccurredAt.Before(w.enabledSince)
}

// Subscribes reports whether the webhook is enabled and subscribed to the event, whenever it
// happened: same workspace, a subscribed type, and either no form filter or the event's form.
func (w *Webhook) Subscribes(e event.Event) bool {
	if !w.enabled {
		return false
	}
	if e.WorkspaceID != w.workspaceID || (w.formID != nil && *w.formID != e.FormID) {
		return false
	}
	for _, t := range w.events {
		if t == e.Type {
			return true
		}
	}
	return false
}

func checkURL(vs *domain.Violations, raw string) string {
	raw = strings.TrimSpace(raw)
	_, err := weburl.ParseHTTPS(raw)
	switch {
	case raw == "":
		vs.Add("url", "required", "url is required")
	case !text.Field(vs, "url", raw):
	case errors.Is(err, weburl.ErrNotAbsolute):
		vs.Add("url", "invalid_url", "url must be an absolute https:// URL")
	case errors.Is(err, weburl.ErrNoScheme), errors.Is(err, weburl.ErrScheme):
		vs.Add("url", "https_required", "url must use https")
	case errors.Is(err, weburl.ErrUserInfo):
		vs.Add("url", "invalid_url", "url must not carry a user name or password")
	case len(raw) > MaxURL:
		vs.Add("url", "too_long", "url must be at most 2048 characters")
	}
	return raw
}

func checkEvents(vs *domain.Violations, names []string) []event.Type {
	if len(names) == 0 {
		vs.Add("events", "required", "events must name at least one of submission.created, submission.updated, form.published")
		return nil
	}
	seen := map[event.Type]bool{}
	out := make([]event.Type, 0, len(names))
	for i, n := range names {
		t, ok := event.ParseType(n)
		if !ok {
			vs.Add("events["+strconv.Itoa(i)+"]", "invalid_value", "must be one of submission.created, submission.updated, form.published")
			continue
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func checkSecret(vs *domain.Violations, s string) string {
	if s == "" || len(s) > 256 {
		vs.Add("secret", "invalid_length", "secret must be 1 to 256 characters")
	} else {
		text.Field(vs, "secret", s)
	}
	return s
}

// checkFormID refuses a form filter that is not valid text (it is looked up in storage next).
func checkFormID(vs *domain.Violations, formID *string) {
	if formID != nil {
		text.Field(vs, "form_id", *formID)
	}
}

// ID returns the webhook ID.
func (w *Webhook) ID() string { return w.id }

// WorkspaceID returns the owning workspace.
func (w *Webhook) WorkspaceID() string { return w.workspaceID }

// URL returns the endpoint.
func (w *Webhook) URL() string { return w.url }

// Events returns the subscribed event types.
func (w *Webhook) Events() []event.Type { return append([]event.Type(nil), w.events...) }

// FormID returns the form filter, or nil for every form.
func (w *Webhook) FormID() *string { return w.formID }

// Secret returns the signing secret ("" when none); it is never shown to clients.
func (w *Webhook) Secret() string { return w.secret }

// SecretSet reports whether a signing secret is configured.
func (w *Webhook) SecretSet() bool { return w.secret != "" }

// Enabled reports whether events are delivered to the webhook; a disabled webhook skips the
// events that happen while it is disabled.
func (w *Webhook) Enabled() bool { return w.enabled }

// EnabledSince returns when the webhook was last switched back on (zero when never switched off).
func (w *Webhook) EnabledSince() time.Time { return w.enabledSince }

// CreatedAt returns the registration time.
func (w *Webhook) CreatedAt() time.Time { return w.createdAt }

// UpdatedAt returns the time of the last change.
func (w *Webhook) UpdatedAt() time.Time { return w.updatedAt }
