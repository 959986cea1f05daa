package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// DefaultGroupID is the consumer group of the worker role.
const DefaultGroupID = "formward-worker"

// SubscriberConfig configures a worker's consumer. Zero fields take the defaults.
type SubscriberConfig struct {
	Brokers []string
	// Topic defaults to DefaultTopic.
	Topic string
	// GroupID defaults to DefaultGroupID. A group that has no committed offset yet starts at the
	// oldest retained event, so a new group sees everything still on the topic.
	GroupID string
	// MinBytes (default 1) and MaxWait (default 100ms) shape each fetch: the broker answers as
	// soon as one event is there, and an idle fetch returns after MaxWait. kafka-go's MaxWait
	// default of 10s would delay events published to an idle topic by up to that much.
	MinBytes int
	MaxWait  time.Duration
	// RetryBackoff (default 200ms) is the first wait before a failed event is handled again; it
	// doubles per attempt up to MaxRetryBackoff (default 30s).
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// Group membership timing; zero takes kafka-go's defaults (3s, 30s, 30s). Tests shorten them.
	HeartbeatInterval time.Duration
	SessionTimeout    time.Duration
	RebalanceTimeout  time.Duration
}

func (c SubscriberConfig) withDefaults() SubscriberConfig {
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	if c.GroupID == "" {
		c.GroupID = DefaultGroupID
	}
	if c.MinBytes <= 0 {
		c.MinBytes = 1
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 100 * time.Millisecond
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 200 * time.Millisecond
	}
	if c.MaxRetryBackoff < c.RetryBackoff {
		c.MaxRetryBackoff = max(30*time.Second, c.RetryBackoff)
	}
	return c
}

// Subscriber consumes events as a member of a consumer group. Events are handled one at a time
// and committed only after the handler succeeded, so a partition never moves past an event that
// was not handled: at-least-once, in order per form.
type Subscriber struct {
	cfg SubscriberConfig
	log *zap.Logger

	mu     sync.Mutex
	closed bool
	cancel context.CancelFunc // of the Run in progress
	done   chan struct{}      // closed when that Run returned
}

var _ ports.EventSubscriber = (*Subscriber)(nil)

// NewSubscriber makes a subscriber; it joins the group when Run starts. log may be nil.
func NewSubscriber(cfg SubscriberConfig, log *zap.Logger) *Subscriber {
	if log == nil {
		log = zap.NewNop()
	}
	cfg = cfg.withDefaults()
	return &Subscriber{cfg: cfg, log: log.With(zap.String("topic", cfg.Topic), zap.String("group", cfg.GroupID))}
}

var (
	errClosed  = errors.New("kafka subscriber closed")
	errRunning = errors.New("kafka subscriber already running")
)

// Run joins the group and delivers events to handle until ctx ends, then leaves the group and
// returns nil. A handler error delivers the same event again after a backoff, for as long as it
// takes: the events behind it wait. An event that cannot be decoded is logged and committed, so
// it cannot block its partition. Run may be called again after it returned, not concurrently.
func (s *Subscriber) Run(ctx context.Context, handle ports.EventHandler) error {
	return s.RunBatches(ctx, func(ctx context.Context, evs []event.Event) error {
		for _, e := range evs {
			if err := handle(ctx, e); err != nil {
				return err
			}
		}
		return nil
	}, 1)
}

// RunBatches is Run for a handler that takes several events at once: up to max events that are
// already fetched (never waiting for more than the first) are handled in one call, in partition
// order, and committed together after it returned nil. On an error the whole batch is handled
// again after a backoff. Batching saves a commit round trip to the broker per event and lets the
// handler write once per batch.
func (s *Subscriber) RunBatches(ctx context.Context, handle ports.EventBatchHandler, max int) error {
	if max <= 0 {
		max = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return errClosed
	case s.cancel != nil:
		s.mu.Unlock()
		return errRunning
	}
	s.cancel, s.done = cancel, done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel, s.done = nil, nil
		s.mu.Unlock()
	}()

	rc := kafkago.ReaderConfig{
		Brokers:  s.cfg.Brokers,
		GroupID:  s.cfg.GroupID,
		Topic:    s.cfg.Topic,
		MinBytes: s.cfg.MinBytes,
		MaxBytes: 1e6, // kafka-go's default, spelled out because Validate checks it before defaults
		MaxWait:  s.cfg.MaxWait,
		// 0 = synchronous commits: CommitMessages returns once the broker stored the offset.
		CommitInterval:    0,
		StartOffset:       kafkago.FirstOffset,
		HeartbeatInterval: s.cfg.HeartbeatInterval,
		SessionTimeout:    s.cfg.SessionTimeout,
		RebalanceTimeout:  s.cfg.RebalanceTimeout,
		ErrorLogger: kafkago.LoggerFunc(func(msg string, args ...any) {
			s.log.Warn("kafka reader: " + fmt.Sprintf(msg, args...))
		}),
	}
	if err := rc.Validate(); err != nil {
		return fmt.Errorf("kafka subscriber: %w", err)
	}
	r := kafkago.NewReader(rc)
	defer func() {
		// Leaving the group hands our partitions to the other members without waiting for the
		// session to time out.
		if err := r.Close(); err != nil {
			s.log.Warn("close kafka reader", zap.Error(err))
		}
	}()

	for {
		m, err := r.FetchMessage(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return errClosed
		case err != nil:
			// kafka-go retries broker errors itself; whatever reaches us is worth a pause.
			s.log.Warn("fetch event", zap.Error(err))
			if !sleep(ctx, s.cfg.RetryBackoff) {
				return nil
			}
			continue
		}
		msgs := []kafkago.Message{m}
		for len(msgs) < max {
			// Take what the reader already holds; waiting for more would only add latency.
			fctx, fcancel := context.WithTimeout(ctx, time.Millisecond)
			more, err := r.FetchMessage(fctx)
			fcancel()
			if err != nil {
				if fctx.Err() == nil && ctx.Err() == nil {
					s.log.Warn("fetch event", zap.Error(err))
				}
				break
			}
			msgs = append(msgs, more)
		}
		evs := make([]event.Event, 0, len(msgs))
		spans := make([]trace.Span, 0, len(msgs))
		for i, m := range msgs {
			e, err := Decode(m)
			if err != nil {
				// A poison message cannot become decodable by waiting; skipping it (and saying
				// so) keeps the rest of the partition flowing.
				s.log.Error("skipping undecodable event", zap.Int("partition", m.Partition),
					zap.Int64("offset", m.Offset), zap.ByteString("key", m.Key), zap.Error(err))
				continue
			}
			e, span := startProcess(ctx, s.cfg.Topic, &msgs[i], e)
			evs, spans = append(evs, e), append(spans, span)
		}
		if len(evs) > 0 && !s.deliver(ctx, handle, evs) {
			endAll(spans, ctx.Err())
			return nil // ctx ended before the events were handled: they stay uncommitted
		}
		endAll(spans, nil)
		s.commit(ctx, r, msgs...)
	}
}

// deliver calls handle until it succeeds (true) or ctx ends (false).
func (s *Subscriber) deliver(ctx context.Context, handle ports.EventBatchHandler, evs []event.Event) bool {
	wait := s.cfg.RetryBackoff
	e := evs[0]
	for attempt := 1; ; attempt++ {
		err := handle(ctx, evs)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		s.log.Warn("event handler failed, will retry", zap.String("event_id", e.ID),
			zap.String("event_type", string(e.Type)), zap.String("form_id", e.FormID),
			zap.Int("attempt", attempt), zap.Duration("retry_in", wait), zap.Error(err))
		if !sleep(ctx, wait) {
			return false
		}
		wait = min(2*wait, s.cfg.MaxRetryBackoff)
	}
}

// commit records that m was handled. It outlives ctx briefly so that an event handled just as
// shutdown began is not handled again by the next owner of the partition. A failed commit is only
// logged: the event will be delivered again, which at-least-once allows.
func (s *Subscriber) commit(ctx context.Context, r *kafkago.Reader, msgs ...kafkago.Message) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.CommitMessages(cctx, msgs...); err != nil {
		last := msgs[len(msgs)-1]
		s.log.Warn("commit event offsets", zap.Int("messages", len(msgs)), zap.Int("partition", last.Partition),
			zap.Int64("offset", last.Offset), zap.Error(err))
	}
}

// Close stops a Run in progress, waits until it left the group, and refuses later Runs.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	s.closed = true
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

// sleep waits d, or less when ctx ends first; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
