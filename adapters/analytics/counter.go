// Package analytics counts what happens on the public form pages (views, starts,
// submissions and their fill times) in memory, and adds the counts to storage every few
// seconds and on shutdown, so that counting costs a page one map increment under a lock.
package analytics

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/domain/formstats"
	"github.com/formward/formward/ports"
)

// DefaultFlushInterval is how often the counts are written.
const DefaultFlushInterval = 5 * time.Second

// maxNonces bounds each of the two generations of page nonces remembered for starts: past it
// the older generation is forgotten early (a page could then count a second start; the public
// rate limit bounds what a script could add that way).
const maxNonces = 200_000

type dayKey struct {
	form string
	day  int64
}

// Counter is the in-memory ports.FormActivity over a ports.FormStatsRepository.
type Counter struct {
	store  ports.FormStatsRepository
	log    *zap.Logger
	window time.Duration

	mu      sync.Mutex
	pending map[dayKey]*ports.FormDay
	// Page nonces whose start counted, in two generations: a nonce is remembered for at least
	// one window (the render token's lifetime), at most two.
	nonces, older map[string]struct{}
	rotated       time.Time

	flushMu sync.Mutex
}

var _ ports.FormActivity = (*Counter)(nil)

// New returns a counter writing to store; window is how long a page's start is remembered
// (the render token's lifetime).
func New(store ports.FormStatsRepository, log *zap.Logger, window time.Duration) *Counter {
	if log == nil {
		log = zap.NewNop()
	}
	return &Counter{store: store, log: log, window: window, pending: map[dayKey]*ports.FormDay{},
		nonces: map[string]struct{}{}, older: map[string]struct{}{}}
}

// day returns the pending counts of the form's day of at; c.mu is held.
func (c *Counter) day(formID string, at time.Time) *ports.FormDay {
	d := formstats.Day(at)
	k := dayKey{form: formID, day: d.Unix()}
	p := c.pending[k]
	if p == nil {
		p = &ports.FormDay{FormID: formID, Day: d}
		c.pending[k] = p
	}
	return p
}

// Viewed counts one rendered page.
func (c *Counter) Viewed(formID string, at time.Time) {
	c.mu.Lock()
	c.day(formID, at).Views++
	c.mu.Unlock()
}

// Started counts the page's first interaction once per page nonce.
func (c *Counter) Started(formID, pageNonce string, at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rotated.IsZero() {
		c.rotated = at
	}
	if at.Sub(c.rotated) >= c.window || len(c.nonces) >= maxNonces {
		c.older, c.nonces, c.rotated = c.nonces, make(map[string]struct{}, len(c.nonces)), at
	}
	if _, ok := c.nonces[pageNonce]; ok {
		return false
	}
	if _, ok := c.older[pageNonce]; ok {
		return false
	}
	c.nonces[pageNonce] = struct{}{}
	c.day(formID, at).Starts++
	return true
}

// Submitted counts one stored submission, and its fill time when it came from a page.
func (c *Counter) Submitted(formID string, at time.Time, fill time.Duration, fromPage bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.day(formID, at)
	d.Submissions++
	if fromPage {
		d.Completions++
		if d.FillTimes == nil {
			d.FillTimes = map[int]int64{}
		}
		d.FillTimes[formstats.BucketOf(fill)]++
	}
}

// Flush writes the pending counts. When storage fails they are kept for the next flush.
func (c *Counter) Flush(ctx context.Context) error {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return nil
	}
	batch := c.pending
	c.pending = make(map[dayKey]*ports.FormDay, len(batch))
	c.mu.Unlock()

	days := make([]ports.FormDay, 0, len(batch))
	for _, d := range batch {
		days = append(days, *d)
	}
	if err := c.store.Add(ctx, days); err != nil {
		c.mu.Lock()
		for _, d := range batch {
			p := c.day(d.FormID, d.Day)
			p.Views += d.Views
			p.Starts += d.Starts
			p.Submissions += d.Submissions
			p.Completions += d.Completions
			for b, n := range d.FillTimes {
				if p.FillTimes == nil {
					p.FillTimes = map[int]int64{}
				}
				p.FillTimes[b] += n
			}
		}
		c.mu.Unlock()
		return err
	}
	return nil
}

// Start flushes every interval until the returned stop is called; stop flushes one last time
// (bounded by timeout) and returns when that is done.
func (c *Counter) Start(interval, timeout time.Duration) (stop func()) {
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				if err := c.Flush(ctx); err != nil {
					c.log.Error("write form stats at shutdown", zap.Error(err))
				}
				cancel()
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), interval+timeout)
				if err := c.Flush(ctx); err != nil {
					c.log.Warn("write form stats", zap.Error(err))
				}
				cancel()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
		})
	}
}
