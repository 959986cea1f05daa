package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/formward/formward/ports"
)

// dispatchConfig tunes a claim-and-dispatch loop. Zero fields take the defaults.
type DispatchConfig struct {
	// Concurrency is how many items are worked on at once (default 16).
	Concurrency int
	// PerWorkspace is how many of them may belong to one workspace (default 4, at most Concurrency).
	PerWorkspace int
	// PerEndpoint is how many may go to one endpoint (0: no bound of its own). With
	// PerEndpointMax it is where each endpoint's adaptive limit starts.
	PerEndpoint int
	// PerEndpointMax, when positive (and PerEndpoint too), makes the per-endpoint bound adaptive:
	// it grows while the endpoint answers fast, up to PerEndpointMax (at most Concurrency), and
	// halves on overloads (see Observe). 0 keeps PerEndpoint fixed.
	PerEndpointMax int
	// Timeout is an attempt's timeout: an answer slower than a tenth of it never grows a limit.
	Timeout time.Duration
	// ClaimBatch is the most items claimed at once (default Concurrency).
	ClaimBatch int
	// Lease is how long a claimed item is hidden from other engines.
	Lease time.Duration
	// PollInterval is how long an idle loop waits before claiming again (default 100ms).
	PollInterval time.Duration
}

// DefaultConcurrencyPerWorkspace is how many attempts of one workspace an engine makes at once
// unless configured otherwise.
const DefaultConcurrencyPerWorkspace = 4

func (c DispatchConfig) withDefaults() DispatchConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.PerWorkspace <= 0 {
		c.PerWorkspace = DefaultConcurrencyPerWorkspace
	}
	c.PerWorkspace = min(c.PerWorkspace, c.Concurrency)
	if c.PerEndpoint > c.PerWorkspace {
		c.PerEndpoint = c.PerWorkspace
	}
	if c.PerEndpoint <= 0 {
		c.PerEndpointMax = 0
	}
	if c.PerEndpointMax > 0 {
		c.PerEndpointMax = max(min(c.PerEndpointMax, c.Concurrency), c.PerEndpoint)
	}
	if c.ClaimBatch <= 0 {
		c.ClaimBatch = c.Concurrency
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 100 * time.Millisecond
	}
	return c
}

// reserve is how many slots items over their workspace's share never take: enough for another
// workspace's full share, when the engine has that many beside one share.
func (c DispatchConfig) reserve() int {
	return min(c.PerWorkspace, c.Concurrency-c.PerWorkspace)
}

// Dispatcher is the claim-and-dispatch loop of the delivery engine and the run engine. It
// claims only what can start at once, within each workspace's and endpoint's share counting
// the items in flight, and works on each claimed item in its own goroutine. A workspace whose
// endpoints hang thus holds at most PerWorkspace slots; the others stay free for everyone else.
//
// With adaptive per-endpoint limits (PerEndpointMax), the rule is:
//   - each endpoint has a limit of its own, starting at PerEndpoint: it grows by one after a
//     window of fast answers as long as the limit (while the endpoint uses at least half of
//     it), up to PerEndpointMax; an overload (an error, a timeout, a 429 or 5xx, an open
//     breaker) halves it, not below 1; a slow 2xx takes one away, not below PerEndpoint;
//   - an endpoint's first PerEndpoint items in flight (all items without an endpoint) count
//     toward its workspace's share, PerWorkspace, as before;
//   - a workspace may go over its share only with items of endpoints whose limit has grown
//     above PerEndpoint (they answer well), beyond the PerEndpoint such an endpoint already
//     has in flight or claimed, and only while the engine keeps
//     min(PerWorkspace, Concurrency-PerWorkspace) slots free after the claim (the reserve):
//     items within a share are claimed first, workspaces in turn, then those over it,
//     endpoints in turn.
//
// Hanging endpoints never answer fast, so they never grow, and their workspace keeps to its
// share; a healthy endpoint uses the slots nobody else wants, yet a newly due workspace always
// finds the reserve free, or slots that free within an answer of a healthy endpoint.
type Dispatcher[T any] struct {
	cfg    DispatchConfig
	clock  ports.Clock
	limits *limits // nil: fixed per-endpoint bound
	// claim reads due items (ports.DeliveryRepository.ClaimDue, ports.RunRepository.ClaimDue).
	claim func(ctx context.Context, c ports.Claim) ([]T, error)
	// owner names an item's workspace and endpoint ("" when it has none).
	owner func(T) (workspaceID, endpointID string)
	// work handles one claimed item; it must not return before it is done with it.
	work func(ctx context.Context, item T)
	// failed hears a failed claim; the loop tries again after a poll interval.
	failed func(err error)

	wake  chan struct{}
	freed chan struct{}

	mu       sync.Mutex
	inFlight int
	// workspaces counts the items in flight that count toward each workspace's share: all but
	// those of an endpoint beyond its first PerEndpoint (see charged).
	workspaces map[string]int
	endpoints  map[string]int
}

func NewDispatcher[T any](cfg DispatchConfig, clock ports.Clock, claim func(context.Context, ports.Claim) ([]T, error),
	owner func(T) (string, string), work func(context.Context, T), failed func(error)) *Dispatcher[T] {
	d := &Dispatcher[T]{cfg: cfg.withDefaults(), clock: clock, claim: claim, owner: owner, work: work, failed: failed,
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1),
		workspaces: map[string]int{}, endpoints: map[string]int{}}
	if d.cfg.PerEndpointMax > 0 {
		d.limits = newLimits(d.cfg.PerEndpoint, d.cfg.PerEndpointMax, d.cfg.Timeout, clock)
	}
	return d
}

// Observe adjusts the endpoint's adaptive limit after an attempt that took took. work calls it
// before it returns, so the attempt still counts as in flight. Without adaptive limits it does
// nothing.
func (d *Dispatcher[T]) Observe(endpointID string, o Outcome, took time.Duration) {
	if d.limits == nil || endpointID == "" {
		return
	}
	d.mu.Lock()
	n := d.endpoints[endpointID]
	d.mu.Unlock()
	d.limits.observe(endpointID, o, took, n)
}

// EndpointLimit is the endpoint's current bound (PerEndpoint unless adaptive).
func (d *Dispatcher[T]) EndpointLimit(endpointID string) int {
	if d.limits == nil {
		return d.cfg.PerEndpoint
	}
	return d.limits.limit(endpointID)
}

// notify wakes an idle loop at once. It never blocks.
func (d *Dispatcher[T]) Notify() { Signal(d.wake) }

// run claims and dispatches until ctx ends, then waits for the items in flight.
func (d *Dispatcher[T]) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		c := d.request()
		if c.Limit == 0 {
			// Every slot is taken: claim only what can start now, so no claimed item waits out its lease here.
			select {
			case <-d.freed:
			case <-ctx.Done():
			}
			continue
		}
		items, err := d.claim(ctx, c)
		if err != nil {
			if ctx.Err() == nil {
				d.failed(err)
				d.idle(ctx)
			}
			continue
		}
		for _, item := range items {
			ws, ep := d.owner(item)
			d.acquire(ws, ep)
			wg.Go(func() {
				defer d.release(ws, ep)
				d.work(ctx, item)
			})
		}
		if len(items) < c.Limit {
			d.idle(ctx)
		}
		// A full claim: more are probably due, so claim again as soon as a slot is free.
	}
}

// request is the next claim: the free slots, and the shares already in use.
func (d *Dispatcher[T]) request() ports.Claim {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := ports.Claim{Now: d.clock.Now(), Limit: min(d.cfg.Concurrency-d.inFlight, d.cfg.ClaimBatch), Lease: d.cfg.Lease,
		PerWorkspace: d.cfg.PerWorkspace, PerEndpoint: d.cfg.PerEndpoint,
		InFlight: ports.InFlight{Workspaces: make(map[string]int, len(d.workspaces)), Endpoints: make(map[string]int, len(d.endpoints))}}
	c.Limit = max(c.Limit, 0)
	if d.limits != nil {
		c.EndpointLimits = d.limits.snapshot()
		c.Spare = max(d.cfg.Concurrency-d.cfg.reserve()-d.inFlight, 0)
	}
	for k, n := range d.workspaces {
		c.InFlight.Workspaces[k] = n
	}
	for k, n := range d.endpoints {
		c.InFlight.Endpoints[k] = n
	}
	return c
}

// charged reports whether the n-th item in flight to endpoint ep counts toward its workspace's
// share: with adaptive limits, only an endpoint's first PerEndpoint do; what a grown limit adds
// is over the share (the claim bounds it by Spare).
func (d *Dispatcher[T]) charged(ep string, n int) bool {
	return d.limits == nil || ep == "" || n <= d.cfg.PerEndpoint
}

func (d *Dispatcher[T]) acquire(ws, ep string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight++
	n := 0
	if ep != "" {
		d.endpoints[ep]++
		n = d.endpoints[ep]
	}
	if d.charged(ep, n) {
		d.workspaces[ws]++
	}
}

func (d *Dispatcher[T]) release(ws, ep string) {
	d.mu.Lock()
	d.inFlight--
	n := 0
	if ep != "" {
		n = d.endpoints[ep]
		if d.endpoints[ep]--; d.endpoints[ep] <= 0 {
			delete(d.endpoints, ep)
		}
	}
	if d.charged(ep, n) {
		if d.workspaces[ws]--; d.workspaces[ws] <= 0 {
			delete(d.workspaces, ws)
		}
	}
	d.mu.Unlock()
	Signal(d.freed)
	// A freed share may let a waiting item of the same workspace or endpoint start.
	Signal(d.wake)
}

// idle waits for a poll interval, a notify, or the end of ctx.
func (d *Dispatcher[T]) idle(ctx context.Context) {
	t := time.NewTimer(d.cfg.PollInterval)
	defer t.Stop()
	select {
	case <-t.C:
	case <-d.wake:
	case <-ctx.Done():
	}
}

// signal sends on a one-slot channel without blocking.
func Signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
