package actionkit

import (
	"sync"

	"github.com/sony/gobreaker/v2"

	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/ports"
)

// Counts says how many of the set's breakers are closed, half-open and open (for metrics:
// counts by state, never action IDs).
func (b *Breakers) Counts() (closed, halfOpen, open int) {
	b.mu.Lock()
	cbs := make([]*gobreaker.CircuitBreaker[ports.ActionOutcome], 0, len(b.m))
	for _, ab := range b.m {
		cbs = append(cbs, ab.cb)
	}
	b.mu.Unlock()
	return delivery.CountStates(cbs)
}

// BreakerSets collects the breaker sets of several runners (BreakerOptions.Created) and counts
// them together.
type BreakerSets struct {
	mu   sync.Mutex
	sets []*Breakers
}

// Add is a BreakerOptions.Created.
func (s *BreakerSets) Add(b *Breakers) {
	s.mu.Lock()
	s.sets = append(s.sets, b)
	s.mu.Unlock()
}

// Counts adds up the counts of every set.
func (s *BreakerSets) Counts() (closed, halfOpen, open int) {
	s.mu.Lock()
	sets := append([]*Breakers(nil), s.sets...)
	s.mu.Unlock()
	for _, b := range sets {
		c, h, o := b.Counts()
		closed, halfOpen, open = closed+c, halfOpen+h, open+o
	}
	return closed, halfOpen, open
}
