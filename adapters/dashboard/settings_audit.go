package dashboard

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/audit"
)

// Audit log: the workspace's audit events, newest first, filtered by action.

// mountAudit adds the audit log to the workspace routes.
func (h *Handler) mountAudit(w *gin.RouterGroup) {
	w.GET("/settings/audit-log", h.audit)
}

type auditRow struct {
	Action, Class, Actor, ActorType, Target, Details string
	At                                               time.Time
}

// actorName is who did something, as the audit log and the API keys page show it.
func actorName(a audit.Actor) string {
	switch {
	case a.Name != "":
		return a.Name
	case a.Type == audit.ActorSystem:
		return "Formward (command line)"
	}
	return a.ID
}

type auditData struct {
	Action  string
	Actions []string
	Events  []auditRow
	Pager   pager
}

var auditActions = []audit.Action{audit.APIKeyCreated, audit.APIKeyRevoked, audit.MemberInvited, audit.InvitationWithdrawn, audit.MemberJoined,
	audit.MemberRoleChanged, audit.MemberRemoved, audit.WorkspaceUpdated, audit.UserSignedIn, audit.UserSignInFailed, audit.UserPasswordChanged,
	audit.UserTwoFactorOn, audit.UserTwoFactorOff, audit.FormDeleted, audit.SubmissionDeleted, audit.SubmissionsExported, audit.RetentionDeleted,
	audit.PrivacyExported, audit.PrivacyErased}

func (h *Handler) audit(c *gin.Context) {
	action := c.Query("action")
	d := auditData{Action: action}
	for _, a := range auditActions {
		d.Actions = append(d.Actions, string(a))
	}
	sort.Strings(d.Actions)
	events, more, err := h.app.Queries.ListAuditEvents.Handle(c.Request.Context(), workspaceapp.ListAuditEvents{Action: action, Page: pageOf(c)})
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, e := range events {
		row := auditRow{Action: string(e.Action), Actor: actorName(e.Actor), ActorType: strings.ReplaceAll(e.Actor.Type, "_", " "), At: e.CreatedAt, Details: details(e.Details)}
		if e.Target != nil {
			row.Target = e.Target.Type + " " + e.Target.ID
		}
		switch {
		case strings.HasSuffix(row.Action, "failed"), strings.Contains(row.Action, "deleted"), strings.Contains(row.Action, "revoked"), strings.Contains(row.Action, "removed"), strings.Contains(row.Action, "erased"):
			row.Class = "badge-red"
		case strings.HasSuffix(row.Action, "created"), strings.HasSuffix(row.Action, "joined"), strings.HasSuffix(row.Action, "signed_in"):
			row.Class = "badge-green"
		default:
			row.Class = "badge-blue"
		}
		d.Events = append(d.Events, row)
	}
	if n := len(events); n > 0 {
		d.Pager = pagerFor(c, more, events[n-1].CreatedAt, events[n-1].ID)
	}
	h.render(c, http.StatusOK, "audit", &view{Title: "Audit log", Data: d})
}

// details shows an event's details as "key: value" pairs, in a stable order.
func details(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := m[k]
		if inner, ok := v.(map[string]any); ok {
			v = "(" + details(inner) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s: %v", strings.ReplaceAll(k, "_", " "), v))
	}
	return strings.Join(parts, "; ")
}
