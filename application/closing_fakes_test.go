package application_test

import (
	"context"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// AddGuarded applies the guards as the database does inside its transaction: the token, the
// email key, then the form's limit (every stored submission of the form counts).
func (r *memSubmissions) AddGuarded(ctx context.Context, s *submission.Submission, e event.Event, g ports.CaptureGuards) error {
	if g.Token != nil && r.spent[g.Token.Nonce] {
		return ports.ErrTokenUsed
	}
	if g.EmailKey != "" && r.emails[s.FormID()+"|"+g.EmailKey] {
		return ports.ErrEmailUsed
	}
	if g.MaxSubmissions > 0 {
		var n int64
		for _, it := range r.items {
			if it.FormID() == s.FormID() {
				n++
			}
		}
		if n >= g.MaxSubmissions {
			return domain.ErrFormClosed
		}
	}
	if g.Token != nil {
		if r.spent == nil {
			r.spent = map[string]bool{}
		}
		r.spent[g.Token.Nonce] = true
	}
	if g.EmailKey != "" {
		if r.emails == nil {
			r.emails = map[string]bool{}
		}
		r.emails[s.FormID()+"|"+g.EmailKey] = true
	}
	return r.Add(ctx, s, e)
}
