package forms

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
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
	Draft form.Draft
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
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return FormView{}, err
	}
	if err := refFree(ctx, h.forms, p.WorkspaceID, "", cmd.Draft.Ref); err != nil {
		return FormView{}, err
	}
	now := h.clock.Now()
	f, err := form.New(h.ids.New(ports.PrefixForm), p.WorkspaceID, cmd.Draft, h.newFieldID, h.limits, now)
	if err != nil {
		return FormView{}, err
	}
	e, err := p.AuditEvent(h.ids, now, audit.FormCreated, formTarget(f), map[string]any{"name": f.Name(), "fields": len(f.Fields())})
	if err != nil {
		return FormView{}, err
	}
	if err := h.forms.Create(ctx, f, e); err != nil {
		return FormView{}, err
	}
	return FormView{Form: f}, nil
}

func (h CreateFormHandler) newFieldID() string { return h.ids.New(ports.PrefixField) }

// UpdateForm applies a PATCH to a form.
type UpdateForm struct {
	ID    string
	Patch form.Patch
}

// UpdateFormHandler updates forms and emits form.published when a form becomes published; the
// audit log records each change (form.updated, form.published, form.archived).
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
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return FormView{}, err
	}
	if cmd.Patch.Ref != nil {
		if err := refFree(ctx, h.forms, p.WorkspaceID, cmd.ID, *cmd.Patch.Ref); err != nil {
			return FormView{}, err
		}
	}
	f, err := h.forms.Update(ctx, p.WorkspaceID, cmd.ID, func(f *form.Form) (ports.Effects, error) {
		now := h.clock.Now()
		before := *f
		published, err := f.Apply(cmd.Patch, func() string { return h.ids.New(ports.PrefixField) }, h.limits, now)
		if err != nil {
			return ports.Effects{}, err
		}
		var fx ports.Effects
		if action, details, changed := formChange(&before, f); changed {
			e, err := p.AuditEvent(h.ids, now, action, formTarget(f), details)
			if err != nil {
				return ports.Effects{}, err
			}
			fx.Audit = []audit.Event{e}
		}
		if f.Version() != before.Version() {
			e, err := versionEvent(p, h.ids, now, &before, f, nil)
			if err != nil {
				return ports.Effects{}, err
			}
			fx.Audit = append(fx.Audit, e)
		}
		if published {
			fx.Events = []event.Event{event.Published(h.ids.New(ports.PrefixEvent), f, now)}
		}
		return fx, nil
	})
	if err != nil {
		return FormView{}, err
	}
	return withCount(ctx, h.forms, f)
}

// DeleteForm deletes a form and everything it holds.
type DeleteForm struct {
	ID string
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
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return err
	}
	// The form's name goes into the audit event, so that the log still says which form it was.
	f, err := h.forms.Get(ctx, p.WorkspaceID, cmd.ID)
	if err != nil {
		return err
	}
	if err := deleteFormFiles(ctx, h.forms, h.files, p.WorkspaceID, cmd.ID); err != nil {
		return err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.FormDeleted, formTarget(f), map[string]any{"name": f.Name()})
	if err != nil {
		return err
	}
	return h.forms.Delete(ctx, p.WorkspaceID, cmd.ID, e)
}

// GetForm reads one form.
type GetForm struct {
	ID string
}

// GetFormHandler reads forms.
type GetFormHandler struct{ forms ports.FormRepository }

// NewGetFormHandler makes the query.
func NewGetFormHandler(forms ports.FormRepository) GetFormHandler {
	return GetFormHandler{forms: forms}
}

// Handle returns the form with its submission count.
func (h GetFormHandler) Handle(ctx context.Context, q GetForm) (FormView, error) {
	_, f, err := auth.Load(ctx, access.Read, h.forms, q.ID)
	if err != nil {
		return FormView{}, err
	}
	return withCount(ctx, h.forms, f)
}

// ListForms reads a page of forms, newest first.
type ListForms struct {
	Status *form.Status
	Page   ports.Page
}

// ListFormsHandler lists forms.
type ListFormsHandler struct{ forms ports.FormRepository }

// NewListFormsHandler makes the query.
func NewListFormsHandler(forms ports.FormRepository) ListFormsHandler {
	return ListFormsHandler{forms: forms}
}

// Handle returns up to Page.Limit forms and whether more exist.
func (h ListFormsHandler) Handle(ctx context.Context, q ListForms) ([]FormView, bool, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return nil, false, err
	}
	forms, more, err := ports.ReadPage(q.Page, func(page ports.Page) ([]*form.Form, error) {
		return h.forms.List(ctx, p.WorkspaceID, q.Status, page)
	})
	if err != nil {
		return nil, false, err
	}
	ids := make([]string, len(forms))
	for i, f := range forms {
		ids[i] = f.ID()
	}
	counts, err := h.forms.SubmissionCounts(ctx, p.WorkspaceID, ids)
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
	FormIDs []string
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
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return nil, err
	}
	return h.forms.LastSubmissionTimes(ctx, p.WorkspaceID, q.FormIDs)
}

func withCount(ctx context.Context, forms ports.FormRepository, f *form.Form) (FormView, error) {
	counts, err := forms.SubmissionCounts(ctx, f.WorkspaceID(), []string{f.ID()})
	if err != nil {
		return FormView{}, err
	}
	return FormView{Form: f, SubmissionCount: counts[f.ID()]}, nil
}

// deleteFormFiles removes every file of the form (they all live under its prefix) before the
// form itself goes, so a failure leaves the form in place to delete again.
// files may be nil (no object store): there is nothing to delete then.
func deleteFormFiles(ctx context.Context, forms ports.FormRepository, files ports.ObjectStore, workspaceID, formID string) error {
	if files == nil {
		return nil
	}
	// Reading the form first answers unknown IDs with not found and never touches another
	// workspace's files.
	if _, err := forms.Get(ctx, workspaceID, formID); err != nil {
		return err
	}
	if err := files.DeletePrefix(ctx, ports.FormFilesPrefix(workspaceID, formID)); err != nil {
		return fmt.Errorf("delete form files: %w", err)
	}
	return nil
}

// refFree returns a conflict naming the ref when another form of the workspace (not formID)
// already has it; the unique index still refuses a ref taken in the meantime.
func refFree(ctx context.Context, forms ports.FormRepository, workspaceID, formID string, ref *string) error {
	if ref == nil || !form.ValidRef(*ref) {
		return nil
	}
	other, err := forms.FindByRef(ctx, workspaceID, *ref)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil
	case err != nil:
		return err
	case other.ID() != formID:
		return domain.Conflict("ref " + *ref + " is already used by another form of this workspace")
	}
	return nil
}
