package forms

import (
	"context"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// versionEvent is the audit event of a new version of f's fields: the version number, the
// number of questions and how many were added, removed and edited since before; restoredFrom
// names the version a restore copied.
func versionEvent(p auth.Principal, ids ports.IDs, now time.Time, before, f *form.Form, restoredFrom *int) (audit.Event, error) {
	added, removed, edited := fieldChanges(before.Fields(), f.Fields())
	details := map[string]any{"name": f.Name(), "version": f.Version(), "fields": len(f.Fields()),
		"fields_added": added, "fields_removed": removed, "fields_edited": edited}
	if restoredFrom != nil {
		details["restored_from"] = *restoredFrom
	}
	return p.AuditEvent(ids, now, audit.FormVersionCreated, formTarget(f), details)
}

// ListFormVersions reads a page of the versions of a form, newest first: at most Limit
// versions below Before (0: from the newest).
type ListFormVersions struct {
	ID            string
	Before, Limit int
}

// ListFormVersionsHandler lists form versions.
type ListFormVersionsHandler struct{ forms ports.FormRepository }

// NewListFormVersionsHandler makes the query.
func NewListFormVersionsHandler(forms ports.FormRepository) ListFormVersionsHandler {
	return ListFormVersionsHandler{forms: forms}
}

// Handle returns the page of versions of the caller's workspace's form and whether older
// versions follow, or domain.ErrNotFound.
func (h ListFormVersionsHandler) Handle(ctx context.Context, q ListFormVersions) ([]ports.FormVersion, bool, error) {
	p, f, err := auth.Load(ctx, access.Read, h.forms, q.ID)
	if err != nil {
		return nil, false, err
	}
	if q.Limit < 1 {
		q.Limit = DefaultVersionsPage
	}
	vs, err := h.forms.ListVersions(ctx, p.WorkspaceID, f.ID(), q.Before, q.Limit+1)
	if err != nil {
		return nil, false, err
	}
	if len(vs) > q.Limit {
		return vs[:q.Limit], true, nil
	}
	return vs, false, nil
}

// DefaultVersionsPage is how many versions a page holds when the query names no limit.
const DefaultVersionsPage = 20

// GetFormVersion reads one version of a form.
type GetFormVersion struct {
	ID      string
	Version int
}

// GetFormVersionHandler reads form versions.
type GetFormVersionHandler struct{ forms ports.FormRepository }

// NewGetFormVersionHandler makes the query.
func NewGetFormVersionHandler(forms ports.FormRepository) GetFormVersionHandler {
	return GetFormVersionHandler{forms: forms}
}

// Handle returns the version, or domain.ErrNotFound.
func (h GetFormVersionHandler) Handle(ctx context.Context, q GetFormVersion) (ports.FormVersion, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return ports.FormVersion{}, err
	}
	return h.forms.GetVersion(ctx, p.WorkspaceID, q.ID, q.Version)
}

// RestoreFormVersion makes an earlier version's fields the form's fields again.
type RestoreFormVersion struct {
	ID      string
	Version int
}

// RestoreFormVersionHandler restores versions as new versions and records
// form.version_created with restored_from.
type RestoreFormVersionHandler struct {
	forms ports.FormRepository
	ids   ports.IDs
	clock ports.Clock
}

// NewRestoreFormVersionHandler makes the command.
func NewRestoreFormVersionHandler(forms ports.FormRepository, ids ports.IDs, clock ports.Clock) RestoreFormVersionHandler {
	return RestoreFormVersionHandler{forms: forms, ids: ids, clock: clock}
}

// Handle restores the version in one transaction with its audit event: domain.ErrNotFound for
// a version that does not exist, domain.ErrConflict for an archived form.
func (h RestoreFormVersionHandler) Handle(ctx context.Context, cmd RestoreFormVersion) (FormView, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return FormView{}, err
	}
	v, err := h.forms.GetVersion(ctx, p.WorkspaceID, cmd.ID, cmd.Version)
	if err != nil {
		return FormView{}, err
	}
	f, err := h.forms.Update(ctx, p.WorkspaceID, cmd.ID, func(f *form.Form) (ports.Effects, error) {
		now := h.clock.Now()
		before := *f
		if err := f.RestoreFields(v.Fields, now); err != nil {
			return ports.Effects{}, err
		}
		if f.Version() == before.Version() {
			return ports.Effects{}, nil
		}
		e, err := versionEvent(p, h.ids, now, &before, f, &cmd.Version)
		if err != nil {
			return ports.Effects{}, err
		}
		return ports.Effects{Audit: []audit.Event{e}}, nil
	})
	if err != nil {
		return FormView{}, err
	}
	return withCount(ctx, h.forms, f)
}
