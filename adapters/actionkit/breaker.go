package actionkit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/ports"
)

// Defaults of BreakerOptions left zero (the delivery engine's).
const (
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
)

// ErrBreakerOpen is the Err of an outcome whose action's breaker refused the attempt.
var ErrBreakerOpen = errors.New("circuit breaker open")

// BreakerOptions configures Breakers.
type BreakerOptions struct {
	// Failures is how many consecutive failed attempts of one action open its breaker.
	Failures uint32
	// Cooldown is how long an open breaker refuses attempts before it lets one probe through.
	Cooldown time.Duration
	// Created, when set, is told of every set made with these options (for metrics: see Counts).
	Created func(*Breakers)
}

// Breakers keeps one circuit breaker per action ID, so one broken destination (a revoked
// Slack token, a deleted sheet) does not slow the others down. Permanent failures and
// canceled attempts say nothing about the destination's health and are not counted.
type Breakers struct {
	failures uint32
	cooldown time.Duration

	mu sync.Mutex
	m  map[string]*actionBreaker
}

type actionBreaker struct {
	cb *gobreaker.CircuitBreaker[ports.ActionOutcome]

	mu       sync.Mutex
	openedAt time.Time
}

// NewBreakers builds an empty set.
func NewBreakers(o BreakerOptions) *Breakers {
	if o.Failures == 0 {
		o.Failures = DefaultBreakerFailures
	}
	if o.Cooldown <= 0 {
		o.Cooldown = DefaultBreakerCooldown
	}
	b := &Breakers{failures: o.Failures, cooldown: o.Cooldown, m: map[string]*actionBreaker{}}
	if o.Created != nil {
		o.Created(b)
	}
	return b
}

// excludedError wraps the outcomes the breaker ignores.
type excludedError struct{ err error }

func (e *excludedError) Error() string { return e.err.Error() }

// Do runs attempt behind actionID's breaker. When the breaker is open, attempt is not called
// and the outcome has BreakerOpen and RetryAt set.
func (b *Breakers) Do(ctx context.Context, actionID string, attempt func() ports.ActionOutcome) ports.ActionOutcome {
	ab := b.get(actionID)
	out, err := ab.cb.Execute(func() (ports.ActionOutcome, error) {
		o := attempt()
		switch {
		case o.Err == nil:
			return o, nil
		case o.Permanent || ctx.Err() != nil:
			return o, &excludedError{err: o.Err}
		default:
			return o, o.Err
		}
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return ports.ActionOutcome{Err: ErrBreakerOpen, BreakerOpen: true, RetryAt: time.Now().Add(ab.remaining(b.cooldown))}
	}
	return out
}

func (b *Breakers) get(actionID string) *actionBreaker {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ab, ok := b.m[actionID]; ok {
		return ab
	}
	ab := &actionBreaker{}
	failures := b.failures
	ab.cb = gobreaker.NewCircuitBreaker[ports.ActionOutcome](gobreaker.Settings{
		Name:        actionID,
		MaxRequests: 1,
		Timeout:     b.cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		// Called with gobreaker's lock held: touch only ab.mu here.
		OnStateChange: func(_ string, _, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				ab.mu.Lock()
				ab.openedAt = time.Now()
				ab.mu.Unlock()
			}
		},
		IsExcluded: func(err error) bool {
			var ex *excludedError
			return errors.As(err, &ex)
		},
	})
	b.m[actionID] = ab
	return ab
}

// remaining is how long until the breaker lets an attempt through again; a probe in flight
// (half-open) is given one more cooldown at most.
func (ab *actionBreaker) remaining(cooldown time.Duration) time.Duration {
	ab.mu.Lock()
	openedAt := ab.openedAt
	ab.mu.Unlock()
	if d := time.Until(openedAt.Add(cooldown)); !openedAt.IsZero() && d > 0 {
		return d
	}
	return cooldown
}

// FromExtend converts the breaker options an extension's action factory is given
// (extend.ActionDeps.Breaker), keeping the metrics hook, so its breakers count with Formward's.
func FromExtend(o extend.BreakerOptions) BreakerOptions {
	out := BreakerOptions{Failures: o.Failures, Cooldown: o.Cooldown}
	if o.Created != nil {
		out.Created = func(b *Breakers) { o.Created(b) }
	}
	return out
}
