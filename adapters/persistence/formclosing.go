package persistence

import (
	"time"

	"github.com/formward/formward/domain/form"
)

// storedClosing is the stored shape of a form's closing rules; closes_at in Unix milliseconds.
type storedClosing struct {
	ClosesAt         *int64  `json:"closes_at,omitempty"`
	MaxSubmissions   *int64  `json:"max_submissions,omitempty"`
	OnePerEmailField *string `json:"one_per_email_field,omitempty"`
	Message          *string `json:"message,omitempty"`
}

func encodeClosing(c form.Closing) *storedClosing {
	if c == (form.Closing{}) {
		return nil
	}
	out := &storedClosing{MaxSubmissions: c.MaxSubmissions, OnePerEmailField: c.OnePerEmailField, Message: c.Message}
	if c.ClosesAt != nil {
		ms := toMillis(*c.ClosesAt)
		out.ClosesAt = &ms
	}
	return out
}

func (s *storedClosing) decode() form.Closing {
	if s == nil {
		return form.Closing{}
	}
	c := form.Closing{MaxSubmissions: s.MaxSubmissions, OnePerEmailField: s.OnePerEmailField, Message: s.Message}
	if s.ClosesAt != nil {
		t := time.UnixMilli(*s.ClosesAt).UTC()
		c.ClosesAt = &t
	}
	return c
}
