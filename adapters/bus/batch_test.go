package bus

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
)

// runBatchesUntil runs RunBatches until stop holds, or fails after 10s.
func runBatchesUntil(t *testing.T, b *Bus, handle func(context.Context, []event.Event) error, max int, stop func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- b.RunBatches(ctx, handle, max) }()
	for !stop() {
		select {
		case <-ctx.Done():
			t.Fatal("timed out")
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestRunBatchesKeepsOrderPerFormAndBatches(t *testing.T) {
	b := newBus(t, Config{Workers: 3})
	const n, forms = 2000, 5
	if err := b.Publish(context.Background(), events(0, n, forms)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []event.Event
	largest := 0
	handle := func(_ context.Context, evs []event.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if len(evs) > 50 {
			t.Errorf("batch of %d, want at most 50", len(evs))
		}
		for _, e := range evs[1:] {
			if e.FormID != evs[0].FormID {
				t.Errorf("batch mixes forms %s and %s", evs[0].FormID, e.FormID)
			}
		}
		largest = max(largest, len(evs))
		got = append(got, evs...)
		return nil
	}
	runBatchesUntil(t, b, handle, 50, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == n })
	last := map[string]int{}
	for _, e := range got {
		k := e.Data["n"].(int)
		if prev, ok := last[e.FormID]; ok && k <= prev {
			t.Fatalf("form %s: event %d after %d", e.FormID, k, prev)
		}
		last[e.FormID] = k
	}
	if largest < 2 {
		t.Fatalf("largest batch = %d, want events taken together", largest)
	}
	if b.Len() != 0 {
		t.Fatalf("Len = %d after everything was handled", b.Len())
	}
}

func TestRunBatchesRedeliversAFailedBatch(t *testing.T) {
	b := newBus(t, Config{})
	if err := b.Publish(context.Background(), events(0, 10, 1)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := 0
	seen := map[string]int{}
	handle := func(_ context.Context, evs []event.Event) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return errors.New("database down")
		}
		for _, e := range evs {
			seen[e.ID]++
		}
		return nil
	}
	runBatchesUntil(t, b, handle, 100, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 10 })
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s handled %d times after the failed call", id, n)
		}
	}
}
