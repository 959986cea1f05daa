package persistence

import (
	"context"
	"fmt"

	"github.com/google/wire"

	"github.com/formward/formward/ports"
)

// ProviderSet is the database, migrated at start and closed by the cleanup, and every
// repository over it, each bound to its port.
var ProviderSet = wire.NewSet(
	Provide,
	NewWorkspaceRepository, wire.Bind(new(ports.WorkspaceRepository), new(*WorkspaceRepository)),
	NewAPIKeyRepository, wire.Bind(new(ports.APIKeyRepository), new(*APIKeyRepository)),
	NewFormRepository, wire.Bind(new(ports.FormRepository), new(*FormRepository)),
	NewSubmissionRepository, wire.Bind(new(ports.SubmissionRepository), new(*SubmissionRepository)),
	wire.Bind(new(ports.SubmissionScanner), new(*SubmissionRepository)),
	NewFormStatsRepository, wire.Bind(new(ports.FormStatsRepository), new(*FormStatsRepository)),
	NewDataKeyRepository, wire.Bind(new(ports.DataKeyRepository), new(*DataKeyRepository)),
	NewIdempotencyStore, wire.Bind(new(ports.IdempotencyStore), new(*IdempotencyStore)),
	NewWebhookRepository, wire.Bind(new(ports.WebhookRepository), new(*WebhookRepository)),
	NewDeliveryRepository, wire.Bind(new(ports.DeliveryRepository), new(*DeliveryRepository)),
	NewReplayRepository, wire.Bind(new(ports.ReplayRepository), new(*ReplayRepository)),
	NewWorkflowRepository, wire.Bind(new(ports.WorkflowRepository), new(*WorkflowRepository)),
	NewIntegrationRepository, wire.Bind(new(ports.IntegrationRepository), new(*IntegrationRepository)),
	NewRunRepository, wire.Bind(new(ports.RunRepository), new(*RunRepository)),
	NewRetentionStore, wire.Bind(new(ports.RetentionStore), new(*RetentionStore)),
	NewPrivacyIndex, wire.Bind(new(ports.PrivacyIndex), new(*PrivacyIndex)),
	NewUserRepository, wire.Bind(new(ports.UserRepository), new(*UserRepository)),
	NewMembershipRepository, wire.Bind(new(ports.MembershipRepository), new(*MembershipRepository)),
	NewSessionRepository, wire.Bind(new(ports.SessionRepository), new(*SessionRepository)),
	NewUserTokenRepository, wire.Bind(new(ports.UserTokenRepository), new(*UserTokenRepository)),
	NewFlashRepository, wire.Bind(new(ports.FlashRepository), new(*FlashRepository)),
	NewResponseColumnsRepository, wire.Bind(new(ports.ResponseColumnsRepository), new(*ResponseColumnsRepository)),
	NewDraftRepository, wire.Bind(new(ports.DraftRepository), new(*DraftRepository)),
	NewAuditLog, wire.Bind(new(ports.AuditLog), new(*AuditLog)),
	NewSignInThrottle, wire.Bind(new(ports.SignInThrottle), new(*SignInThrottle)),
	NewAccountMailOutbox, wire.Bind(new(ports.AccountMailOutbox), new(*AccountMailOutbox)),
	NewInvitationRepository, wire.Bind(new(ports.InvitationRepository), new(*InvitationRepository)),
	NewUsageReader, wire.Bind(new(ports.UsageReader), new(*UsageReader)),
	NewOutbox, wire.Bind(new(ports.Outbox), new(*Outbox)), wire.Bind(new(ports.EventLog), new(*Outbox)),
	NewBackfillStore, wire.Bind(new(ports.BackfillStore), new(*BackfillStore)),
	NewLease, wire.Bind(new(ports.Lease), new(*Lease)),
)

// Provide opens the database and applies the embedded migrations (goose holds a lock on
// PostgreSQL, so several processes may start at once); the cleanup closes it.
func Provide(ctx context.Context, cfg Config) (*DB, func(), error) {
	db, err := Open(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	if err := db.Migrate(ctx); err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("migrate database: %w", err)
	}
	return db, func() { _ = db.Close() }, nil
}
