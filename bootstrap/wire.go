//go:build wireinject

package bootstrap

import (
	"context"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/analytics"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/relay"
	"github.com/formward/formward/ports"
)

var systemSet = wire.NewSet(
	wire.Struct(new(system.Clock)), wire.Bind(new(ports.Clock), new(system.Clock)),
	system.NewIDs, wire.Bind(new(ports.IDs), new(*system.IDs)),
)

var cryptoSet = wire.NewSet(
	provideKeyring,
	crypto.NewCipher, wire.Bind(new(ports.Cipher), new(*crypto.Cipher)),
	provideIPHasher, wire.Bind(new(ports.IPHasher), new(*crypto.IPHasher)),
	provideBlindIndex, wire.Bind(new(ports.BlindIndex), new(*crypto.BlindIndex)),
)

var persistenceSet = wire.NewSet(
	provideDB, provideMetrics,
	persistence.NewWorkspaceRepository, wire.Bind(new(ports.WorkspaceRepository), new(*persistence.WorkspaceRepository)),
	persistence.NewAPIKeyRepository, wire.Bind(new(ports.APIKeyRepository), new(*persistence.APIKeyRepository)),
	persistence.NewFormRepository, wire.Bind(new(ports.FormRepository), new(*persistence.FormRepository)),
	persistence.NewSubmissionRepository, wire.Bind(new(ports.SubmissionRepository), new(*persistence.SubmissionRepository)),
	wire.Bind(new(ports.SubmissionScanner), new(*persistence.SubmissionRepository)),
	persistence.NewDataKeyRepository, wire.Bind(new(ports.DataKeyRepository), new(*persistence.DataKeyRepository)),
	persistence.NewIdempotencyStore, wire.Bind(new(ports.IdempotencyStore), new(*persistence.IdempotencyStore)),
	persistence.NewWebhookRepository, wire.Bind(new(ports.WebhookRepository), new(*persistence.WebhookRepository)),
	persistence.NewDeliveryRepository, wire.Bind(new(ports.DeliveryRepository), new(*persistence.DeliveryRepository)),
	persistence.NewWorkflowRepository, wire.Bind(new(ports.WorkflowRepository), new(*persistence.WorkflowRepository)),
	persistence.NewIntegrationRepository, wire.Bind(new(ports.IntegrationRepository), new(*persistence.IntegrationRepository)),
	persistence.NewRunRepository, wire.Bind(new(ports.RunRepository), new(*persistence.RunRepository)),
	persistence.NewRetentionStore, wire.Bind(new(ports.RetentionStore), new(*persistence.RetentionStore)),
	persistence.NewPrivacyIndex, wire.Bind(new(ports.PrivacyIndex), new(*persistence.PrivacyIndex)),
	persistence.NewUserRepository, wire.Bind(new(ports.UserRepository), new(*persistence.UserRepository)),
	persistence.NewMembershipRepository, wire.Bind(new(ports.MembershipRepository), new(*persistence.MembershipRepository)),
	persistence.NewSessionRepository, wire.Bind(new(ports.SessionRepository), new(*persistence.SessionRepository)),
	persistence.NewUserTokenRepository, wire.Bind(new(ports.UserTokenRepository), new(*persistence.UserTokenRepository)),
	persistence.NewAuditLog, wire.Bind(new(ports.AuditLog), new(*persistence.AuditLog)),
	persistence.NewSignInThrottle, wire.Bind(new(ports.SignInThrottle), new(*persistence.SignInThrottle)),
	persistence.NewAccountMailOutbox, wire.Bind(new(ports.AccountMailOutbox), new(*persistence.AccountMailOutbox)),
	persistence.NewInvitationRepository, wire.Bind(new(ports.InvitationRepository), new(*persistence.InvitationRepository)),
	persistence.NewUsageReader, wire.Bind(new(ports.UsageReader), new(*persistence.UsageReader)),
)

// accountSet is how people sign in: password hashes, TOTP, the OpenID provider and account mail
// (the last two nil when not configured).
var accountSet = wire.NewSet(
	crypto.NewPasswordHasher, wire.Bind(new(ports.PasswordHasher), new(*crypto.PasswordHasher)),
	wire.Struct(new(crypto.TOTP)), wire.Bind(new(ports.TOTP), new(crypto.TOTP)),
	provideOIDC,
	provideAccountMailer,
)

// actionSet is the registered workflow action runners over the signing HTTPS client: serve
// validates action configs with them, the worker runs them.
var actionSet = wire.NewSet(
	provideSender, wire.Bind(new(ports.Sender), new(delivery.Sender)),
	provideActionRunners,
)

// analyticsSet is what form stats count with: the daily counts and the in-memory counter in
// front of them (exports read the submissions oldest first through the persistence set).
var analyticsSet = wire.NewSet(
	persistence.NewFormStatsRepository, wire.Bind(new(ports.FormStatsRepository), new(*persistence.FormStatsRepository)),
	provideFormActivity, wire.Bind(new(ports.FormActivity), new(*analytics.Counter)),
)

var applicationSet = wire.NewSet(
	analyticsSet,
	provideSettings,
	provideFileStore, provideObjectStore,
	provideURLChecker, wire.Bind(new(ports.URLChecker), new(delivery.URLChecker)),
	wire.Struct(new(application.Deps), "*"),
	application.New,
)

var relaySet = wire.NewSet(
	persistence.NewOutbox, wire.Bind(new(ports.Outbox), new(*persistence.Outbox)),
	persistence.NewLease, wire.Bind(new(ports.Lease), new(*persistence.Lease)),
	provideKafkaPublisher, wire.Bind(new(ports.EventPublisher), new(*kafka.Publisher)),
	provideRelayConfig, provideRelayObserver,
	relay.NewRelay,
)

// newRelayProcess wires the relay role.
func newRelayProcess(ctx context.Context, cfg Config, log *zap.Logger) (*RelayProcess, func(), error) {
	wire.Build(systemSet, cryptoSet, persistenceSet, relaySet, wire.Struct(new(RelayProcess), "*"))
	return nil, nil, nil
}

// newRuntime wires one process.
func newRuntime(ctx context.Context, cfg Config, log *zap.Logger) (*Runtime, func(), error) {
	wire.Build(systemSet, cryptoSet, persistenceSet, accountSet, actionSet, applicationSet, wire.Struct(new(Runtime), "*"))
	return nil, nil, nil
}
