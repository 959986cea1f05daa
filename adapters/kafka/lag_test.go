package kafka

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// produceTo writes counts[p] messages to partition p; each message is a decodable event.
func produceTo(t *testing.T, brokers []string, topic string, counts map[int]int) {
	t.Helper()
	w := &kafkago.Writer{
		Addr: kafkago.TCP(brokers...), Topic: topic, BatchTimeout: time.Millisecond,
		// The key names the partition, so the test knows where every message went.
		Balancer: kafkago.BalancerFunc(func(m kafkago.Message, _ ...int) int {
			p, _ := strconv.Atoi(string(m.Key))
			return p
		}),
	}
	defer w.Close()
	var msgs []kafkago.Message
	for p, n := range counts {
		for _, e := range testEvents(n, 1) {
			m, err := Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			m.Key = []byte(strconv.Itoa(p))
			msgs = append(msgs, m)
		}
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

func lagOf(t *testing.T, r *LagReader) []int64 {
	t.Helper()
	got, err := r.Lag(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(got))
	for i, p := range got {
		if p.Partition != i {
			t.Fatalf("lag of partition %d at position %d: want partition order", p.Partition, i)
		}
		out[i] = p.Lag
	}
	return out
}

// The lag is read from the brokers alone: produced minus committed per partition, counted from
// the oldest event for a group that has committed nothing, and growing while no member consumes.
func TestLagReaderFollowsTheGroupsCommits(t *testing.T) {
	const topic, group = "events", "workers"
	brokers := newCluster(t, topic, 3)
	r := NewLagReader(brokers, topic, group)
	if r.Topic() != topic || r.Group() != group {
		t.Fatalf("reader of %s/%s", r.Topic(), r.Group())
	}

	if got := lagOf(t, r); !reflect.DeepEqual(got, []int64{0, 0, 0}) {
		t.Fatalf("empty topic: lag %v, want 0 everywhere", got)
	}
	produceTo(t, brokers, topic, map[int]int{0: 5, 1: 3})
	if got := lagOf(t, r); !reflect.DeepEqual(got, []int64{5, 3, 0}) {
		t.Fatalf("5 and 3 produced, nothing committed: lag %v, want [5 3 0]", got)
	}

	// The group commits 2 of partition 0 and all 3 of partition 1.
	client := &kafkago.Client{Addr: kafkago.TCP(brokers...)}
	resp, err := client.OffsetCommit(context.Background(), &kafkago.OffsetCommitRequest{GroupID: group, GenerationID: -1,
		Topics: map[string][]kafkago.OffsetCommit{topic: {{Partition: 0, Offset: 2}, {Partition: 1, Offset: 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range resp.Topics {
		for _, p := range ps {
			if p.Error != nil {
				t.Fatalf("commit partition %d: %v", p.Partition, p.Error)
			}
		}
	}
	if got := lagOf(t, r); !reflect.DeepEqual(got, []int64{3, 0, 0}) {
		t.Fatalf("after commits of 2 and 3: lag %v, want [3 0 0]", got)
	}

	// A member handles the rest, then stops; what is produced meanwhile is lag.
	run(t, newTestSubscriber(t, brokers, topic, group), 30*time.Second, 3, nil)
	if got := lagOf(t, r); !reflect.DeepEqual(got, []int64{0, 0, 0}) {
		t.Fatalf("after the member caught up: lag %v, want 0 everywhere", got)
	}
	produceTo(t, brokers, topic, map[int]int{0: 1, 2: 4})
	if got := lagOf(t, r); !reflect.DeepEqual(got, []int64{1, 0, 4}) {
		t.Fatalf("consumer stopped, 1 and 4 produced: lag %v, want [1 0 4]", got)
	}
	produceTo(t, brokers, topic, map[int]int{2: 2})
	if got := lagOf(t, r); !reflect.DeepEqual(got, []int64{1, 0, 6}) {
		t.Fatalf("consumer still stopped, 2 more: lag %v, want [1 0 6]", got)
	}

	// Another group is independent: it has committed nothing, so it lags by everything.
	if got := lagOf(t, NewLagReader(brokers, topic, "others")); !reflect.DeepEqual(got, []int64{6, 3, 6}) {
		t.Fatalf("a group without commits: lag %v, want [6 3 6]", got)
	}
}

func TestLagReaderOfAMissingTopicFails(t *testing.T) {
	brokers := newCluster(t, "events", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := NewLagReader(brokers, "nope", "workers").Lag(ctx); err == nil {
		t.Fatal("the lag of a topic that does not exist was read")
	}
}
