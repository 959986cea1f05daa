//go:build wireinject

package bootstrap

import (
	"context"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application"
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
)

var persistenceSet = wire.NewSet(
	provideDB, provideMetrics,
	persistence.NewWorkspaceRepository, wire.Bind(new(ports.WorkspaceRepository), new(*persistence.WorkspaceRepository)),
	persistence.NewAPIKeyRepository, wire.Bind(new(ports.APIKeyRepository), new(*persistence.APIKeyRepository)),
	persistence.NewFormRepository, wire.Bind(new(ports.FormRepository), new(*persistence.FormRepository)),
	persistence.NewSubmissionRepository, wire.Bind(new(ports.SubmissionRepository), new(*persistence.SubmissionRepository)),
	persistence.NewDataKeyRepository, wire.Bind(new(ports.DataKeyRepository), new(*persistence.DataKeyRepository)),
	persistence.NewIdempotencyStore, wire.Bind(new(ports.IdempotencyStore), new(*persistence.IdempotencyStore)),
	persistence.NewWebhookRepository, wire.Bind(new(ports.WebhookRepository), new(*persistence.WebhookRepository)),
	persistence.NewDeliveryRepository, wire.Bind(new(ports.DeliveryRepository), new(*persistence.DeliveryRepository)),
	persistence.NewWorkflowRepository, wire.Bind(new(ports.WorkflowRepository), new(*persistence.WorkflowRepository)),
	persistence.NewIntegrationRepository, wire.Bind(new(ports.IntegrationRepository), new(*persistence.IntegrationRepository)),
	persistence.NewRunRepository, wire.Bind(new(ports.RunRepository), new(*persistence.RunRepository)),
)

// actionSet is the registered workflow action runners over the signing HTTPS client: serve
// validates action configs with them, the worker runs them.
var actionSet = wire.NewSet(
	provideSender, wire.Bind(new(ports.Sender), new(delivery.Sender)),
	provideActionRunners,
)

var applicationSet = wire.NewSet(
	provideSettings,
	provideObjectStore,
	provideURLChecker, wire.Bind(new(ports.URLChecker), new(delivery.URLChecker)),
	wire.Struct(new(application.Deps), "*"),
	application.New,
)

var relaySet = wire.NewSet(
	persistence.NewOutbox, wire.Bind(new(ports.Outbox), new(*persistence.Outbox)),
	persistence.NewLease, wire.Bind(new(ports.Lease), new(*persistence.Lease)),
	provideKafkaPublisher, wire.Bind(new(ports.EventPublisher), new(*kafka.Publisher)),
	provideRelayConfig, provideRelayObserver,
	application.NewRelay,
)

// newRelayProcess wires the relay role.
func newRelayProcess(ctx context.Context, cfg Config, log *zap.Logger) (*RelayProcess, func(), error) {
	wire.Build(systemSet, cryptoSet, persistenceSet, relaySet, wire.Struct(new(RelayProcess), "*"))
	return nil, nil, nil
}

// newRuntime wires one process.
func newRuntime(ctx context.Context, cfg Config, log *zap.Logger) (*Runtime, func(), error) {
	wire.Build(systemSet, cryptoSet, persistenceSet, actionSet, applicationSet, wire.Struct(new(Runtime), "*"))
	return nil, nil, nil
}
