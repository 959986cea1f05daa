//go:build wireinject

package bootstrap

import (
	"context"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/bus"
	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/relay"
)

// deliverySet is the fan-out and the delivery engine over the signing HTTPS client, and the
// run starter and run engine of workflows next to them.
var deliverySet = wire.NewSet(
	actionSet,
	provideDeliveryEngine, provideFanOut, provideReplayRunner,
	provideRunEngine, provideRunStarter, provideEventHandlers,
)

// embeddedPipelineSet is the relay publishing to the in-process bus, and the worker behind it.
var embeddedPipelineSet = wire.NewSet(
	deliverySet,
	batchHandler, bus.ProviderSet,
	provideRelayConfig, provideRelayObserver, relay.NewRelay,
	wire.Struct(new(EmbeddedPipeline), "*"),
)

// newServeProcess wires the serve role: the API and, for embedded mode, the event pipeline.
func newServeProcess(ctx context.Context, cfg Config, log *zap.Logger) (*ServeProcess, func(), error) {
	wire.Build(system.ProviderSet, cryptoSet, persistenceSet, accountSet, applicationSet, wire.Struct(new(Runtime), "*"),
		embeddedPipelineSet, wire.Struct(new(ServeProcess), "*"))
	return nil, nil, nil
}

// newWorkerProcess wires the worker role.
func newWorkerProcess(ctx context.Context, cfg Config, log *zap.Logger) (*WorkerProcess, func(), error) {
	wire.Build(system.ProviderSet, cryptoSet, persistenceSet, deliverySet, subscriberConfig, kafka.ProviderSet, wire.Struct(new(WorkerProcess), "*"))
	return nil, nil, nil
}
