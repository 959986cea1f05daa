package dispatch

import (
	"testing"
	"time"
)

// fakeClock moves only when the test moves it.
type fakeClock struct{ at time.Time }

func (c *fakeClock) Now() time.Time { return c.at }

func newTestLimits() (*limits, *fakeClock) {
	clock := &fakeClock{at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newLimits(2, 16, 10*time.Second, clock), clock
}

// answer records n fast answers of an endpoint that uses its whole limit.
func answer(l *limits, ep string, n int, took time.Duration) {
	for range n {
		l.observe(ep, Answered, took, l.limit(ep))
	}
}

// A fast endpoint's limit grows by one per window of fast answers as long as the limit, up to max.
func TestLimitGrowsForFastEndpoint(t *testing.T) {
	l, _ := newTestLimits()
	if got := l.limit("whk_a"); got != 2 {
		t.Fatalf("a new endpoint's limit is %d, want the configured 2", got)
	}
	answer(l, "whk_a", 1, 3*time.Millisecond)
	if got := l.limit("whk_a"); got != 2 {
		t.Fatalf("after one fast answer the limit is %d, want 2 (a window is as long as the limit)", got)
	}
	answer(l, "whk_a", 1, 3*time.Millisecond)
	if got := l.limit("whk_a"); got != 3 {
		t.Fatalf("after a window of fast answers the limit is %d, want 3", got)
	}
	answer(l, "whk_a", 3, 3*time.Millisecond)
	if got := l.limit("whk_a"); got != 4 {
		t.Fatalf("after the next window the limit is %d, want 4", got)
	}
	answer(l, "whk_a", 1000, 3*time.Millisecond)
	if got := l.limit("whk_a"); got != 16 {
		t.Fatalf("after many fast answers the limit is %d, want the ceiling 16", got)
	}
	if got := l.limit("whk_b"); got != 2 {
		t.Fatalf("another endpoint's limit is %d, want 2: limits are per endpoint", got)
	}
}

// An endpoint that does not use its limit does not show it could take more: no growth.
func TestLimitHoldsWhenUnused(t *testing.T) {
	l, _ := newTestLimits()
	answer(l, "whk_a", 200, time.Millisecond) // grows
	grown := l.limit("whk_a")
	for range 100 {
		l.observe("whk_a", Answered, time.Millisecond, 1)
	}
	if got := l.limit("whk_a"); got != grown {
		t.Fatalf("with one attempt in flight the limit moved from %d to %d, want it held", grown, got)
	}
}

// An overload (error, timeout, 429/5xx, open breaker) halves the limit, not below 1.
func TestLimitHalvesOnOverload(t *testing.T) {
	l, _ := newTestLimits()
	answer(l, "whk_a", 1000, 3*time.Millisecond)
	for _, want := range []int{8, 4, 2, 1, 1} {
		l.observe("whk_a", Overloaded, 10*time.Second, 1)
		if got := l.limit("whk_a"); got != want {
			t.Fatalf("after an overload the limit is %d, want %d", got, want)
		}
	}
	// It grows back from 1 once the endpoint answers fast again.
	answer(l, "whk_a", 1, 3*time.Millisecond)
	if got := l.limit("whk_a"); got != 2 {
		t.Fatalf("after a fast answer at limit 1 the limit is %d, want 2", got)
	}
	// A refusal (a 4xx other than 429) says nothing about load.
	l.observe("whk_a", Refused, time.Millisecond, 2)
	if got := l.limit("whk_a"); got != 2 {
		t.Fatalf("after a refusal the limit is %d, want it held at 2", got)
	}
}

// An answer much slower than the endpoint's fastest recent one, or near the timeout, never
// grows the limit; it takes one away, not below the configured share.
func TestLimitShrinksOnSlowAnswers(t *testing.T) {
	l, _ := newTestLimits()
	answer(l, "whk_a", 50, 5*time.Millisecond)
	grown := l.limit("whk_a")
	if grown <= 3 {
		t.Fatalf("limit %d after 50 fast answers, want it grown", grown)
	}
	l.observe("whk_a", Answered, 200*time.Millisecond, grown) // > 2×5ms+20ms
	if got := l.limit("whk_a"); got != grown-1 {
		t.Fatalf("after a slow answer the limit is %d, want %d", got, grown-1)
	}
	for range 100 {
		l.observe("whk_a", Answered, 2*time.Second, 16) // over a tenth of the timeout
	}
	if got := l.limit("whk_a"); got != 2 {
		t.Fatalf("after many slow answers the limit is %d, want the configured 2", got)
	}
}

// Hanging endpoints never answer, so they never grow; timeouts halve them.
func TestLimitOfHangingEndpointNeverGrows(t *testing.T) {
	l, _ := newTestLimits()
	for range 10 {
		l.observe("whk_hang", Overloaded, 10*time.Second, 2)
		if got := l.limit("whk_hang"); got > 2 {
			t.Fatalf("a timing-out endpoint's limit grew to %d", got)
		}
	}
}

// An endpoint not heard from for a while starts again from the configured share.
func TestLimitForgottenWhenIdle(t *testing.T) {
	l, clock := newTestLimits()
	answer(l, "whk_a", 1000, time.Millisecond)
	if got := l.snapshot()["whk_a"]; got != 16 {
		t.Fatalf("snapshot has %d for the grown endpoint, want 16", got)
	}
	clock.at = clock.at.Add(idleForget - time.Second)
	if got := l.snapshot()["whk_a"]; got != 16 {
		t.Fatalf("before the idle time the snapshot has %d, want 16", got)
	}
	clock.at = clock.at.Add(2 * time.Second)
	if got, ok := l.snapshot()["whk_a"]; ok {
		t.Fatalf("after the idle time the snapshot still has %d", got)
	}
	if got := l.limit("whk_a"); got != 2 {
		t.Fatalf("after the idle time the limit is %d, want 2", got)
	}
}

// The ceiling is bounded by Concurrency, and adaptation needs a per-endpoint bound.
func TestDispatchConfigBoundsTheCeiling(t *testing.T) {
	c := DispatchConfig{Concurrency: 8, PerWorkspace: 4, PerEndpoint: 2, PerEndpointMax: 32}.withDefaults()
	if c.PerEndpointMax != 8 {
		t.Fatalf("PerEndpointMax %d, want Concurrency 8", c.PerEndpointMax)
	}
	if c := (DispatchConfig{PerEndpointMax: 16}).withDefaults(); c.PerEndpointMax != 0 {
		t.Fatalf("without PerEndpoint PerEndpointMax is %d, want 0 (no endpoint bound to adapt)", c.PerEndpointMax)
	}
	if got := (DispatchConfig{Concurrency: 16, PerWorkspace: 4}).withDefaults().reserve(); got != 4 {
		t.Fatalf("reserve %d, want 4", got)
	}
	if got := (DispatchConfig{Concurrency: 16, PerWorkspace: 16}).withDefaults().reserve(); got != 0 {
		t.Fatalf("reserve %d with no fairness, want 0", got)
	}
}
