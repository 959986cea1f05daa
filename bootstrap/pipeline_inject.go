//go:build wireinject

package bootstrap

import (
	"context"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/bus"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/application"
	"github.com/formward/formward/ports"
)

// deliverySet is the fan-out and the delivery engine over the signing HTTPS client.
var deliverySet = wire.NewSet(
	provideSender, wire.Bind(new(ports.Sender), new(delivery.Sender)),
	provideDeliveryEngine, provideFanOut,
)

// embeddedPipelineSet is the relay publishing to the in-process bus, and the worker behind it.
var embeddedPipelineSet = wire.NewSet(
	deliverySet,
	persistence.NewOutbox, wire.Bind(new(ports.Outbox), new(*persistence.Outbox)),
	persistence.NewLease, wire.Bind(new(ports.Lease), new(*persistence.Lease)),
	provideBus, wire.Bind(new(ports.EventPublisher), new(*bus.Direct)),
	provideRelayConfig, provideRelayObserver, application.NewRelay,
	wire.Struct(new(EmbeddedPipeline), "*"),
)

// newServeProcess wires the serve role: the API and, for embedded mode, the event pipeline.
func newServeProcess(ctx context.Context, cfg Config, log *zap.Logger) (*ServeProcess, func(), error) {
	wire.Build(systemSet, cryptoSet, persistenceSet, applicationSet, wire.Struct(new(Runtime), "*"),
		embeddedPipelineSet, wire.Struct(new(ServeProcess), "*"))
	return nil, nil, nil
}

// newWorkerProcess wires the worker role.
func newWorkerProcess(ctx context.Context, cfg Config, log *zap.Logger) (*WorkerProcess, func(), error) {
	wire.Build(systemSet, cryptoSet, persistenceSet, deliverySet, provideKafkaSubscriber, wire.Struct(new(WorkerProcess), "*"))
	return nil, nil, nil
}
