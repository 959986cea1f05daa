package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/relay"
	webhooksapp "github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// The event pipeline after the relay: the fan-out turns events into deliveries, the delivery
// engine sends them. With Kafka they run in `formward worker`; without, inside `formward serve`
// next to an in-process bus and relay.

// fanOutBatch is the most events the fan-out records in one database write.
const fanOutBatch = 200

// senderOptions configure the SSRF-safe, signing HTTPS client with one circuit breaker per
// endpoint.
func senderOptions(cfg Config) (delivery.Options, error) {
	if cfg.BreakerFailures < 1 {
		return delivery.Options{}, errors.New("breaker failures must be at least 1")
	}
	return delivery.Options{
		Timeout:         cfg.DeliveryTimeout,
		AllowPrivate:    cfg.AllowPrivateDestinations,
		ExtraCAFile:     cfg.WebhookCAFile,
		BreakerFailures: uint32(cfg.BreakerFailures),
		BreakerCooldown: cfg.BreakerCooldown,
		Clock:           system.Clock{},
	}, nil
}

// senderCreated counts the new client's circuit breakers in the registry.
func senderCreated(m *metrics.Metrics) delivery.ClientCreated {
	return func(c *delivery.Client) { watchBreakers(m, c) }
}

func provideDeliveryEngine(deliveries ports.DeliveryRepository, webhooks ports.WebhookRepository, sender ports.Sender, clock ports.Clock,
	cfg Config, log *zap.Logger, m *metrics.Metrics) (*webhooksapp.DeliveryEngine, error) {
	if err := checkFairShares(cfg); err != nil {
		return nil, err
	}
	return webhooksapp.NewDeliveryEngine(deliveries, webhooks, sender, clock, webhooksapp.DeliveryEngineConfig{
		Retry: cfg.Retry, Concurrency: cfg.DeliveryConcurrency, Timeout: cfg.DeliveryTimeout,
		PerWorkspace: cfg.DeliveryConcurrencyPerWorkspace, PerEndpoint: cfg.DeliveryConcurrencyPerEndpoint,
		PerEndpointMax: cfg.DeliveryConcurrencyPerEndpointMax,
	}, m.DeliveryObserver(deliveryLog{log: log.Named("deliveries")})), nil
}

// provideReplayRunner queues the deliveries of webhook replays in the process that sends
// deliveries, and wakes its engine after each batch.
func provideReplayRunner(replays ports.ReplayRepository, webhooks ports.WebhookRepository, ids ports.IDs, clock ports.Clock, cfg Config,
	engine *webhooksapp.DeliveryEngine) *webhooksapp.ReplayRunner {
	return webhooksapp.NewReplayRunner(replays, webhooks, ids, clock, webhooksapp.ReplayRunnerConfig{
		InFlight: engine.ClaimLease(), Retention: cfg.OutboxRetention,
	}, engine.Notify)
}

// runReplays runs the replay runner until ctx ends, logging a failed step (it is retried).
func runReplays(ctx context.Context, r *webhooksapp.ReplayRunner, log *zap.Logger) {
	r.Run(ctx, func(err error) { log.Warn("webhook replay step failed, will retry", zap.Error(err)) })
}

// checkFairShares refuses concurrency settings that would let no attempt start.
func checkFairShares(cfg Config) error {
	for _, s := range []struct {
		name string
		v    int
	}{
		{"FORMWARD_DELIVERY_CONCURRENCY", cfg.DeliveryConcurrency},
		{"FORMWARD_DELIVERY_CONCURRENCY_PER_WORKSPACE", cfg.DeliveryConcurrencyPerWorkspace},
		{"FORMWARD_DELIVERY_CONCURRENCY_PER_ENDPOINT", cfg.DeliveryConcurrencyPerEndpoint},
		{"FORMWARD_DELIVERY_CONCURRENCY_PER_ENDPOINT_MAX", cfg.DeliveryConcurrencyPerEndpointMax},
	} {
		if s.v < 1 {
			return fmt.Errorf("%s is %d: give at least 1", s.name, s.v)
		}
	}
	return nil
}

// provideFanOut wakes the engine of the same process whenever it stored deliveries.
func provideFanOut(webhooks ports.WebhookRepository, deliveries ports.DeliveryRepository, ids ports.IDs, clock ports.Clock,
	engine *webhooksapp.DeliveryEngine) *webhooksapp.FanOut {
	return webhooksapp.NewFanOut(webhooks, deliveries, ids, clock, engine.Notify)
}

// batchHandler is what the in-process bus does with each batch: the fan-out and the run
// starter, synchronously.
func batchHandler(handlers workflows.EventHandlers) ports.EventBatchHandler {
	return handlers.HandleBatch
}

// subscriberConfig is the workers' consumer group on the brokers of FORMWARD_KAFKA_BROKERS.
func subscriberConfig(cfg Config) (kafka.SubscriberConfig, error) {
	brokers := cfg.Brokers()
	if len(brokers) == 0 {
		return kafka.SubscriberConfig{}, errWorkerNoBrokers
	}
	return kafka.SubscriberConfig{
		Brokers: brokers, Topic: cfg.KafkaTopic, GroupID: cfg.KafkaGroup,
		SessionTimeout: cfg.KafkaSessionTimeout, RebalanceTimeout: cfg.KafkaSessionTimeout,
		HeartbeatInterval: max(cfg.KafkaSessionTimeout/10, 100*time.Millisecond),
	}, nil
}

// deliveryLog logs failed steps and attempts: IDs and outcomes, never bodies or secrets.
type deliveryLog struct{ log *zap.Logger }

func (l deliveryLog) Attempted(d *webhook.Delivery, r ports.OutboundResult) {
	lvl := zap.DebugLevel
	if d.Status() == webhook.StatusUndeliverable {
		lvl = zap.WarnLevel
	}
	if ce := l.log.Check(lvl, "delivery attempt"); ce != nil {
		ce.Write(zap.String("delivery_id", d.ID()), zap.String("webhook_id", d.WebhookID()), zap.String("event_id", d.EventID()),
			zap.String("status", string(d.Status())), zap.Int("cycle", d.Cycle()), zap.Int("status_code", r.StatusCode),
			zap.Bool("breaker_open", r.BreakerOpen), zap.Duration("took", r.Duration), zap.Error(r.Err))
	}
}

func (l deliveryLog) Failed(step string, err error) {
	l.log.Warn("delivery step failed, will retry", zap.String("step", step), zap.Error(err))
}

// EmbeddedPipeline is serve's event pipeline without Kafka: relay → in-process bus (the
// fan-out and the run starter, run synchronously) → delivery engine and run engine.
type EmbeddedPipeline struct {
	Relay   *relay.Relay
	Engine  *webhooksapp.DeliveryEngine
	Runs    *workflows.RunEngine
	Replays *webhooksapp.ReplayRunner
	Log     *zap.Logger
}

// ServeProcess is the wired serve role: the API, plus the pipeline it runs in embedded mode.
type ServeProcess struct {
	Runtime  *Runtime
	Pipeline *EmbeddedPipeline
}

// Start runs the pipeline in the background; stop ends the relay (a batch cut short stays in the
// outbox and is handed over at the next start), then the engine.
func (p *EmbeddedPipeline) Start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Relay.Run(ctx) })
	wg.Go(func() { _ = p.Engine.Run(ctx) })
	wg.Go(func() { _ = p.Runs.Run(ctx) })
	wg.Go(func() { runReplays(ctx, p.Replays, p.Log) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// WorkerProcess is the wired worker role.
type WorkerProcess struct {
	Subscriber *kafka.Subscriber
	// Handlers are the fan-out to webhooks and the run starter of workflows.
	Handlers workflows.EventHandlers
	Engine   *webhooksapp.DeliveryEngine
	Runs     *workflows.RunEngine
	Replays  *webhooksapp.ReplayRunner
	Metrics  *metrics.Metrics
	// DB is checked by /readyz.
	DB *persistence.DB
}

var errWorkerNoBrokers = errors.New("worker needs Kafka: set --kafka-brokers or FORMWARD_KAFKA_BROKERS (comma-separated host:port); without Kafka, serve runs the worker itself")

// worker consumes events from Kafka, fans them out to webhooks and workflow runs, and sends the
// deliveries and executes the runs, until the context ends (SIGINT/SIGTERM).
func (c *cli) worker(ctx context.Context) error {
	if len(c.cfg.Brokers()) == 0 {
		return errWorkerNoBrokers
	}
	log, stop, err := c.startObserved(ctx, "worker")
	if err != nil {
		return err
	}
	defer stop()
	p, cleanup, err := newWorkerProcess(ctx, c.cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	probes := c.watchRole(p.Metrics, p.DB, log)
	log.Info("formward worker starting", zap.String("version", Version), zap.Strings("brokers", c.cfg.Brokers()),
		zap.String("topic", c.cfg.KafkaTopic), zap.String("group", c.cfg.KafkaGroup), zap.Int("concurrency", c.cfg.DeliveryConcurrency),
		zap.Int("concurrency_per_workspace", c.cfg.DeliveryConcurrencyPerWorkspace), zap.Int("concurrency_per_endpoint", c.cfg.DeliveryConcurrencyPerEndpoint),
		zap.Int("concurrency_per_endpoint_max", c.cfg.DeliveryConcurrencyPerEndpointMax), zap.Stringer("retry_delays", c.cfg.Retry))
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() {
		if err := p.Subscriber.RunBatches(runCtx, p.Handlers.HandleBatch, fanOutBatch); err != nil {
			errc <- fmt.Errorf("kafka consumer: %w", err)
			cancel()
		}
	})
	wg.Go(func() { _ = p.Engine.Run(runCtx) })
	wg.Go(func() { _ = p.Runs.Run(runCtx) })
	wg.Go(func() { runReplays(runCtx, p.Replays, log) })
	probes.run(wg.Wait)
	log.Info("worker stopped")
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// withServeProcess is withRuntime for serve: the same runtime plus the embedded pipeline. On
// SQLite it first takes the data dir's serve lock, so a second serve on it exits at once.
func (c *cli) withServeProcess(ctx context.Context, fn func(*ServeProcess) error) error {
	if c.cfg.DatabaseURL == "" {
		unlock, err := persistence.LockServe(c.cfg.DataDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	log, stop, err := c.startObserved(ctx, "serve")
	if err != nil {
		return err
	}
	defer stop()
	sp, cleanup, err := newServeProcess(ctx, c.cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	if _, err := sp.Runtime.App.Commands.EnsureDefaultWorkspace.Handle(ctx); err != nil {
		return err
	}
	return fn(sp)
}
