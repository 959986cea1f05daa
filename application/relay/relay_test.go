package relay_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/relay"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

// memOutbox is an outbox in memory that records every call.
type memOutbox struct {
	mu       sync.Mutex
	rows     []ports.OutboxRecord
	marked   map[int64]time.Time
	purges   int
	markErrs int // MarkPublished fails this many times
}

func newMemOutbox(n int) *memOutbox {
	o := &memOutbox{marked: map[int64]time.Time{}}
	for i := range n {
		o.rows = append(o.rows, ports.OutboxRecord{Seq: int64(i + 1), Event: event.Event{
			ID: fmt.Sprintf("evt_%04d", i), Type: event.SubmissionCreated, FormID: fmt.Sprintf("frm_%d", i%3),
		}})
	}
	return o
}

func (o *memOutbox) Pending(_ context.Context, after int64, limit int) ([]ports.OutboxRecord, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ports.OutboxRecord
	for _, r := range o.rows {
		if _, done := o.marked[r.Seq]; !done && r.Seq > after && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

func (o *memOutbox) MarkPublished(_ context.Context, seqs []int64, at time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.markErrs > 0 {
		o.markErrs--
		return errors.New("database unavailable")
	}
	for _, s := range seqs {
		o.marked[s] = at
	}
	return nil
}

func (o *memOutbox) PurgePublished(context.Context, time.Time) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.purges++
	return 0, nil
}

func (o *memOutbox) markedCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.marked)
}

// memPublisher records acknowledged events; it fails while failures > 0, and checks that no row
// it has not acknowledged yet was marked published.
type memPublisher struct {
	mu       sync.Mutex
	outbox   *memOutbox
	got      []string
	calls    int
	failures int
	badMark  string
}

func (p *memPublisher) Publish(_ context.Context, evs []event.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	p.outbox.mu.Lock()
	for _, e := range evs {
		for _, r := range p.outbox.rows {
			if _, marked := p.outbox.marked[r.Seq]; marked && r.Event.ID == e.ID && !slices.Contains(p.got, e.ID) {
				p.badMark = e.ID
			}
		}
	}
	p.outbox.mu.Unlock()
	if p.failures > 0 {
		p.failures--
		return errors.New("broker unavailable")
	}
	for _, e := range evs {
		p.got = append(p.got, e.ID)
	}
	return nil
}

type memLease struct {
	mu    sync.Mutex
	tries atomic.Int32 // Acquire calls, counted before they wait
}

func (l *memLease) Acquire(context.Context) (func(), error) {
	l.tries.Add(1)
	l.mu.Lock()
	return l.mu.Unlock, nil
}

type recordingObserver struct {
	relay.NopRelayObserver
	mu       sync.Mutex
	failures []string
}

func (o *recordingObserver) Failed(step string, _ error, _ int, _ time.Duration) {
	o.mu.Lock()
	o.failures = append(o.failures, step)
	o.mu.Unlock()
}

func runRelay(t *testing.T, r *relay.Relay, until func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	if !testkit.Wait(0, until) {
		cancel()
		<-done
		t.Fatal("relay did not finish in time")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestRelayPublishesInOrderAndMarksAfterAck(t *testing.T) {
	o := newMemOutbox(25)
	p := &memPublisher{outbox: o}
	r := relay.NewRelay(o, p, &memLease{}, &apptest.Clock{At: time.Unix(1e9, 0)},
		relay.RelayConfig{Batch: 10, Poll: time.Millisecond}, nil)
	runRelay(t, r, func() bool { return o.markedCount() == 25 })

	want := make([]string, 25)
	for i := range want {
		want[i] = fmt.Sprintf("evt_%04d", i)
	}
	if !slices.Equal(p.got, want) {
		t.Fatalf("published %v, want %v", p.got, want)
	}
	if p.badMark != "" {
		t.Fatalf("%s marked before it was acknowledged", p.badMark)
	}
	if o.purges == 0 {
		t.Fatal("never purged")
	}
}

func TestRelayRetriesFailedPublishWithoutMarking(t *testing.T) {
	o := newMemOutbox(7)
	p := &memPublisher{outbox: o, failures: 3}
	obs := &recordingObserver{}
	var marksWhileFailing []int
	r := relay.NewRelay(o, p, &memLease{}, &apptest.Clock{At: time.Unix(1e9, 0)},
		relay.RelayConfig{Batch: 5, Poll: time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}, obs)
	runRelay(t, r, func() bool {
		p.mu.Lock()
		failing := p.failures > 0
		p.mu.Unlock()
		if failing {
			marksWhileFailing = append(marksWhileFailing, o.markedCount())
		}
		return o.markedCount() == 7
	})
	for _, n := range marksWhileFailing {
		if n != 0 {
			t.Fatalf("%d rows marked while the broker failed", n)
		}
	}
	want := []string{"evt_0000", "evt_0001", "evt_0002", "evt_0003", "evt_0004", "evt_0005", "evt_0006"}
	if !slices.Equal(p.got, want) {
		t.Fatalf("published %v, want %v (no skip, no reorder)", p.got, want)
	}
	if p.calls != 3+2 {
		t.Fatalf("publish calls = %d, want 3 failures + 2 batches", p.calls)
	}
	if got := slices.Clone(obs.failures); len(got) != 3 || got[0] != "publish" {
		t.Fatalf("failures reported = %v", got)
	}
}

func TestRelayRepublishesWhenMarkFails(t *testing.T) {
	o := newMemOutbox(3)
	o.markErrs = 1
	p := &memPublisher{outbox: o}
	r := relay.NewRelay(o, p, &memLease{}, &apptest.Clock{At: time.Unix(1e9, 0)},
		relay.RelayConfig{Batch: 10, Poll: time.Millisecond, MinBackoff: time.Millisecond}, nil)
	runRelay(t, r, func() bool { return o.markedCount() == 3 })
	// At least once: the acknowledged batch whose mark failed is published again, whole and in order.
	want := []string{"evt_0000", "evt_0001", "evt_0002", "evt_0000", "evt_0001", "evt_0002"}
	if !slices.Equal(p.got, want) {
		t.Fatalf("published %v, want %v", p.got, want)
	}
}

func TestRelayWaitsForLease(t *testing.T) {
	o := newMemOutbox(2)
	p := &memPublisher{outbox: o}
	lease := &memLease{}
	lease.mu.Lock() // another relay holds it
	r := relay.NewRelay(o, p, lease, &apptest.Clock{At: time.Unix(1e9, 0)},
		relay.RelayConfig{Poll: time.Millisecond}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// The relay asks for the lease before it publishes anything; once it waits for it, nothing
	// may have been published.
	testkit.Eventually(t, 0, func() bool { return lease.tries.Load() > 0 }, "the relay to ask for the lease")
	if n := o.markedCount(); n != 0 {
		t.Fatalf("published %d rows without the lease", n)
	}
	lease.mu.Unlock()
	testkit.Eventually(t, 0, func() bool { return o.markedCount() >= 2 }, "2 rows published")
	cancel()
	noErrRelay(t, <-done)
}

func noErrRelay(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
