package kafka

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
)

func TestTwoMembersShareTheTopic(t *testing.T) {
	const topic, partitions, n = "events", 4, 400
	brokers := newCluster(t, topic, partitions)
	pub := NewPublisher(PublisherConfig{Brokers: brokers, Topic: topic})
	defer pub.Close()
	evs := testEvents(n, 20)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	seen := map[string]int{}
	perMember := [2]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 2 {
		s := newTestSubscriber(t, brokers, topic, "g")
		wg.Go(func() {
			if err := s.Run(ctx, func(_ context.Context, e event.Event) error {
				mu.Lock()
				defer mu.Unlock()
				seen[e.ID]++
				perMember[i]++
				if len(seen) == n {
					cancel()
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
		if i == 0 {
			if err := pub.Publish(context.Background(), evs[:n/2]); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(time.Second) // the group rebalances (about 150ms with a 100ms heartbeat)
	if err := pub.Publish(context.Background(), evs[n/2:]); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d of %d events delivered", len(seen), n)
	}
	if perMember[0] == 0 || perMember[1] == 0 {
		t.Errorf("members handled %v events: the second never got partitions", perMember)
	}
	t.Logf("members handled %v in %v", perMember, time.Since(start))
}
