package kafka_test

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap/zaptest"

	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	relayapp "github.com/formward/formward/application/relay"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func cluster(t testing.TB, topic string) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(12, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// fillOutbox captures n submissions over forms through the real repositories: each form's
// submissions one after another (so their order is defined), the forms concurrently. It returns
// each form's event IDs in order.
func fillOutbox(t testing.TB, db *persistence.DB, cipher ports.Cipher, n, forms int) map[string][]string {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ws, err := workspace.New(fmt.Sprintf("ws_%d", time.Now().UnixNano()), "Acme", workspace.PlanBusiness, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := persistence.NewWorkspaceRepository(db).Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	formRepo, subs := persistence.NewFormRepository(db, cipher), persistence.NewSubmissionRepository(db, cipher, persistencetest.BlindIndex())
	var seq atomic.Int64
	id := func(p string) string { return fmt.Sprintf("%s_%s_%06d", p, ws.ID(), seq.Add(1)) }
	out := make(map[string][]string, forms)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for fi := range forms {
		f, err := form.New(id("frm"), ws.ID(), form.Draft{Name: "Contact", Fields: []form.FieldSpec{
			{Label: "Email", Type: "email", Required: true},
			{Label: "Topics", Type: "checkbox", Options: []string{"sales", "support"}},
		}}, func() string { return id("fld") }, form.DefaultLimits, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := formRepo.Create(ctx, f); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []string
			for i := fi; i < n; i += forms {
				s, err := submission.New(id("sub"), f, map[string]submission.Input{
					f.Fields()[0].ID: fmt.Sprintf("u%d@example.com", i), f.Fields()[1].ID: []any{"sales"},
				}, submission.Metadata{Source: submission.SourceAPI}, at)
				if err != nil {
					t.Error(err)
					return
				}
				e := event.ForSubmission(id("evt"), event.SubmissionCreated, s, at)
				if err := subs.Add(ctx, s, e); err != nil {
					t.Error(err)
					return
				}
				ids = append(ids, e.ID)
			}
			mu.Lock()
			out[f.ID()] = ids
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// received collects what a subscriber got.
type received struct {
	mu    sync.Mutex
	order map[string][]string // per form, in delivery order (duplicates included)
	byID  map[string]event.Event
	dups  int
}

func (r *received) handle(t testing.TB) ports.EventHandler {
	return func(_ context.Context, e event.Event) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if prev, ok := r.byID[e.ID]; ok {
			r.dups++
			if !reflect.DeepEqual(prev, e) {
				t.Errorf("duplicate %s differs: %+v vs %+v", e.ID, prev, e)
			}
		}
		r.byID[e.ID] = e
		r.order[e.FormID] = append(r.order[e.FormID], e.ID)
		return nil
	}
}

func (r *received) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byID)
}

// checkOrder verifies every event arrived, and each form's first deliveries are in write order
// (a redelivery may repeat a suffix of what was already seen, never jump ahead).
func (r *received) checkOrder(t *testing.T, want map[string][]string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for formID, ids := range want {
		firsts := []string{}
		seen := map[string]bool{}
		for _, id := range r.order[formID] {
			if !seen[id] {
				seen[id] = true
				firsts = append(firsts, id)
			}
		}
		if !reflect.DeepEqual(firsts, ids) {
			t.Fatalf("form %s: received %d events %v..., want %d in order", formID, len(firsts), head(firsts), len(ids))
		}
	}
}

func head(s []string) []string { return s[:min(5, len(s))] }

// flakyPublisher publishes for real, then reports a failure once after the broker accepted
// failAfter events: a crash between the acknowledgement and the mark.
type flakyPublisher struct {
	ports.EventPublisher
	published atomic.Int64
	failAfter int64
	failed    atomic.Bool
	onPublish func(total int64)
}

func (p *flakyPublisher) Publish(ctx context.Context, evs []event.Event) error {
	if err := p.EventPublisher.Publish(ctx, evs); err != nil {
		return err
	}
	total := p.published.Add(int64(len(evs)))
	if p.onPublish != nil {
		p.onPublish(total)
	}
	if p.failAfter > 0 && total >= p.failAfter && p.failed.CompareAndSwap(false, true) {
		return fmt.Errorf("simulated crash after the broker acknowledged %d events", len(evs))
	}
	return nil
}

func TestRelayToKafka(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		const topic, n, forms = "formward.events.v1", 2000, 20
		brokers := cluster(t, topic)
		cipher := persistencetest.Cipher()
		want := fillOutbox(t, db, cipher, n, forms)
		outbox, lease := persistence.NewOutbox(db, cipher), persistence.NewLease(db)
		pub := kafka.NewPublisher(kafka.PublisherConfig{Brokers: brokers, Topic: topic})
		t.Cleanup(func() { _ = pub.Close() })
		cfg := relayapp.RelayConfig{Batch: 150, Poll: 5 * time.Millisecond, MinBackoff: 10 * time.Millisecond}

		// First run: fails once after an acknowledged batch, then is killed mid-stream.
		ctx1, kill := context.WithCancel(context.Background())
		flaky := &flakyPublisher{EventPublisher: pub, failAfter: 300, onPublish: func(total int64) {
			if total >= 900 {
				kill()
			}
		}}
		done := make(chan error, 1)
		go func() { done <- relayapp.NewRelay(outbox, flaky, lease, wallClock{}, cfg, nil).Run(ctx1) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("first relay run did not reach the kill point")
		}
		left, err := outbox.Pending(context.Background(), 0, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 || len(left) == n {
			t.Fatalf("kill was not mid-stream: %d of %d pending", len(left), n)
		}

		// Restart: everything else goes out.
		ctx2, stop := context.WithCancel(context.Background())
		defer stop()
		go func() { done <- relayapp.NewRelay(outbox, pub, lease, wallClock{}, cfg, nil).Run(ctx2) }()

		got := &received{order: map[string][]string{}, byID: map[string]event.Event{}}
		sub := kafka.NewSubscriber(kafka.SubscriberConfig{Brokers: brokers, Topic: topic, GroupID: "relay-test",
			HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second},
			zaptest.NewLogger(t))
		t.Cleanup(func() { _ = sub.Close() })
		sctx, scancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer scancel()
		subDone := make(chan error, 1)
		go func() { subDone <- sub.Run(sctx, got.handle(t)) }()
		testkit.Wait(90*time.Second, func() bool { return got.distinct() >= n }) // the count below says what was missing
		scancel()
		<-subDone
		stop()
		<-done
		if d := got.distinct(); d != n {
			t.Fatalf("received %d distinct events, want %d", d, n)
		}
		got.checkOrder(t, want)
		if got.dups == 0 {
			t.Error("expected duplicates from the simulated crash after the acknowledgement")
		}
		t.Logf("%d events, %d duplicates (same id), per-form order kept", n, got.dups)
		if left, _ := outbox.Pending(context.Background(), 0, 1); len(left) != 0 {
			t.Fatal("rows left unpublished")
		}

		checkHeaders(t, brokers, topic)
	})
}

// checkHeaders reads raw messages (from whichever partitions hold them: the forms' IDs are
// random, so no single partition is sure to hold any) and checks the key and CloudEvents headers
// that docs/events.md documents.
func checkHeaders(t *testing.T, brokers []string, topic string) {
	t.Helper()
	r := kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: brokers, Topic: topic, GroupID: "headers-check-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		StartOffset: kafkago.FirstOffset, MaxWait: 100 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for range 20 {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read the topic: %v", err)
		}
		e, err := kafka.Decode(m)
		if err != nil {
			t.Fatal(err)
		}
		h := map[string]string{}
		for _, x := range m.Headers {
			h[x.Key] = string(x.Value)
		}
		want := map[string]string{
			"ce_id": e.ID, "ce_type": string(e.Type), "ce_source": kafka.Source(e.WorkspaceID, e.FormID),
			"ce_specversion": "1.0", "ce_time": h["ce_time"], "content-type": "application/json",
		}
		if !reflect.DeepEqual(h, want) || h["ce_time"] == "" || string(m.Key) != e.FormID {
			t.Fatalf("message key %q headers %v, want key %q headers %v", m.Key, h, e.FormID, want)
		}
		if e.Data["submission_id"] == "" || e.Data["fields"] == nil {
			t.Fatalf("data = %v", e.Data)
		}
	}
}

// BenchmarkRelayToKafka measures how many outbox events per second the relay moves from a real
// SQLite outbox to kfake (the outbox is filled outside the timer).
func BenchmarkRelayToKafka(b *testing.B) {
	const topic, perIter = "formward.events.v1", 5000
	brokers := cluster(b, topic)
	cipher := persistencetest.Cipher()
	db := persistencetest.SQLite(b, cipher)
	outbox, lease := persistence.NewOutbox(db, cipher), persistence.NewLease(db)
	pub := kafka.NewPublisher(kafka.PublisherConfig{Brokers: brokers, Topic: topic})
	b.Cleanup(func() { _ = pub.Close() })
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		fillOutbox(b, db, cipher, perIter, 50)
		ctx, cancel := context.WithCancel(context.Background())
		p := &flakyPublisher{EventPublisher: pub, onPublish: func(n int64) {
			if n >= perIter {
				cancel()
			}
		}}
		relay := relayapp.NewRelay(outbox, p, lease, wallClock{}, relayapp.RelayConfig{Poll: time.Millisecond}, nil)
		b.StartTimer()
		start := time.Now()
		_ = relay.Run(ctx)
		total += time.Since(start)
	}
	b.ReportMetric(float64(perIter*b.N)/total.Seconds(), "events/s")
}
