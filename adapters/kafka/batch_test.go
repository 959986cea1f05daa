package kafka

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
)

func TestRunBatchesHandlesEveryEventAndCommitsTheBatch(t *testing.T) {
	const topic, partitions, n, forms = "batches", 3, 600, 6
	brokers, pub := newTopic(t, topic, partitions)
	if err := pub.Publish(context.Background(), testEvents(n, forms)); err != nil {
		t.Fatal(err)
	}
	s := newTestSubscriber(t, brokers, topic, "batch-group")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	seen := map[string]bool{}
	next := map[string]int{}
	calls, largest, failed := 0, 0, false
	err := s.RunBatches(ctx, func(_ context.Context, evs []event.Event) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if !failed && len(evs) > 1 {
			failed = true // the whole batch must come again
			return errors.New("database down")
		}
		if len(evs) > 100 {
			t.Errorf("batch of %d, want at most 100", len(evs))
		}
		largest = max(largest, len(evs))
		for _, e := range evs {
			if k := seqOf(t, e); k < next[e.FormID] {
				continue // a redelivery of an event already handled
			} else if k != next[e.FormID] {
				t.Errorf("form %s: event %d, want %d", e.FormID, k, next[e.FormID])
			}
			next[e.FormID]++
			seen[e.ID] = true
		}
		if len(seen) == n {
			cancel()
		}
		return nil
	}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("handled %d of %d events", len(seen), n)
	}
	if largest < 2 || calls >= n {
		t.Fatalf("largest batch %d in %d calls, want batches", largest, calls)
	}
	var total int64
	for _, off := range committed(t, brokers, "batch-group", topic, partitions) {
		// -1: nothing committed, as on a partition that no form's key hashes to (murmur2 puts
		// these six forms on two of the three partitions).
		total += max(off, 0)
	}
	if total != n {
		t.Fatalf("committed offsets add up to %d, want %d", total, n)
	}
}
