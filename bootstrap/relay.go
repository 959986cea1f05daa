package bootstrap

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/application/relay"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// RelayProcess is the wired relay role.
type RelayProcess struct {
	Relay   *relay.Relay
	Log     *zap.Logger
	Metrics *metrics.Metrics
	// DB is checked by /readyz.
	DB *persistence.DB
}

// errNoBrokers is returned by the relay role without FORMWARD_KAFKA_BROKERS.
var errNoBrokers = errors.New("relay needs Kafka: set --kafka-brokers or FORMWARD_KAFKA_BROKERS (comma-separated host:port)")

// topicConfig is the relay's producer and its topic, created when it is missing.
func topicConfig(cfg Config) (kafka.TopicConfig, error) {
	brokers := cfg.Brokers()
	if len(brokers) == 0 {
		return kafka.TopicConfig{}, errNoBrokers
	}
	return kafka.TopicConfig{
		Publisher:  kafka.PublisherConfig{Brokers: brokers, Topic: cfg.KafkaTopic, BatchSize: cfg.RelayBatch, PublicURL: publicURL(cfg)},
		Partitions: cfg.KafkaPartitions,
	}, nil
}

func provideRelayConfig(cfg Config) relay.RelayConfig {
	return relay.RelayConfig{Batch: cfg.RelayBatch, Poll: cfg.RelayPoll, Retention: cfg.OutboxRetention}
}

func provideRelayObserver(log *zap.Logger, m *metrics.Metrics, clock ports.Clock) relay.RelayObserver {
	return m.RelayObserver(relayLog{log: log.Named("relay")}, clock.Now)
}

// relayLog logs what the relay does: counts, IDs and errors, never event payloads.
type relayLog struct{ log *zap.Logger }

func (l relayLog) LeaseAcquired() {
	l.log.Info("relay lease acquired: this process publishes the outbox")
}

func (l relayLog) Published(evs []event.Event, took time.Duration) {
	if ce := l.log.Check(zap.DebugLevel, "published events"); ce != nil {
		ce.Write(zap.Int("count", len(evs)), zap.String("first_event_id", evs[0].ID),
			zap.String("last_event_id", evs[len(evs)-1].ID), zap.Duration("took", took))
	}
}

func (l relayLog) Failed(step string, err error, attempt int, retryIn time.Duration) {
	l.log.Warn("relay step failed, will retry", zap.String("step", step), zap.Int("attempt", attempt),
		zap.Duration("retry_in", retryIn), zap.Error(err))
}

func (l relayLog) Purged(rows int64) {
	l.log.Info("purged published outbox rows", zap.Int64("rows", rows))
}

// relay runs the relay role until the context ends (SIGINT/SIGTERM).
func (c *cli) relay(ctx context.Context) error {
	if len(c.cfg.Brokers()) == 0 {
		return errNoBrokers
	}
	log, stop, err := c.startObserved(ctx, "relay")
	if err != nil {
		return err
	}
	defer stop()
	p, cleanup, err := newRelayProcess(ctx, c.cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	probes := c.watchRole(p.Metrics, p.DB, log)
	log.Info("formward relay starting", zap.String("version", Version), zap.Strings("brokers", c.cfg.Brokers()),
		zap.String("topic", c.cfg.KafkaTopic), zap.Int("batch", c.cfg.RelayBatch), zap.Duration("poll", c.cfg.RelayPoll))
	probes.run(func() { err = p.Relay.Run(ctx) })
	log.Info("relay stopped")
	return err
}
