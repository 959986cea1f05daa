package dispatch

import (
	"sync"
	"time"

	"github.com/formward/formward/ports"
)

// Outcome is how an attempt to an endpoint went, as the adaptive limits judge it.
type Outcome int

const (
	// Answered is a 2xx answer.
	Answered Outcome = iota
	// Refused is an answer that says nothing about the endpoint's load (a 4xx other than 429):
	// the limit holds.
	Refused
	// Overloaded is an error, a timeout, a 429 or 5xx answer, or an open breaker: the limit halves.
	Overloaded
)

// idleForget is how long an endpoint's limit is kept after its last attempt; an endpoint not
// heard from for that long starts again from the configured share.
const idleForget = 10 * time.Minute

// limits are the adaptive per-endpoint concurrency limits of one engine (AIMD, as TCP's
// congestion window): an endpoint starts at base (the configured PerEndpoint); every window of
// fast answers as long as its limit, while it uses at least half of it, adds one, up to max;
// an overload halves it (not below 1); a slow 2xx takes one away, not below base. An answer is
// fast when it is a 2xx within twice the endpoint's recent fastest answer plus slack, and within
// a tenth of the attempt timeout. Limits live in memory: they are this engine's view of the
// endpoints it sends to.
type limits struct {
	base, max int
	timeout   time.Duration
	clock     ports.Clock

	mu        sync.Mutex
	endpoints map[string]*endpointLimit
}

// endpointLimit is one endpoint's state.
type endpointLimit struct {
	limit int
	// fast counts the fast answers since the limit last changed.
	fast int
	// floor is the endpoint's recent fastest answer: it follows a faster answer at once and a
	// slower one by a 64th of the gap, so a baseline from a quieter time fades.
	floor time.Duration
	seen  time.Time
}

// fastSlack is added to twice the floor: fast endpoints vary by milliseconds without being loaded.
const fastSlack = 20 * time.Millisecond

func newLimits(base, max int, timeout time.Duration, clock ports.Clock) *limits {
	return &limits{base: base, max: max, timeout: timeout, clock: clock, endpoints: map[string]*endpointLimit{}}
}

// limit is the endpoint's current limit.
func (l *limits) limit(endpoint string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.endpoints[endpoint]; e != nil {
		return e.limit
	}
	return l.base
}

// observe adjusts the endpoint's limit after an attempt that took took; inFlight is how many
// attempts to it were in flight when this one ended, itself included.
func (l *limits) observe(endpoint string, o Outcome, took time.Duration, inFlight int) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.endpoints[endpoint]
	if e == nil {
		e = &endpointLimit{limit: l.base, floor: -1}
		l.endpoints[endpoint] = e
	}
	e.seen = now
	switch o {
	case Overloaded:
		e.limit, e.fast = max(e.limit/2, 1), 0
	case Answered:
		if e.floor < 0 || took < e.floor {
			e.floor = took
		} else {
			e.floor += (took - e.floor) / 64
		}
		if took > 2*e.floor+fastSlack || (l.timeout > 0 && took > l.timeout/10) {
			if e.fast = 0; e.limit > l.base {
				e.limit--
			}
			return
		}
		// Only an endpoint that uses its limit shows whether it can take more.
		if 2*inFlight < e.limit {
			return
		}
		if e.fast++; e.fast >= e.limit && e.limit < l.max {
			e.limit, e.fast = e.limit+1, 0
		}
	}
}

// snapshot returns the limits that differ from base, and forgets endpoints idle for idleForget.
func (l *limits) snapshot() map[string]int {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, e := range l.endpoints {
		if now.Sub(e.seen) > idleForget {
			delete(l.endpoints, k)
			continue
		}
		if e.limit != l.base {
			out[k] = e.limit
		}
	}
	return out
}
