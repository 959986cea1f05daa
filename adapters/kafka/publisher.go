package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// DefaultTopic is the events topic (docs/events.md); the version suffix changes only with the
// schema.
const DefaultTopic = "formward.events.v1"

// PublisherConfig configures the relay's producer. Zero fields take the defaults.
type PublisherConfig struct {
	Brokers []string
	// Topic defaults to DefaultTopic.
	Topic string
	// BatchTimeout bounds how long a partial batch waits for more messages; default 5ms. The
	// library's own default (1s) would add a second to every event, since the relay waits for
	// the acknowledgement of each batch it hands over.
	BatchTimeout time.Duration
	// BatchSize is the most messages sent to one partition in one request; default 500.
	BatchSize int
	// PublicURL is the service's public origin: submission events carry ce_dataschema under it.
	PublicURL string
	// Headers are added to every message (a replay's ce_replay).
	Headers map[string]string
}

func (c PublisherConfig) withDefaults() PublisherConfig {
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	if c.BatchTimeout <= 0 {
		c.BatchTimeout = 5 * time.Millisecond
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 500
	}
	return c
}

// Publisher writes events to Kafka and returns once every replica in sync acknowledged them.
type Publisher struct {
	w         *kafkago.Writer
	publicURL string
	headers   []kafkago.Header
}

var _ ports.EventPublisher = (*Publisher)(nil)

// NewPublisher makes a publisher; it connects on the first Publish.
func NewPublisher(cfg PublisherConfig) *Publisher {
	cfg = cfg.withDefaults()
	return &Publisher{w: &kafkago.Writer{
		Addr:     kafkago.TCP(cfg.Brokers...),
		Topic:    cfg.Topic,
		Balancer: Partitioner(),
		// Acknowledged by all in-sync replicas: only then may the relay mark the rows published.
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: cfg.BatchTimeout,
		BatchSize:    cfg.BatchSize,
		// The topic is created on purpose, with its partition count (EnsureTopic): a topic made
		// by accident with the broker's default count would be hard to change without breaking
		// per-form order.
		AllowAutoTopicCreation: false,
	}, publicURL: cfg.PublicURL, headers: extraHeaders(cfg.Headers)}
}

// extraHeaders are the configured headers in a stable order.
func extraHeaders(m map[string]string) []kafkago.Header {
	var hs []kafkago.Header
	for _, k := range slices.Sorted(maps.Keys(m)) {
		hs = append(hs, kafkago.Header{Key: k, Value: []byte(m[k])})
	}
	return hs
}

// Publish writes events in one synchronous call: nil means the broker acknowledged all of them.
// On an error some may have been written anyway; the relay publishes them again and consumers
// dedupe on the event ID.
func (p *Publisher) Publish(ctx context.Context, events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	// The record timestamp is when the event entered Kafka, so time-based retention counts from
	// there even when the relay was behind; the event's own time travels in the value and ce_time.
	now := time.Now()
	msgs := make([]kafkago.Message, len(events))
	spans := make([]trace.Span, len(events))
	for i, e := range events {
		m, err := EncodeWithSchema(e, p.publicURL)
		if err != nil {
			endAll(spans[:i], err)
			return fmt.Errorf("publish: %w", err)
		}
		m.Time = now
		m.Headers = append(m.Headers, p.headers...)
		msgs[i] = m
		spans[i] = startPublish(ctx, p.w.Topic, e, &msgs[i])
	}
	err := p.w.WriteMessages(ctx, msgs...)
	endAll(spans, err)
	if err != nil {
		var werrs kafkago.WriteErrors
		if errors.As(err, &werrs) {
			return fmt.Errorf("publish: %d of %d events not acknowledged: %w", werrs.Count(), len(msgs), err)
		}
		return fmt.Errorf("publish %d events: %w", len(msgs), err)
	}
	return nil
}

// endAll ends the producer spans of a batch with its outcome.
func endAll(spans []trace.Span, err error) {
	for _, s := range spans {
		tracing.End(s, err)
	}
}

// Close flushes pending writes and closes the connections.
func (p *Publisher) Close() error {
	if err := p.w.Close(); err != nil {
		return fmt.Errorf("close kafka writer: %w", err)
	}
	return nil
}

// EnsureTopic creates the topic with the given number of partitions unless it exists already
// (whatever its partition count). The replication factor is 3, or the number of brokers when
// there are fewer. It is for first start and tests; production topics may be managed elsewhere.
func EnsureTopic(ctx context.Context, brokers []string, topic string, partitions int) error {
	if partitions <= 0 {
		return fmt.Errorf("ensure topic %s: partitions must be positive", topic)
	}
	var dialer kafkago.Dialer
	var conn *kafkago.Conn
	var err error
	for _, b := range brokers {
		if conn, err = dialer.DialContext(ctx, "tcp", b); err == nil {
			break
		}
	}
	if conn == nil {
		return fmt.Errorf("ensure topic %s: no broker reachable: %w", topic, err)
	}
	defer conn.Close()

	all, err := conn.Brokers()
	if err != nil {
		return fmt.Errorf("ensure topic %s: list brokers: %w", topic, err)
	}
	controller, err := conn.Controller()
	if err != nil {
		return fmt.Errorf("ensure topic %s: find controller: %w", topic, err)
	}
	cc, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(controller.Host, strconv.Itoa(controller.Port)))
	if err != nil {
		return fmt.Errorf("ensure topic %s: dial controller: %w", topic, err)
	}
	defer cc.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = cc.SetDeadline(deadline)
	}

	// CreateTopics treats "already exists" as success.
	err = cc.CreateTopics(kafkago.TopicConfig{
		Topic:             topic,
		NumPartitions:     partitions,
		ReplicationFactor: min(3, len(all)),
	})
	if err != nil {
		return fmt.Errorf("ensure topic %s: %w", topic, err)
	}
	return nil
}

// Partitioner chooses a message's partition from its key (the form ID) as Kafka's Java client
// does: toPositive(murmur2(key)) % partitions. Hashing the key keeps each form on one partition,
// hence in order (round-robin or least-bytes would spread a form's events); hashing it with
// murmur2 rather than another hash puts it on the partition that Java producers and Kafka
// Streams compute for the same key, so consumers can co-partition other topics by form ID.
// Consistent: a message always has a key, and even a nil one never goes to a random partition.
func Partitioner() kafkago.Balancer {
	return kafkago.Murmur2Balancer{Consistent: true}
}
