package capture

import (
	"context"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/ports"
)

// CountFieldAnswers asks how many stored submissions of a form hold an answer to one of its
// fields (a current field, or one removed from the form).
type CountFieldAnswers struct {
	FormID  string
	FieldID string
}

// CountFieldAnswersHandler counts the answers a field has, for the confirmation that removing
// it asks for.
type CountFieldAnswersHandler struct {
	forms   ports.FormRepository
	scanner ports.SubmissionScanner
	batch   int
}

// NewCountFieldAnswersHandler makes the query.
func NewCountFieldAnswersHandler(forms ports.FormRepository, scanner ports.SubmissionScanner) CountFieldAnswersHandler {
	return CountFieldAnswersHandler{forms: forms, scanner: scanner, batch: ExportBatch}
}

// WithBatch returns the handler reading n submissions at a time (tests cross batch edges).
func (h CountFieldAnswersHandler) WithBatch(n int) CountFieldAnswersHandler {
	if n > 0 {
		h.batch = n
	}
	return h
}

// Handle returns how many submissions of the form have an answer to the field. An unknown form
// (or one of another workspace) or a field the form never had is domain.ErrNotFound.
//
// Answers are sealed, so the count reads and decrypts the form's submissions page by page
// (one batch in memory at a time, as an export does); issue 24 replaces this with per-field
// counters kept at capture.
func (h CountFieldAnswersHandler) Handle(ctx context.Context, q CountFieldAnswers) (int64, error) {
	p, f, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return 0, err
	}
	if _, ok := f.Field(q.FieldID); !ok {
		if _, ok := f.RemovedField(q.FieldID); !ok {
			return 0, domain.ErrNotFound
		}
	}
	var n int64
	page := ports.OldestFirst{Limit: h.batch}
	for {
		subs, err := h.scanner.ListOldestFirst(ctx, p.WorkspaceID, f.ID(), page)
		if err != nil {
			return 0, err
		}
		for _, s := range subs {
			if _, ok := s.Answer(q.FieldID); ok {
				n++
			}
		}
		if len(subs) < page.Limit {
			return n, nil
		}
		last := subs[len(subs)-1]
		page.After = &ports.Position{CreatedAt: last.SubmittedAt(), ID: last.ID()}
	}
}
