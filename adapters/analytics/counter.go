// Package analytics counts what happens on the public form pages (views, starts, pages
// reached, submissions with their fill times and answer counts) in memory, and adds the counts to storage every few
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

// visitPage is one page of a multi-page form reached by one visit (its page nonce).
type visitPage struct {
	nonce string
	page  int
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
	// The pages each visit reached, in the same two generations.
	reached, olderReached map[visitPage]struct{}
	rotated               time.Time

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
		nonces: map[string]struct{}{}, older: map[string]struct{}{}, reached: map[visitPage]struct{}{}, olderReached: map[visitPage]struct{}{}}
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
	return c.start(formID, pageNonce, at)
}

// rotate forgets the older generation of nonces when the window passed or the newer one is
// full; c.mu is held.
func (c *Counter) rotate(at time.Time) {
	if c.rotated.IsZero() {
		c.rotated = at
	}
	if at.Sub(c.rotated) >= c.window || len(c.nonces) >= maxNonces || len(c.reached) >= maxNonces {
		c.older, c.nonces = c.nonces, make(map[string]struct{}, len(c.nonces))
		c.olderReached, c.reached = c.reached, make(map[visitPage]struct{}, len(c.reached))
		c.rotated = at
	}
}

// start counts the start of the page nonce unless it counted already; c.mu is held.
func (c *Counter) start(formID, pageNonce string, at time.Time) bool {
	c.rotate(at)
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

// Reached counts a page reached by a visit, once per visit and page.
func (c *Counter) Reached(formID, pageNonce string, page int, at time.Time) {
	if page < 1 {
		return
	}
	c.mu.Lock()
	c.reach(c.day(formID, at), pageNonce, page, at)
	c.mu.Unlock()
}

// reach counts page on d unless the visit counted it already (a visit without a nonce, a
// form-backend post, always counts); c.mu is held.
func (c *Counter) reach(d *ports.FormDay, pageNonce string, page int, at time.Time) {
	if page < 1 {
		return
	}
	if pageNonce != "" {
		c.rotate(at)
		k := visitPage{nonce: pageNonce, page: page}
		if _, ok := c.reached[k]; ok {
			return
		}
		if _, ok := c.olderReached[k]; ok {
			return
		}
		c.reached[k] = struct{}{}
	}
	if d.Pages == nil {
		d.Pages = map[int]int64{}
	}
	d.Pages[page]++
}

// Submitted counts one stored submission: by source, its fill time when it came from a page,
// its answers and the pages it went through. A submission from the public page is also its
// visit's start (the first post of a page without JavaScript, at most once per page nonce);
// a form-backend post, which has no page nonce, is a start of its own.
func (c *Counter) Submitted(formID string, at time.Time, s ports.CountedSubmission) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.day(formID, at)
	d.Submissions++
	if s.API {
		d.APISubmissions++
	} else {
		d.FormSubmissions++
		if s.Nonce != "" {
			c.start(formID, s.Nonce, at)
		} else {
			d.Starts++
		}
	}
	if s.FromPage {
		d.Completions++
		if d.FillTimes == nil {
			d.FillTimes = map[int]int64{}
		}
		d.FillTimes[formstats.BucketOf(s.Fill)]++
	}
	for _, a := range s.Answers {
		count(d, a)
	}
	for _, p := range s.Pages {
		c.reach(d, s.Nonce, p, at)
	}
}

// count adds one answer to the day's counters of its field; c.mu is held. A number field keeps
// at most formstats.MaxNumberValues distinct values per day between two writes: past it a new
// value is rounded (formstats.RoundNumber), so free-form amounts cannot grow memory unbounded.
func count(d *ports.FormDay, a formstats.Answer) {
	if d.Fields == nil {
		d.Fields = map[string]formstats.FieldCounts{}
	}
	fc := d.Fields[a.FieldID]
	fc.Answered++
	switch a.Kind {
	case formstats.KindChoice:
		if fc.Options == nil {
			fc.Options = map[string]int64{}
		}
		a.Value.Each(func(o string) { fc.Options[o]++ })
	case formstats.KindNumber:
		if fc.Numbers == nil {
			fc.Numbers = map[string]int64{}
		}
		a.Value.Each(func(v string) {
			if _, ok := fc.Numbers[v]; !ok && len(fc.Numbers) >= formstats.MaxNumberValues {
				v = formstats.RoundNumber(v)
			}
			fc.Numbers[v]++
		})
	}
	d.Fields[a.FieldID] = fc
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
			p.FormSubmissions += d.FormSubmissions
			p.APISubmissions += d.APISubmissions
			for b, n := range d.FillTimes {
				if p.FillTimes == nil {
					p.FillTimes = map[int]int64{}
				}
				p.FillTimes[b] += n
			}
			for id, fc := range d.Fields {
				if p.Fields == nil {
					p.Fields = map[string]formstats.FieldCounts{}
				}
				p.Fields[id] = p.Fields[id].Add(fc)
			}
			for pg, n := range d.Pages {
				if p.Pages == nil {
					p.Pages = map[int]int64{}
				}
				p.Pages[pg] += n
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
