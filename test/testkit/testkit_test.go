package testkit_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/test/testkit"
)

func TestEventuallySeesAConditionMadeTrueElsewhere(t *testing.T) {
	var done atomic.Bool
	ready := make(chan struct{})
	go func() {
		<-ready
		done.Store(true)
	}()
	close(ready)
	testkit.Eventually(t, 0, done.Load, "the flag")
}

func TestWaitGivesUpAtItsDeadline(t *testing.T) {
	if testkit.Wait(5*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never holds was reported held")
	}
}

func TestReceiveReturnsTheValue(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := testkit.Receive(t, ch, 0, "the value"); got != 7 {
		t.Fatalf("got %d, want 7", got)
	}
	close(ch)
	testkit.Closed(t, ch, 0, "the close")
}

func TestClockMovesOnlyByHand(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testkit.NewClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	if got := c.Advance(time.Minute); !got.Equal(start.Add(time.Minute)) || !c.Now().Equal(got) {
		t.Fatalf("Advance = %v, Now = %v", got, c.Now())
	}
	c.Set(start)
	if !c.Now().Equal(start) {
		t.Fatalf("after Set: %v", c.Now())
	}
}

func TestPastMillisecondLeavesTheMillisecond(t *testing.T) {
	ts := time.Now()
	if got := testkit.PastMillisecond(t, ts); got.UnixMilli() <= ts.UnixMilli() {
		t.Fatalf("%v is in the millisecond of %v", got, ts)
	}
}
