package kafka

import (
	"context"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/test/testkit"
)

func TestTwoMembersShareTheTopic(t *testing.T) {
	const topic, partitions, n = "events", 4, 400
	brokers, pub := newTopic(t, topic, partitions)
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
	// The second half goes out once the broker has given each member partitions.
	testkit.Eventually(t, 0, func() bool { return groupShared(brokers, "g", 2) }, "the group to give both members partitions")
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

// groupShared reports whether the broker sees the group stable with members members, each
// holding at least one partition.
func groupShared(brokers []string, group string, members int) bool {
	client := &kafkago.Client{Addr: kafkago.TCP(brokers...)}
	resp, err := client.DescribeGroups(context.Background(), &kafkago.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(resp.Groups) != 1 {
		return false
	}
	g := resp.Groups[0]
	if g.Error != nil || g.GroupState != "Stable" || len(g.Members) != members {
		return false
	}
	for _, m := range g.Members {
		n := 0
		for _, tp := range m.MemberAssignments.Topics {
			n += len(tp.Partitions)
		}
		if n == 0 {
			return false
		}
	}
	return true
}
