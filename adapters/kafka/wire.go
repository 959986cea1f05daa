package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/formward/formward/ports"
)

// ProviderSet is the relay's publisher, bound to the event publisher port, and the worker's
// subscriber; their cleanups close them.
var ProviderSet = wire.NewSet(
	ProvidePublisher, wire.Bind(new(ports.EventPublisher), new(*Publisher)),
	ProvideSubscriber,
)

// TopicConfig is the relay's publisher and how many partitions its topic is created with when
// it is missing.
type TopicConfig struct {
	Publisher  PublisherConfig
	Partitions int
}

// ProvidePublisher creates the topic when it is missing (waiting at most 30s for the brokers)
// and makes the relay's producer.
func ProvidePublisher(ctx context.Context, cfg TopicConfig) (*Publisher, func(), error) {
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := EnsureTopic(ectx, cfg.Publisher.Brokers, cfg.Publisher.Topic, cfg.Partitions); err != nil {
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	p := NewPublisher(cfg.Publisher)
	return p, func() { _ = p.Close() }, nil
}

// ProvideSubscriber makes a worker's consumer, logging as "consumer".
func ProvideSubscriber(cfg SubscriberConfig, log *zap.Logger) (*Subscriber, func()) {
	s := NewSubscriber(cfg, log.Named("consumer"))
	return s, func() { _ = s.Close() }
}
