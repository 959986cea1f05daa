package persistence

import (
	"sync"
	"sync/atomic"
)

// committedEvents hands the relay of this process the events its group committer has just
// committed, as the plain JSON that was sealed into their outbox rows, so that the embedded
// relay does not read back and open a payload this process wrote a moment ago: the relay still
// finds the rows to publish, in order, in the outbox (its contract does not change), but reads
// their payloads only for rows it was not handed (written by another process, or before a
// restart, or dropped here when full).
//
// Measured (make bench, SQLite, CPU profile of serve): reading back the payloads, opening them
// and decoding them was 3.9% of the server's CPU; the read and the open are gone for handed-over
// events (docs/performance.md, run 25).
//
// Nothing is kept until a relay of this process has asked once (serve without the embedded
// relay, in the scaled-out mode, never does), and at most maxHandedOver events: when full it is
// emptied, and the relay reads those payloads from the table as before.
type committedEvents struct {
	wanted atomic.Bool
	mu     sync.Mutex
	plain  map[string][]byte // event ID → its Data as JSON
}

const maxHandedOver = 8192

// put keeps the committed events' payloads for the relay (only after their commit).
func (c *committedEvents) put(batch []*pendingAdd) {
	if !c.wanted.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plain == nil || len(c.plain)+len(batch) > maxHandedOver {
		c.plain = make(map[string][]byte, maxHandedOver)
	}
	for _, p := range batch {
		if p.refused == nil && p.event.plain != nil {
			c.plain[p.event.id] = p.event.plain
		}
	}
}

// take returns and forgets the payload of one committed event.
func (c *committedEvents) take(id string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.plain[id]
	if ok {
		delete(c.plain, id)
	}
	return p, ok
}
