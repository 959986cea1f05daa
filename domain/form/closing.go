package form

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/domain/text"
	"github.com/formward/formward/domain/weburl"
)

// Closing are the rules that close a published form to respondents; API submissions are
// never refused by them. Every rule is optional (nil).
type Closing struct {
	// ClosesAt is when the form stops taking responses.
	ClosesAt *time.Time
	// MaxSubmissions is how many submissions the form holds at most (API ones count too).
	MaxSubmissions *int64
	// OnePerEmailField is the ID of an email field whose answer may appear once per form.
	OnePerEmailField *string
	// Message is what respondents read once the form is closed.
	Message *string
}

// ClosedReason says which closing rule closed a form; empty when it is open.
type ClosedReason string

// The closing rules that can close a form.
const (
	ClosedByTime  ClosedReason = "closes_at"
	ClosedByLimit ClosedReason = "max_submissions"
)

// ClosedError is the refusal of a form that its closing rules closed; it is a
// domain.ErrFormClosed carrying the owner's message.
type ClosedError struct {
	Reason  ClosedReason
	Message string
}

func (e *ClosedError) Error() string { return "form closed: " + string(e.Reason) }

// Unwrap makes a ClosedError a domain.ErrFormClosed.
func (e *ClosedError) Unwrap() error { return domain.ErrFormClosed }

const (
	maxClosingMessage = 5000
	// MaxSubmissionsLimit bounds max_submissions.
	MaxSubmissionsLimit = 1_000_000_000
)

// Reason returns the rule that closes the form at now when it holds count submissions, or "".
func (c Closing) Reason(now time.Time, count int64) ClosedReason {
	if c.ClosesAt != nil && !now.Before(*c.ClosesAt) {
		return ClosedByTime
	}
	if c.MaxSubmissions != nil && count >= *c.MaxSubmissions {
		return ClosedByLimit
	}
	return ""
}

// ClosedReason returns the closing rule that closes the form at now, or "".
func (f *Form) ClosedReason(now time.Time, count int64) ClosedReason {
	return f.settings.Closing.Reason(now, count)
}

// AcceptsRespondents allows published forms that no closing rule closes at now when they
// hold count submissions; the refusal is domain.ErrFormClosed (a *ClosedError for a rule).
func (f *Form) AcceptsRespondents(now time.Time, count int64) error {
	if err := f.AcceptsPublicSubmissions(); err != nil {
		return err
	}
	if r := f.ClosedReason(now, count); r != "" {
		msg := ""
		if m := f.settings.Closing.Message; m != nil {
			msg = *m
		}
		return &ClosedError{Reason: r, Message: msg}
	}
	return nil
}

// SubmissionLimit returns max_submissions, or 0 when the form has no limit.
func (f *Form) SubmissionLimit() int64 {
	if m := f.settings.Closing.MaxSubmissions; m != nil {
		return *m
	}
	return 0
}

// OnePerEmailField returns the field whose answer may appear once per form, if any.
func (f *Form) OnePerEmailField() (Field, bool) {
	id := f.settings.Closing.OnePerEmailField
	if id == nil {
		return Field{}, false
	}
	fl, ok := f.Field(*id)
	return fl, ok && fl.Type == TypeEmail
}

// EmailIdentity is the form of an email answer that one_per_email_field compares: trimmed and
// lower-cased, so "Ada@Example.com " and "ada@example.com" are one respondent.
func EmailIdentity(answer string) string {
	return strings.ToLower(strings.TrimSpace(answer))
}

// checkClosing validates the closing rules that do not depend on the fields and returns them
// in canonical form (times in UTC, to the millisecond).
func checkClosing(vs *domain.Violations, c Closing) Closing {
	if c.ClosesAt != nil {
		t := c.ClosesAt.UTC().Truncate(time.Millisecond)
		c.ClosesAt = &t
	}
	if m := c.MaxSubmissions; m != nil && (*m < 1 || *m > MaxSubmissionsLimit) {
		vs.Add("settings.closing.max_submissions", "out_of_range", fmt.Sprintf("max_submissions must be 1 to %d", MaxSubmissionsLimit))
	}
	if c.Message != nil {
		if text.Field(vs, "settings.closing.message", *c.Message) && utf8.RuneCountInString(*c.Message) > maxClosingMessage {
			vs.Add("settings.closing.message", "too_long", fmt.Sprintf("message must be at most %d characters", maxClosingMessage))
		}
	}
	return c
}

// checkClosingField requires one_per_email_field to name an email field of the form.
func checkClosingField(vs *domain.Violations, c Closing, fields []Field) {
	if c.OnePerEmailField == nil {
		return
	}
	for _, fl := range fields {
		if fl.ID == *c.OnePerEmailField {
			if fl.Type != TypeEmail {
				vs.Add("settings.closing.one_per_email_field", "invalid_value", "one_per_email_field must name a field of type email")
			}
			return
		}
	}
	vs.Add("settings.closing.one_per_email_field", "invalid_value", "one_per_email_field must be the ID of an email field of this form")
}

// AllowsPostsFrom reports whether a page on o may post to the form without a render token
// (form-backend mode).
func (s Settings) AllowsPostsFrom(o origin.Origin) bool {
	return !o.IsZero() && slices.Contains(s.AllowedOrigins, o)
}

// PostOrigins are the origins whose scripts may call the form (CORS): the embed's
// cors_origins and the form-backend mode's allowed_origins.
func (s Settings) PostOrigins() []origin.Origin {
	out := make([]origin.Origin, 0, len(s.Embed.CORSOrigins)+len(s.AllowedOrigins))
	out = append(out, s.Embed.CORSOrigins...)
	return append(out, s.AllowedOrigins...)
}

// NextURL checks a form-backend post's _next: an absolute http(s) URL on one of the allowed
// origins, without user information or characters that could break a header. It returns the
// URL written out again, or false.
func (s Settings) NextURL(raw string) (string, bool) {
	if raw == "" || len(raw) > maxRedirectURL || plainURLText(raw) != nil {
		return "", false
	}
	u, err := weburl.Parse(raw, "https", "http")
	if err != nil {
		return "", false
	}
	out, o, err := u.Canonical()
	if err != nil || !s.AllowsPostsFrom(o) {
		return "", false
	}
	if plainURLText(out) != nil {
		return "", false
	}
	return out, true
}

// copy returns c with its own pointers, so a caller cannot change the form's rules.
func (c Closing) copy() Closing {
	if c.ClosesAt != nil {
		t := *c.ClosesAt
		c.ClosesAt = &t
	}
	if c.MaxSubmissions != nil {
		n := *c.MaxSubmissions
		c.MaxSubmissions = &n
	}
	if c.OnePerEmailField != nil {
		id := *c.OnePerEmailField
		c.OnePerEmailField = &id
	}
	if c.Message != nil {
		m := *c.Message
		c.Message = &m
	}
	return c
}
