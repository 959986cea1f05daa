// Package testkit holds what Formward's tests share to wait for events instead of time: a
// deadline-bound Eventually, a channel receive with a deadline, and a clock the test moves by
// hand. Tests import it; production code never does.
//
// A test never sleeps to synchronise. It waits for the event it needs (a message on a channel, a
// row in a store, a counter reaching a value) with a deadline that only bounds a failure, and it
// checks "nothing happened" by waiting for a later event that must come after the thing that must
// not happen, or by moving a fake clock exactly past the moment it would happen.
package testkit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Patience is the deadline the helpers use when a test gives none: long enough that a loaded
// machine never hits it when the code is right, since it only bounds how long a failure waits.
const Patience = 10 * time.Second

// The helpers check a condition after firstPoll, then twice as long each time up to lastPoll: a
// quick answer is seen at once, a slow one (an HTTP round trip to a started binary) is not
// asked for hundreds of times a second.
const (
	firstPoll = time.Millisecond
	lastPoll  = 50 * time.Millisecond
)

// Eventually waits until cond holds, checking it every few milliseconds, and fails the test with
// the message (a fmt format and its arguments) when within passes first. within <= 0 means
// Patience.
func Eventually(t testing.TB, within time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !Wait(within, cond) {
		t.Fatalf("timed out after %s waiting for %s", orPatience(within), fmt.Sprintf(format, args...))
	}
}

// Wait waits until cond holds and reports whether it did before within passed (<= 0: Patience).
// Use it where a test must not stop at the first failure, or from a goroutine other than the
// test's own.
func Wait(within time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(orPatience(within))
	defer deadline.Stop()
	poll := time.NewTimer(firstPoll)
	defer poll.Stop()
	for every := firstPoll; ; {
		select {
		case <-poll.C:
			if cond() {
				return true
			}
			every = min(2*every, lastPoll)
			poll.Reset(every)
		case <-deadline.C:
			return cond()
		}
	}
}

// Receive returns the next value from ch and fails the test when within passes first, or when ch
// is closed. within <= 0 means Patience.
func Receive[T any](t testing.TB, ch <-chan T, within time.Duration, format string, args ...any) T {
	t.Helper()
	deadline := time.NewTimer(orPatience(within))
	defer deadline.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("closed while waiting for %s", fmt.Sprintf(format, args...))
		}
		return v
	case <-deadline.C:
		t.Fatalf("timed out after %s waiting for %s", orPatience(within), fmt.Sprintf(format, args...))
	}
	panic("unreachable")
}

// Closed waits until ch is closed (or delivers a value) and fails the test when within passes
// first. within <= 0 means Patience.
func Closed[T any](t testing.TB, ch <-chan T, within time.Duration, format string, args ...any) {
	t.Helper()
	deadline := time.NewTimer(orPatience(within))
	defer deadline.Stop()
	select {
	case <-ch:
	case <-deadline.C:
		t.Fatalf("timed out after %s waiting for %s", orPatience(within), fmt.Sprintf(format, args...))
	}
}

// PastMillisecond waits until the wall clock has left ts's millisecond and returns the time then.
// Code that stamps times with the system clock and stores milliseconds (audit events,
// submissions, IDs) then stamps anything after it later than ts.
func PastMillisecond(t testing.TB, ts time.Time) time.Time {
	t.Helper()
	var now time.Time
	Eventually(t, 0, func() bool {
		now = time.Now()
		return now.UnixMilli() > ts.UnixMilli()
	}, "the wall clock to pass %s", ts.Format(time.RFC3339Nano))
	return now
}

func orPatience(d time.Duration) time.Duration {
	if d <= 0 {
		return Patience
	}
	return d
}

// Clock is a clock the test moves by hand (it satisfies ports.Clock). It is safe for concurrent
// use. Code under test that waits on wall-clock timers still does; Clock only answers Now.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start until moved.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
