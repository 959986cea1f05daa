package delivery

import "github.com/sony/gobreaker/v2"

// BreakerCounts says how many endpoint breakers are closed, half-open and open (for metrics:
// counts by state, never endpoint IDs).
func (c *Client) BreakerCounts() (closed, halfOpen, open int) {
	c.mu.Lock()
	bs := make([]*endpointBreaker, 0, len(c.breakers))
	for _, b := range c.breakers {
		bs = append(bs, b)
	}
	c.mu.Unlock()
	for _, b := range bs {
		switch b.cb.State() {
		case gobreaker.StateOpen:
			open++
		case gobreaker.StateHalfOpen:
			halfOpen++
		default:
			closed++
		}
	}
	return closed, halfOpen, open
}
