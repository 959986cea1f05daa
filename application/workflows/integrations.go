package workflows

import (
	"context"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/ports"
)

// CreateIntegration connects a third-party account to a workspace.
type CreateIntegration struct {
	Draft integration.Draft
}

// CreateIntegrationHandler creates integrations.
type CreateIntegrationHandler struct {
	integrations ports.IntegrationRepository
	ids          ports.IDs
	clock        ports.Clock
}

// NewCreateIntegrationHandler makes the command.
func NewCreateIntegrationHandler(integrations ports.IntegrationRepository, ids ports.IDs, clock ports.Clock) CreateIntegrationHandler {
	return CreateIntegrationHandler{integrations: integrations, ids: ids, clock: clock}
}

// Handle validates the credentials' shape and stores them (sealed).
func (h CreateIntegrationHandler) Handle(ctx context.Context, cmd CreateIntegration) (*integration.Integration, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return nil, err
	}
	i, err := integration.New(h.ids.New(ports.PrefixIntegration), p.WorkspaceID, cmd.Draft, h.clock.Now())
	if err != nil {
		return nil, err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.IntegrationConnected, integrationTarget(i), map[string]any{"type": i.Type()})
	if err != nil {
		return nil, err
	}
	if err := h.integrations.Create(ctx, i, e); err != nil {
		return nil, err
	}
	return i, nil
}

// GetIntegration reads one integration.
type GetIntegration struct {
	ID string
}

// GetIntegrationHandler reads integrations.
type GetIntegrationHandler struct{ integrations ports.IntegrationRepository }

// NewGetIntegrationHandler makes the query.
func NewGetIntegrationHandler(integrations ports.IntegrationRepository) GetIntegrationHandler {
	return GetIntegrationHandler{integrations: integrations}
}

// Handle returns the integration of the workspace, or domain.ErrNotFound.
func (h GetIntegrationHandler) Handle(ctx context.Context, q GetIntegration) (*integration.Integration, error) {
	_, i, err := auth.Load(ctx, access.Read, h.integrations, q.ID)
	return i, err
}

// ListIntegrations reads a page of integrations, newest first.
type ListIntegrations struct {
	Page ports.Page
}

// ListIntegrationsHandler lists integrations.
type ListIntegrationsHandler struct{ integrations ports.IntegrationRepository }

// NewListIntegrationsHandler makes the query.
func NewListIntegrationsHandler(integrations ports.IntegrationRepository) ListIntegrationsHandler {
	return ListIntegrationsHandler{integrations: integrations}
}

// Handle returns up to Page.Limit integrations and whether more exist.
func (h ListIntegrationsHandler) Handle(ctx context.Context, q ListIntegrations) ([]*integration.Integration, bool, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*integration.Integration, error) {
		return h.integrations.List(ctx, p.WorkspaceID, page)
	})
}

// DeleteIntegration disconnects an integration.
type DeleteIntegration struct {
	ID string
}

// DeleteIntegrationHandler deletes integrations and records integration.disconnected.
type DeleteIntegrationHandler struct {
	integrations ports.IntegrationRepository
	ids          ports.IDs
	clock        ports.Clock
}

// NewDeleteIntegrationHandler makes the command.
func NewDeleteIntegrationHandler(integrations ports.IntegrationRepository, ids ports.IDs, clock ports.Clock) DeleteIntegrationHandler {
	return DeleteIntegrationHandler{integrations: integrations, ids: ids, clock: clock}
}

// Handle deletes the integration; actions that need it fail at run time from now on.
func (h DeleteIntegrationHandler) Handle(ctx context.Context, cmd DeleteIntegration) error {
	p, i, err := auth.Load(ctx, access.Write, h.integrations, cmd.ID)
	if err != nil {
		return err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.IntegrationDisconnected, integrationTarget(i), map[string]any{"type": i.Type()})
	if err != nil {
		return err
	}
	return h.integrations.Delete(ctx, p.WorkspaceID, cmd.ID, e)
}
