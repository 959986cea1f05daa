package application

import (
	"context"
	"time"

	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
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
	forms  ports.FormRepository
	ids    ports.IDs
	clock  ports.Clock
	limits form.Limits
}

// NewCreateFormHandler makes the command; limits bound the form's fields and texts.
func NewCreateFormHandler(forms ports.FormRepository, ids ports.IDs, clock ports.Clock, limits form.Limits) CreateFormHandler {
	return CreateFormHandler{forms: forms, ids: ids, clock: clock, limits: limits}
}

// Handle validates the draft and stores the form as draft.
func (h CreateFormHandler) Handle(ctx context.Context, cmd CreateForm) (FormView, error) {
	if _, err := require(ctx, access.Write); err != nil {
		return FormView{}, err
	}
	f, err := form.New(h.ids.New(PrefixForm), cmd.WorkspaceID, cmd.Draft, h.newFieldID, h.limits, h.clock.Now())
	if err != nil {
		return FormView{}, err
	}
	if err := h.forms.Create(ctx, f); err != nil {
		return FormView{}, err
	}
	return FormView{Form: f}, nil
}

func (h CreateFormHandler) newFieldID() string { return h.ids.New(PrefixField) }

// UpdateForm applies a PATCH to a form.
type UpdateForm struct {
	WorkspaceID string
	ID          string
	Patch       form.Patch
}

// UpdateFormHandler updates forms and emits form.published when a form becomes published.
type UpdateFormHandler struct {
	forms  ports.FormRepository
	ids    ports.IDs
	clock  ports.Clock
	limits form.Limits
}

// NewUpdateFormHandler makes the command; limits bound the form's fields and texts.
func NewUpdateFormHandler(forms ports.FormRepository, ids ports.IDs, clock ports.Clock, limits form.Limits) UpdateFormHandler {
	return UpdateFormHandler{forms: forms, ids: ids, clock: clock, limits: limits}
}

// Handle applies the patch in one transaction with its event.
func (h UpdateFormHandler) Handle(ctx context.Context, cmd UpdateForm) (FormView, error) {
	if _, err := require(ctx, access.Write); err != nil {
		return FormView{}, err
	}
	f, err := h.forms.Update(ctx, cmd.WorkspaceID, cmd.ID, func(f *form.Form) (ports.Effects, error) {
		now := h.clock.Now()
		published, err := f.Apply(cmd.Patch, func() string { return h.ids.New(PrefixField) }, h.limits, now)
		if err != nil || !published {
			return ports.Effects{}, err
		}
		return ports.Effects{Events: []event.Event{event.Published(h.ids.New(PrefixEvent), f, now)}}, nil
	})
	if err != nil {
		return FormView{}, err
	}
	return withCount(ctx, h.forms, f)
}

// DeleteForm deletes a form and everything it holds.
type DeleteForm struct {
	WorkspaceID string
	ID          string
}

// DeleteFormHandler deletes forms and records form.deleted.
type DeleteFormHandler struct {
	forms ports.FormRepository
	files ports.ObjectStore
	ids   ports.IDs
	clock ports.Clock
}

// NewDeleteFormHandler makes the command; files may be nil when no object store is configured.
func NewDeleteFormHandler(forms ports.FormRepository, files ports.ObjectStore, ids ports.IDs, clock ports.Clock) DeleteFormHandler {
	return DeleteFormHandler{forms: forms, files: files, ids: ids, clock: clock}
}

// Handle deletes the form, its submissions, its files and what is bound to it.
func (h DeleteFormHandler) Handle(ctx context.Context, cmd DeleteForm) error {
	p, err := require(ctx, access.Write)
	if err != nil {
		return err
	}
	if err := deleteFormFiles(ctx, h.forms, h.files, cmd.WorkspaceID, cmd.ID); err != nil {
		return err
	}
	e, err := p.auditEvent(h.ids, h.clock.Now(), audit.FormDeleted, &audit.Target{Type: "form", ID: cmd.ID}, nil)
	if err != nil {
		return err
	}
	return h.forms.Delete(ctx, cmd.WorkspaceID, cmd.ID, e)
}

// GetForm reads one form.
type GetForm struct {
	WorkspaceID string
	ID          string
}

// GetFormHandler reads forms.
type GetFormHandler struct{ forms ports.FormRepository }

// NewGetFormHandler makes the query.
func NewGetFormHandler(forms ports.FormRepository) GetFormHandler {
	return GetFormHandler{forms: forms}
}

// Handle returns the form with its submission count.
func (h GetFormHandler) Handle(ctx context.Context, q GetForm) (FormView, error) {
	if _, err := require(ctx, access.Read); err != nil {
		return FormView{}, err
	}
	f, err := h.forms.Get(ctx, q.WorkspaceID, q.ID)
	if err != nil {
		return FormView{}, err
	}
	return withCount(ctx, h.forms, f)
}

// ListForms reads a page of forms, newest first.
type ListForms struct {
	WorkspaceID string
	Status      *form.Status
	Page        ports.Page
}

// ListFormsHandler lists forms.
type ListFormsHandler struct{ forms ports.FormRepository }

// NewListFormsHandler makes the query.
func NewListFormsHandler(forms ports.FormRepository) ListFormsHandler {
	return ListFormsHandler{forms: forms}
}

// Handle returns up to Page.Limit forms and whether more exist.
func (h ListFormsHandler) Handle(ctx context.Context, q ListForms) ([]FormView, bool, error) {
	if _, err := require(ctx, access.Read); err != nil {
		return nil, false, err
	}
	page := q.Page
	page.Limit++
	forms, err := h.forms.List(ctx, q.WorkspaceID, q.Status, page)
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
	counts, err := h.forms.SubmissionCounts(ctx, q.WorkspaceID, ids)
	if err != nil {
		return nil, false, err
	}
	out := make([]FormView, len(forms))
	for i, f := range forms {
		out[i] = FormView{Form: f, SubmissionCount: counts[f.ID()]}
	}
	return out, more, nil
}

// LastSubmissionTimes asks when the newest submission of each form was received.
type LastSubmissionTimes struct {
	WorkspaceID string
	FormIDs     []string
}

// LastSubmissionTimesHandler reads the forms' last submission times.
type LastSubmissionTimesHandler struct{ forms ports.FormRepository }

// NewLastSubmissionTimesHandler makes the query.
func NewLastSubmissionTimesHandler(forms ports.FormRepository) LastSubmissionTimesHandler {
	return LastSubmissionTimesHandler{forms: forms}
}

// Handle returns the time of the newest stored submission per form ID; forms without
// submissions, and IDs of no form of the workspace, are left out. It is meant for a page of
// forms (a list shows it next to the submission count): one index lookup per form.
func (h LastSubmissionTimesHandler) Handle(ctx context.Context, q LastSubmissionTimes) (map[string]time.Time, error) {
	if _, err := require(ctx, access.Read); err != nil {
		return nil, err
	}
	return h.forms.LastSubmissionTimes(ctx, q.WorkspaceID, q.FormIDs)
}

func withCount(ctx context.Context, forms ports.FormRepository, f *form.Form) (FormView, error) {
	counts, err := forms.SubmissionCounts(ctx, f.WorkspaceID(), []string{f.ID()})
	if err != nil {
		return FormView{}, err
	}
	return FormView{Form: f, SubmissionCount: counts[f.ID()]}, nil
}
