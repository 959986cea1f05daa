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
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/relay"
	"github.com/formward/formward/ports"
)

// Each adapter package has its own ProviderSet (concrete types bound to their ports, cleanups
// for what must be closed); the sets below add what bootstrap decides: the settings read from
// the configuration, the master keys, metrics, and the use cases.

// cryptoSet is the master keys, proven on the stored data keys at start, and what is keyed by
// them.
var cryptoSet = wire.NewSet(
	provideKeyring,
	provideIPHasher, wire.Bind(new(ports.IPHasher), new(*crypto.IPHasher)),
	crypto.ProviderSet,
)

// persistenceSet is the database and its repositories, and the metrics registry watching them.
var persistenceSet = wire.NewSet(
	persistenceConfig, persistence.ProviderSet,
	provideMetrics,
)

// accountSet is the OpenID provider and account mail of sign-in (each nil when not
// configured); password hashes and TOTP come with crypto.ProviderSet.
var accountSet = wire.NewSet(
	provideOIDC,
	provideAccountMailer,
)

// actionSet is the registered workflow action runners over the signing HTTPS client: serve
// validates action configs with them, the worker runs them.
var actionSet = wire.NewSet(
	senderOptions, senderCreated, delivery.ProviderSet,
	provideActionRunners,
)

var applicationSet = wire.NewSet(
	formActivityWindow, analytics.ProviderSet,
	fileStoreConfig, objectstore.ProviderSet,
	provideSettings,
	provideURLChecker, wire.Bind(new(ports.URLChecker), new(delivery.URLChecker)),
	wire.Struct(new(application.Deps), "*"),
	application.New,
)

var relaySet = wire.NewSet(
	topicConfig, kafka.ProviderSet,
	provideRelayConfig, provideRelayObserver,
	relay.NewRelay,
)

// newRelayProcess wires the relay role.
func newRelayProcess(ctx context.Context, cfg Config, log *zap.Logger) (*RelayProcess, func(), error) {
	wire.Build(system.ProviderSet, cryptoSet, persistenceSet, relaySet, wire.Struct(new(RelayProcess), "*"))
	return nil, nil, nil
}

// newRuntime wires one process.
func newRuntime(ctx context.Context, cfg Config, log *zap.Logger) (*Runtime, func(), error) {
	wire.Build(system.ProviderSet, cryptoSet, persistenceSet, accountSet, actionSet, applicationSet, wire.Struct(new(Runtime), "*"))
	return nil, nil, nil
}
