package httpapi

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

type auditTargetJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type auditEventJSON struct {
	ID        string           `json:"id"`
	Action    string           `json:"action"`
	Actor     actorJSON        `json:"actor"`
	Target    *auditTargetJSON `json:"target"`
	IPHash    *string          `json:"ip_hash"`
	Details   map[string]any   `json:"details"`
	CreatedAt string           `json:"created_at"`
}

func presentAuditEvent(e audit.Event) auditEventJSON {
	out := auditEventJSON{ID: e.ID, Action: string(e.Action), Actor: presentActor(e.Actor), Details: e.Details,
		CreatedAt: domain.FormatTime(e.CreatedAt)}
	if e.Target != nil {
		out.Target = &auditTargetJSON{Type: e.Target.Type, ID: e.Target.ID}
	}
	if e.IPHash != "" {
		h := e.IPHash
		out.IPHash = &h
	}
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	return out
}

// validAction reports whether s looks like an audit action: resource.verb in lower case.
func validAction(s string) bool {
	dots := 0
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b == '.':
			dots++
			if i == 0 || i == len(s)-1 {
				return false
			}
		case !(b >= 'a' && b <= 'z' || b == '_'):
			return false
		}
	}
	return dots == 1 && len(s) <= 64
}

// validActorID reports whether s looks like an actor's ID: "system" or a prefixed ID of
// URL-safe characters.
func validActorID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}

func (a *api) listAuditEvents(c *gin.Context) {
	var q workspace.ListAuditEvents
	list := "audit-events:" + principal(c).WorkspaceID
	if s, ok := c.GetQuery("action"); ok {
		if !validAction(s) {
			fail(c, a.Logger, badRequest("action must name an audit action such as api_key.created"))
			return
		}
		q.Action = s
		list += ":" + s
	}
	if s, ok := c.GetQuery("actor_id"); ok {
		if !validActorID(s) {
			fail(c, a.Logger, badRequest("actor_id must be the ID of a user, an API key or system"))
			return
		}
		q.ActorID = s
		list += ":actor=" + s
	}
	if err := createdRange(c, &q.CreatedAfter, &q.CreatedBefore); err != nil {
		fail(c, a.Logger, err)
		return
	}
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]audit.Event, bool, error) {
		q.Page = page
		return a.App.Queries.ListAuditEvents.Handle(ctx, q)
	}, func(e audit.Event) (any, ports.Position) {
		return presentAuditEvent(e), ports.Position{CreatedAt: e.CreatedAt, ID: e.ID}
	})
}
