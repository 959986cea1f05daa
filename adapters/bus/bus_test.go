package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/formward/formward/domain/event"
)

func events(from, n, forms int) []event.Event {
	evs := make([]event.Event, n)
	for i := range evs {
		k := from + i
		evs[i] = event.Event{
			ID: fmt.Sprintf("evt_%05d", k), Type: event.SubmissionCreated, FormID: fmt.Sprintf("frm_%02d", k%forms),
			Data: map[string]any{"n": k},
		}
	}
	return evs
}

func newBus(t *testing.T, cfg Config) *Bus {
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff, cfg.MaxRetryBackoff = 5*time.Millisecond, 20*time.Millisecond
	}
	return New(cfg, zaptest.NewLogger(t))
}

// runUntil runs the bus until stop returns true for the events handled so far, or fails after 10s.
func runUntil(t *testing.T, b *Bus, handle func(context.Context, event.Event) error, stop func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- b.Run(ctx, handle) }()
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

type recorder struct {
	mu  sync.Mutex
	got []event.Event
}

func (r *recorder) handle(_ context.Context, e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func TestOrderPerFormWithConcurrentForms(t *testing.T) {
	b := newBus(t, Config{Workers: 4})
	const n = 2000
	var rec recorder
	go func() {
		for i := 0; i < n; i += 100 {
			if err := b.Publish(context.Background(), events(i, 100, 7)); err != nil {
				panic(err)
			}
		}
	}()
	runUntil(t, b, rec.handle, func() bool { return rec.count() == n })
	last := make(map[string]int)
	seen := make(map[string]bool)
	for _, e := range rec.got {
		if seen[e.ID] {
			t.Fatalf("%s delivered twice", e.ID)
		}
		seen[e.ID] = true
		k := e.Data["n"].(int)
		if prev, ok := last[e.FormID]; ok && k <= prev {
			t.Fatalf("form %s: event %d after %d", e.FormID, k, prev)
		}
		last[e.FormID] = k
	}
	if b.Len() != 0 {
		t.Errorf("%d events left", b.Len())
	}
}

func TestFailedEventIsRedeliveredBeforeTheFormsNext(t *testing.T) {
	b := newBus(t, Config{})
	evs := events(0, 4, 1)
	if err := b.Publish(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	var order []string
	fails := 0
	runUntil(t, b, func(_ context.Context, e event.Event) error {
		order = append(order, e.ID)
		if e.ID == evs[1].ID && fails < 2 {
			fails++
			return errors.New("endpoint down")
		}
		return nil
	}, func() bool { return b.Len() == 0 })
	want := fmt.Sprint([]string{evs[0].ID, evs[1].ID, evs[1].ID, evs[1].ID, evs[2].ID, evs[3].ID})
	if fmt.Sprint(order) != want {
		t.Errorf("deliveries %v, want %s", order, want)
	}
}

func TestFailingFormDoesNotBlockOthersWithWorkers(t *testing.T) {
	b := newBus(t, Config{Workers: 2})
	if err := b.Publish(context.Background(), events(0, 10, 2)); err != nil { // frm_00 and frm_01
		t.Fatal(err)
	}
	var rec recorder
	runUntil(t, b, func(ctx context.Context, e event.Event) error {
		if e.FormID == "frm_00" {
			return errors.New("frm_00's endpoint is down")
		}
		return rec.handle(ctx, e)
	}, func() bool { return rec.count() == 5 })
	if b.Len() != 5 {
		t.Errorf("%d events left, want frm_00's 5", b.Len())
	}
}

func TestPublishRefusesWhenFull(t *testing.T) {
	b := newBus(t, Config{Limit: 10})
	ctx := context.Background()
	if err := b.Publish(ctx, events(0, 6, 3)); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, events(6, 6, 3)); err != nil { // below the limit: the batch is taken whole
		t.Fatal(err)
	}
	err := b.Publish(ctx, events(12, 1, 3))
	if !errors.Is(err, ErrFull) {
		t.Fatalf("publish to a full bus: %v, want ErrFull", err)
	}
	if b.Len() != 12 {
		t.Fatalf("%d events queued, want 12 (the refused one not among them)", b.Len())
	}
	var rec recorder
	runUntil(t, b, rec.handle, func() bool { return rec.count() == 12 })
	if err := b.Publish(ctx, events(12, 1, 3)); err != nil {
		t.Fatalf("publish after draining: %v", err)
	}
}

func TestRunStopsOnCancelAndKeepsUnhandledEvents(t *testing.T) {
	b := newBus(t, Config{Workers: 3})
	if err := b.Publish(context.Background(), events(0, 6, 2)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- b.Run(ctx, func(ctx context.Context, e event.Event) error {
			select {
			case started <- struct{}{}:
			default:
			}
			<-ctx.Done() // a handler that never finishes on its own
			return ctx.Err()
		})
	}()
	<-started
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if b.Len() != 6 {
		t.Fatalf("%d events left, want all 6", b.Len())
	}

	// A later Run picks them up, still in order.
	var rec recorder
	runUntil(t, b, rec.handle, func() bool { return rec.count() == 6 })
	last := map[string]int{}
	for _, e := range rec.got {
		k := e.Data["n"].(int)
		if prev, ok := last[e.FormID]; ok && k <= prev {
			t.Fatalf("form %s: event %d after %d", e.FormID, k, prev)
		}
		last[e.FormID] = k
	}
}

func TestRunWaitsForEvents(t *testing.T) {
	b := newBus(t, Config{})
	var rec recorder
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = b.Publish(context.Background(), events(0, 1, 1))
	}()
	runUntil(t, b, rec.handle, func() bool { return rec.count() == 1 })
}

func TestPublishHonoursCanceledContext(t *testing.T) {
	b := newBus(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Publish(ctx, events(0, 1, 1)); err == nil || b.Len() != 0 {
		t.Fatalf("publish with a canceled context: %v, %d queued", err, b.Len())
	}
}
