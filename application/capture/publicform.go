package capture

import (
	"context"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// GetPublicForm reads a form by its ID alone, as the respondent's URL names it.
type GetPublicForm struct {
	ID string
}

// GetPublicFormHandler reads forms for the public page; the caller decides what each status shows.
type GetPublicFormHandler struct{ forms ports.FormRepository }

// NewGetPublicFormHandler makes the query.
func NewGetPublicFormHandler(forms ports.FormRepository) GetPublicFormHandler {
	return GetPublicFormHandler{forms: forms}
}

// Handle returns the form in any status, or domain.ErrNotFound.
func (h GetPublicFormHandler) Handle(ctx context.Context, q GetPublicForm) (*form.Form, error) {
	return h.forms.Find(ctx, q.ID)
}
