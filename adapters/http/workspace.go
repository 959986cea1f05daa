package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
)

var (
	workspaceProps    = []string{"name", "plan", "billing_email", "status", "time_zone"}
	workspaceReadOnly = []string{"id", "cancelled_at", "data_deletion_at", "usage", "created_at", "updated_at"}
)

type usageJSON struct {
	Forms        int64 `json:"forms"`
	Submissions  int64 `json:"submissions"`
	StorageBytes int64 `json:"storage_bytes"`
	Members      int64 `json:"members"`
}

type workspaceJSON struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Plan           string    `json:"plan"`
	BillingEmail   *string   `json:"billing_email"`
	Status         string    `json:"status"`
	TimeZone       string    `json:"time_zone"`
	CancelledAt    *string   `json:"cancelled_at"`
	DataDeletionAt *string   `json:"data_deletion_at"`
	Usage          usageJSON `json:"usage"`
	CreatedAt      string    `json:"created_at"`
	UpdatedAt      string    `json:"updated_at"`
}

func presentWorkspace(v workspaceapp.WorkspaceView) workspaceJSON {
	w, u := v.Workspace, v.Usage
	out := workspaceJSON{ID: w.ID(), Name: w.Name(), Plan: string(w.Plan()), Status: string(w.Status()), TimeZone: w.TimeZone(),
		CancelledAt: optionalTime(w.CancelledAt()), DataDeletionAt: optionalTime(w.DataDeletionAt()),
		Usage:     usageJSON{Forms: u.Forms, Submissions: u.Submissions, StorageBytes: u.StorageBytes, Members: u.Members},
		CreatedAt: domain.FormatTime(w.CreatedAt()), UpdatedAt: domain.FormatTime(w.UpdatedAt())}
	if e := w.BillingEmail(); e != "" {
		out.BillingEmail = &e
	}
	return out
}

// optionalTime formats a time that may be absent as null.
func optionalTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := domain.FormatTime(*t)
	return &s
}

func (a *api) getWorkspace(c *gin.Context) {
	v, err := a.App.Queries.GetWorkspace.Handle(c.Request.Context(), workspaceapp.GetWorkspace{})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentWorkspace(v))
}

func (a *api) updateWorkspace(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, workspaceProps, workspaceReadOnly)
	if !ok {
		return
	}
	var s workspace.Settings
	for name, dst := range map[string]**string{"name": &s.Name, "plan": &s.Plan, "status": &s.Status, "time_zone": &s.TimeZone} {
		if v, present := o.str(name); present {
			*dst = &v
		}
	}
	// billing_email: null clears it, as an empty string does.
	if v, present := o.nullableStr("billing_email"); present {
		e := ""
		if v != nil {
			e = *v
		}
		s.BillingEmail = &e
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	v, err := a.App.Commands.UpdateWorkspace.Handle(c.Request.Context(), workspaceapp.UpdateWorkspace{Settings: s})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentWorkspace(v))
}
