package delivery

import "github.com/sony/gobreaker/v2"

// BreakerCounts says how many endpoint breakers are closed, half-open and open (for metrics:
// counts by state, never endpoint IDs).
func (c *Client) BreakerCounts() (closed, halfOpen, open int) {
	c.mu.Lock()
	cbs := make([]*gobreaker.CircuitBreaker[Result], 0, len(c.breakers))
	for _, b := range c.breakers {
		cbs = append(cbs, b.cb)
	}
	c.mu.Unlock()
	return CountStates(cbs)
}

// CountStates says how many of the breakers are closed, half-open and open.
func CountStates[T any](cbs []*gobreaker.CircuitBreaker[T]) (closed, halfOpen, open int) {
	for _, cb := range cbs {
		switch cb.State() {
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
