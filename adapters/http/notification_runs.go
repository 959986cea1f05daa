package httpapi

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// A form's notifications: the settings under settings.notifications and the run log at
// GET /v1/forms/{id}/notification-runs.

var (
	notificationsProps = []string{"owner", "respondent"}
	ownerProps         = []string{"enabled", "to"}
	respondentProps    = []string{"enabled", "email_field_id", "subject", "body"}
)

// notificationSettings reads settings.notifications; omitted parts are off.
func notificationSettings(so object) form.Notifications {
	var n form.Notifications
	no, ok := so.child("notifications")
	if !ok {
		return n
	}
	no.allow(notificationsProps, nil)
	if o, ok := no.child("owner"); ok {
		o.allow(ownerProps, nil)
		n.Owner.Enabled, _ = o.boolean("enabled")
		n.Owner.To, _ = o.strings("to")
	}
	if r, ok := no.child("respondent"); ok {
		r.allow(respondentProps, nil)
		n.Respondent.Enabled, _ = r.boolean("enabled")
		if id, _ := r.nullableStr("email_field_id"); id != nil { // null, as read back, is no field
			n.Respondent.EmailFieldID = *id
		}
		n.Respondent.Subject, _ = r.str("subject")
		n.Respondent.Body, _ = r.str("body")
	}
	return n
}

type ownerNotificationJSON struct {
	Enabled bool     `json:"enabled"`
	To      []string `json:"to"`
}

type respondentNotificationJSON struct {
	Enabled      bool    `json:"enabled"`
	EmailFieldID *string `json:"email_field_id"`
	Subject      string  `json:"subject"`
	Body         string  `json:"body"`
}

type notificationsJSON struct {
	Owner      ownerNotificationJSON      `json:"owner"`
	Respondent respondentNotificationJSON `json:"respondent"`
}

func presentNotifications(n form.Notifications) notificationsJSON {
	out := notificationsJSON{
		Owner:      ownerNotificationJSON{Enabled: n.Owner.Enabled, To: n.Owner.To},
		Respondent: respondentNotificationJSON{Enabled: n.Respondent.Enabled, Subject: n.Respondent.Subject, Body: n.Respondent.Body},
	}
	if out.Owner.To == nil {
		out.Owner.To = []string{}
	}
	if id := n.Respondent.EmailFieldID; id != "" {
		out.Respondent.EmailFieldID = &id
	}
	return out
}

// notificationRunJSON is the workflow run shape with workflow_id null and the kind.
type notificationRunJSON struct {
	runJSON
	WorkflowID *string `json:"workflow_id"`
	Kind       string  `json:"kind"`
}

func presentNotificationRun(r *workflow.Run) notificationRunJSON {
	return notificationRunJSON{runJSON: presentRun(r), Kind: string(r.Kind())}
}

func (a *api) listNotificationRuns(c *gin.Context) {
	p := principal(c)
	list := "notification-runs:" + p.WorkspaceID + ":" + c.Param("id")
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*workflow.Run, bool, error) {
		return a.App.Queries.ListNotificationRuns.Handle(ctx, workflows.ListNotificationRuns{FormID: c.Param("id"), Page: page})
	}, func(r *workflow.Run) (any, ports.Position) {
		return presentNotificationRun(r), ports.Position{CreatedAt: r.CreatedAt(), ID: r.ID()}
	})
}
