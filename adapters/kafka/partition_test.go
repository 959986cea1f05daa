package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/formward/formward/domain/event"
)

// javaMurmur2 is a line-by-line port of org.apache.kafka.common.utils.Utils.murmur2, in Java's
// int arithmetic: int32 wraps like Java's int, and Java's ">>>" is a shift of the unsigned bits.
func javaMurmur2(data []byte) int32 {
	length := int32(len(data))
	const seed = int32(-1756908916) // 0x9747b28c as a Java int
	const m = int32(0x5bd1e995)
	const r = 24
	urs := func(x int32, n uint) int32 { return int32(uint32(x) >> n) } // Java's >>>

	h := seed ^ length
	length4 := length / 4
	for i := int32(0); i < length4; i++ {
		i4 := i * 4
		k := (int32(data[i4+0]) & 0xff) + ((int32(data[i4+1]) & 0xff) << 8) +
			((int32(data[i4+2]) & 0xff) << 16) + ((int32(data[i4+3]) & 0xff) << 24)
		k *= m
		k ^= urs(k, r)
		k *= m
		h *= m
		h ^= k
	}
	switch length % 4 { // Java's switch falls through from case 3 to case 1
	case 3:
		h ^= (int32(data[(length&^3)+2]) & 0xff) << 16
		fallthrough
	case 2:
		h ^= (int32(data[(length&^3)+1]) & 0xff) << 8
		fallthrough
	case 1:
		h ^= int32(data[length&^3]) & 0xff
		h *= m
	}
	h ^= urs(h, 13)
	h *= m
	h ^= urs(h, 15)
	return h
}

// javaPartition is the Java producer's partition of a keyed record:
// Utils.toPositive(Utils.murmur2(keyBytes)) % numPartitions.
func javaPartition(key string, partitions int) int {
	return int(javaMurmur2([]byte(key))&0x7fffffff) % partitions
}

func TestJavaMurmur2PortMatchesPublishedValues(t *testing.T) {
	// Kafka's own UtilsTest.testMurmur2 (clients/src/test/java/org/apache/kafka/common/utils),
	// and the values that Akka's Murmur2Spec took from Kafka's implementation. Negative and
	// positive hashes, and every tail length (0 to 3 bytes after the 4-byte blocks).
	published := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc":   479470107,
		"1":     -1993445489,
		"12":    126087238,
		"123":   -267702483,
		"1234":  -1614185708,
		"12345": -1188365604,
	}
	for key, want := range published {
		if got := javaMurmur2([]byte(key)); got != want {
			t.Errorf("javaMurmur2(%q) = %d, want %d", key, got, want)
		}
	}
}

// javaPartitions are the partitions that Kafka's Java producer (DefaultPartitioner, and the
// built-in partitioner since 3.3 for keyed records) and Kafka Streams pick for these form IDs,
// computed with javaMurmur2 above and hard-coded so that a change to the port is caught too.
var javaPartitions = []struct {
	key  string
	n    int
	want int
}{
	{"frm_7Hc2pXa9", 12, 1},
	{"frm_01JD3Q4W8Z", 12, 2},
	{"frm_a", 12, 8},
	{"frm_Xy", 12, 9},
	{"frm_000", 12, 8},
	{"frm_7Hc2pXa9", 3, 1},
	{"frm_7Hc2pXa9", 64, 17},
	{"21", 12, 0},     // published hash -973932308: (2^31 - 973932308) % 12,
	{"foobar", 12, 6}, // published hash -790332482: (2^31 - 790332482) % 12,
}

func TestPartitionerMatchesJava(t *testing.T) {
	franz := kgo.StickyKeyPartitioner(nil).ForTopic("t") // documented as Kafka's own partitioning
	for _, c := range javaPartitions {
		if got := javaPartition(c.key, c.n); got != c.want {
			t.Errorf("Java port: %q over %d partitions = %d, hard-coded %d", c.key, c.n, got, c.want)
		}
		if got := franz.Partition(&kgo.Record{Key: []byte(c.key)}, c.n); got != c.want {
			t.Errorf("franz-go: %q over %d partitions = %d, want %d", c.key, c.n, got, c.want)
		}
		ids := make([]int, c.n)
		for i := range ids {
			ids[i] = i
		}
		if got := Partitioner().Balance(kafkago.Message{Key: []byte(c.key)}, ids...); got != c.want {
			t.Errorf("Partitioner: %q over %d partitions = %d, want %d", c.key, c.n, got, c.want)
		}
	}
	// Many keys more, against the port: a negative hash must be masked, not negated.
	ids := make([]int, 12)
	for i := range ids {
		ids[i] = i
	}
	negative := 0
	for i := range 2000 {
		key := fmt.Sprintf("frm_%08x", i*2654435761)
		if javaMurmur2([]byte(key)) < 0 {
			negative++
		}
		if got, want := Partitioner().Balance(kafkago.Message{Key: []byte(key)}, ids...), javaPartition(key, 12); got != want {
			t.Fatalf("Partitioner: %q = %d, Java %d", key, got, want)
		}
	}
	if negative == 0 {
		t.Fatal("no key with a negative hash was tried")
	}
}

// The publisher itself must use that partitioner: events land where a Java producer would put
// them, so a Kafka Streams join by form ID with a Java-produced topic is co-partitioned.
func TestPublishedEventsLandOnJavasPartition(t *testing.T) {
	const topic, partitions = "events", 12
	brokers, pub := newTopic(t, topic, partitions)

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var evs []event.Event
	for i := range 40 {
		form := fmt.Sprintf("frm_%04d", i)
		if i < len(javaPartitions) && javaPartitions[i].n == partitions {
			form = javaPartitions[i].key
		}
		evs = append(evs, event.Event{
			ID: fmt.Sprintf("evt_%04d", i), Type: event.FormPublished, WorkspaceID: "wsp_1", FormID: form,
			OccurredAt: at, Data: map[string]any{"name": "F", "published_at": "2026-01-02T03:04:05.000Z"},
		})
	}
	if err := pub.Publish(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	spread := map[int]bool{}
	for _, m := range readRaw(t, brokers, topic, partitions, len(evs)) {
		want := javaPartition(string(m.Key), partitions)
		if m.Partition != want {
			t.Errorf("key %s on partition %d, Java's producer puts it on %d", m.Key, m.Partition, want)
		}
		spread[m.Partition] = true
	}
	if len(spread) < 4 {
		t.Fatalf("40 forms landed on only %d partitions", len(spread))
	}
}
