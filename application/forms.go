package application

import (
	"context"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// FormView is a form with its submission count, as the API shows it.
type FormView struct {
	Form            *form.Form
	SubmissionCount int64
}

// CreateForm asks for a new draft form.
type CreateForm struct {
	WorkspaceID string
	Draft       form.Draft
}

// CreateFormHandler creates forms.
type CreateFormHandler struct {
	d Deps
	s Settings
}

// Handle validates the draft and stores the form as draft.
func (h CreateFormHandler) Handle(ctx context.Context, cmd CreateForm) (FormView, error) {
	f, err := form.New(h.d.IDs.New(PrefixForm), cmd.WorkspaceID, cmd.Draft, h.newFieldID, h.s.FormLimits, h.d.Clock.Now())
	if err != nil {
		return FormView{}, err
	}
	if err := h.d.Forms.Create(ctx, f); err != nil {
		return FormView{}, err
	}
	return FormView{Form: f}, nil
}

func (h CreateFormHandler) newFieldID() string { return h.d.IDs.New(PrefixField) }

// UpdateForm applies a PATCH to a form.
type UpdateForm struct {
	WorkspaceID string
	ID          string
	Patch       form.Patch
}

// UpdateFormHandler updates forms and emits form.published when a form becomes published.
type UpdateFormHandler struct {
	d Deps
	s Settings
}

// Handle applies the patch in one transaction with its event.
func (h UpdateFormHandler) Handle(ctx context.Context, cmd UpdateForm) (FormView, error) {
	f, err := h.d.Forms.Update(ctx, cmd.WorkspaceID, cmd.ID, func(f *form.Form) ([]event.Event, error) {
		now := h.d.Clock.Now()
		published, err := f.Apply(cmd.Patch, func() string { return h.d.IDs.New(PrefixField) }, h.s.FormLimits, now)
		if err != nil || !published {
			return nil, err
		}
		return []event.Event{event.Published(h.d.IDs.New(PrefixEvent), f, now)}, nil
	})
	if err != nil {
		return FormView{}, err
	}
	return withCount(ctx, h.d.Forms, f)
}

// DeleteForm deletes a form and everything it holds.
type DeleteForm struct {
	WorkspaceID string
	ID          string
}

// DeleteFormHandler deletes forms.
type DeleteFormHandler struct{ d Deps }

// Handle deletes the form, its submissions, its files and what is bound to it.
func (h DeleteFormHandler) Handle(ctx context.Context, cmd DeleteForm) error {
	if err := deleteFormFiles(ctx, h.d, cmd.WorkspaceID, cmd.ID); err != nil {
		return err
	}
	return h.d.Forms.Delete(ctx, cmd.WorkspaceID, cmd.ID)
}

// GetForm reads one form.
type GetForm struct {
	WorkspaceID string
	ID          string
}

// GetFormHandler reads forms.
type GetFormHandler struct{ d Deps }

// Handle returns the form with its submission count.
func (h GetFormHandler) Handle(ctx context.Context, q GetForm) (FormView, error) {
	f, err := h.d.Forms.Get(ctx, q.WorkspaceID, q.ID)
	if err != nil {
		return FormView{}, err
	}
	return withCount(ctx, h.d.Forms, f)
}

// ListForms reads a page of forms, newest first.
type ListForms struct {
	WorkspaceID string
	Status      *form.Status
	Page        ports.Page
}

// ListFormsHandler lists forms.
type ListFormsHandler struct{ d Deps }

// Handle returns up to Page.Limit forms and whether more exist.
func (h ListFormsHandler) Handle(ctx context.Context, q ListForms) ([]FormView, bool, error) {
	page := q.Page
	page.Limit++
	forms, err := h.d.Forms.List(ctx, q.WorkspaceID, q.Status, page)
	if err != nil {
		return nil, false, err
	}
	more := len(forms) > q.Page.Limit
	if more {
		forms = forms[:q.Page.Limit]
	}
	ids := make([]string, len(forms))
	for i, f := range forms {
		ids[i] = f.ID()
	}
	counts, err := h.d.Forms.SubmissionCounts(ctx, q.WorkspaceID, ids)
	if err != nil {
		return nil, false, err
	}
	out := make([]FormView, len(forms))
	for i, f := range forms {
		out[i] = FormView{Form: f, SubmissionCount: counts[f.ID()]}
	}
	return out, more, nil
}

func withCount(ctx context.Context, forms ports.FormRepository, f *form.Form) (FormView, error) {
	counts, err := forms.SubmissionCounts(ctx, f.WorkspaceID(), []string{f.ID()})
	if err != nil {
		return FormView{}, err
	}
	return FormView{Form: f, SubmissionCount: counts[f.ID()]}, nil
}
