package workspace

import (
	"context"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

// ListAuditEvents reads a page of the principal's workspace's audit log, newest first,
// optionally of one action, of one actor (a user or API key ID) and within exclusive time bounds.
type ListAuditEvents struct {
	Action        string
	ActorID       string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	Page          ports.Page
}

// ListAuditEventsHandler lists audit events.
type ListAuditEventsHandler struct{ log ports.AuditLog }

// NewListAuditEventsHandler makes the query.
func NewListAuditEventsHandler(log ports.AuditLog) ListAuditEventsHandler {
	return ListAuditEventsHandler{log: log}
}

// Handle returns up to Page.Limit events and whether more exist.
func (h ListAuditEventsHandler) Handle(ctx context.Context, q ListAuditEvents) ([]audit.Event, bool, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]audit.Event, error) {
		return h.log.List(ctx, p.WorkspaceID, ports.AuditQuery{Page: page, Action: q.Action, ActorID: q.ActorID,
			CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore})
	})
}
