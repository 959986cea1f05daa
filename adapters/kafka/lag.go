package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"

	kafkago "github.com/segmentio/kafka-go"
)

// PartitionLag is how many events of one partition a consumer group has not handled yet.
type PartitionLag struct {
	Partition int
	Lag       int64
}

// LagReader reads a consumer group's lag on a topic from the brokers alone, so any process with
// a Kafka client can report it: the relay keeps reporting the worker's lag while no worker runs.
type LagReader struct {
	client *kafkago.Client
	topic  string
	group  string
}

// NewLagReader makes a reader of group's lag on topic (DefaultTopic and DefaultGroupID when
// empty). It connects on the first Lag.
func NewLagReader(brokers []string, topic, group string) *LagReader {
	if topic == "" {
		topic = DefaultTopic
	}
	if group == "" {
		group = DefaultGroupID
	}
	return &LagReader{client: &kafkago.Client{Addr: kafkago.TCP(brokers...)}, topic: topic, group: group}
}

// Topic is the topic whose lag is read.
func (r *LagReader) Topic() string { return r.topic }

// Group is the consumer group whose lag is read.
func (r *LagReader) Group() string { return r.group }

// Lag returns, per partition of the topic in partition order, the high watermark minus the
// group's committed offset. Where the group has committed nothing, or an offset older than the
// oldest retained event, the group starts at the oldest retained event (as the worker does), so
// the lag counts from there. Three requests: metadata, the offsets, the group's commits.
func (r *LagReader) Lag(ctx context.Context) ([]PartitionLag, error) {
	meta, err := r.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{r.topic}})
	if err != nil {
		return nil, fmt.Errorf("consumer lag: %w", err)
	}
	var partitions []int
	for _, t := range meta.Topics {
		if t.Name != r.topic {
			continue
		}
		if t.Error != nil {
			return nil, fmt.Errorf("consumer lag: topic %s: %w", r.topic, t.Error)
		}
		for _, p := range t.Partitions {
			partitions = append(partitions, p.ID)
		}
	}
	if len(partitions) == 0 {
		return nil, fmt.Errorf("consumer lag: topic %s has no partitions", r.topic)
	}
	slices.Sort(partitions)

	// One request per end: a broker refuses a partition named twice in one ListOffsets.
	first, err := r.offsets(ctx, partitions, kafkago.FirstOffsetOf)
	if err != nil {
		return nil, err
	}
	last, err := r.offsets(ctx, partitions, kafkago.LastOffsetOf)
	if err != nil {
		return nil, err
	}
	fetched, err := r.client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: r.group, Topics: map[string][]int{r.topic: partitions}})
	if err != nil {
		return nil, fmt.Errorf("consumer lag: committed offsets of %s: %w", r.group, err)
	}
	committed := make(map[int]int64, len(partitions))
	switch {
	case errors.Is(fetched.Error, kafkago.GroupIdNotFound):
		// A group no worker ever joined has committed nothing: everything retained is lag.
	case fetched.Error != nil:
		return nil, fmt.Errorf("consumer lag: committed offsets of %s: %w", r.group, fetched.Error)
	}
	for _, p := range fetched.Topics[r.topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("consumer lag: committed offset of %s partition %d: %w", r.group, p.Partition, p.Error)
		}
		committed[p.Partition] = p.CommittedOffset
	}

	out := make([]PartitionLag, 0, len(partitions))
	for _, p := range partitions {
		hw, oldest := last[p], first[p]
		from, ok := committed[p]
		if !ok || from < oldest {
			from = oldest // no commit (-1), or one retention has passed
		}
		out = append(out, PartitionLag{Partition: p, Lag: max(hw-from, 0)})
	}
	return out, nil
}

// offsets lists one end of each partition (its first or its next offset).
func (r *LagReader) offsets(ctx context.Context, partitions []int, end func(int) kafkago.OffsetRequest) (map[int]int64, error) {
	reqs := make([]kafkago.OffsetRequest, len(partitions))
	for i, p := range partitions {
		reqs[i] = end(p)
	}
	resp, err := r.client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{r.topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("consumer lag: offsets of %s: %w", r.topic, err)
	}
	out := make(map[int]int64, len(partitions))
	for _, p := range resp.Topics[r.topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("consumer lag: offsets of %s partition %d: %w", r.topic, p.Partition, p.Error)
		}
		// kafka-go files a broker's answer by the timestamp the broker echoes, which is -1 for
		// both ends, so an earliest offset may land in LastOffset; the end not asked for is -1
		// or 0, never more than the answer.
		out[p.Partition] = max(p.FirstOffset, p.LastOffset)
	}
	if len(out) != len(partitions) {
		return nil, errors.New("consumer lag: the broker listed offsets of fewer partitions than asked")
	}
	return out, nil
}
