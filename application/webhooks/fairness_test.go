package webhooks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// hangingSender hangs every attempt to an endpoint in hang until the attempt's context ends
// (the engine stops) and answers 200 at once to the others. It counts attempts in flight per
// workspace and records when each other endpoint got its request.
type hangingSender struct {
	hang      map[string]bool   // endpoint IDs that hang
	workspace map[string]string // endpoint ID → workspace ID

	mu       sync.Mutex
	inFlight map[string]int
	peak     map[string]int
	answered map[string]time.Time
}

func newHangingSender() *hangingSender {
	return &hangingSender{hang: map[string]bool{}, workspace: map[string]string{},
		inFlight: map[string]int{}, peak: map[string]int{}, answered: map[string]time.Time{}}
}

func (s *hangingSender) Send(ctx context.Context, r ports.OutboundRequest) ports.OutboundResult {
	ws := s.workspace[r.EndpointID]
	s.mu.Lock()
	s.inFlight[ws]++
	s.inFlight[r.EndpointID]++
	s.peak[ws] = max(s.peak[ws], s.inFlight[ws])
	s.peak[r.EndpointID] = max(s.peak[r.EndpointID], s.inFlight[r.EndpointID])
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight[ws]--
		s.inFlight[r.EndpointID]--
		s.mu.Unlock()
	}()
	if s.hang[r.EndpointID] {
		<-ctx.Done()
		return ports.OutboundResult{Err: ctx.Err()}
	}
	s.mu.Lock()
	s.answered[r.EndpointID] = time.Now()
	s.mu.Unlock()
	return ok200
}

func (s *hangingSender) get(m map[string]int, key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m[key]
}

func (s *hangingSender) answeredAt(endpoint string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.answered[endpoint]
	return at, ok
}

func hookOf(t *testing.T, workspaceID, id string) *webhook.Webhook {
	t.Helper()
	w, err := webhook.New(id, workspaceID, webhook.Draft{URL: "https://hooks.example/" + id, Events: []string{"submission.created"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func deliveryTo(w *webhook.Webhook, eventID string) *webhook.Delivery {
	e := event.Event{ID: eventID, Type: event.SubmissionCreated, WorkspaceID: w.WorkspaceID(), FormID: "frm_1", OccurredAt: time.Now()}
	return webhook.NewDelivery("dlv_"+w.ID()+"_"+eventID, w, e, []byte(`{}`), time.Now())
}

// Forty hanging endpoints in workspace A hold A's four slots; workspace B's delivery, created
// while they hang, is sent within a second.
func TestHangingWorkspaceDoesNotDelayAnother(t *testing.T) {
	sender := newHangingSender()
	hooks, ds := stores()
	var backlog []*webhook.Delivery
	for i := range 40 {
		w := hookOf(t, "wsp_a", fmt.Sprintf("whk_a%02d", i))
		hooks.Items[w.ID()], sender.hang[w.ID()], sender.workspace[w.ID()] = w, true, "wsp_a"
		backlog = append(backlog, deliveryTo(w, "evt_1"), deliveryTo(w, "evt_2"))
	}
	healthy := hookOf(t, "wsp_b", "whk_b")
	hooks.Items[healthy.ID()], sender.workspace[healthy.ID()] = healthy, "wsp_b"
	if err := ds.AddAll(context.Background(), backlog); err != nil {
		t.Fatal(err)
	}
	// The defaults: 16 attempts at once, 4 per workspace, 2 per endpoint; the poll interval is
	// the default too, so the second is not won by polling faster than in production.
	engine := webhooks.NewDeliveryEngine(ds, hooks, sender, apptest.WallClock{}, webhooks.DeliveryEngineConfig{Retry: shortSchedule}, nil)
	runEngine(t, engine)
	waitFor(t, "A's share in flight", func() bool { return sender.get(sender.inFlight, "wsp_a") >= 4 })

	created := time.Now()
	if err := ds.AddAll(context.Background(), []*webhook.Delivery{deliveryTo(healthy, "evt_1")}); err != nil {
		t.Fatal(err)
	}
	// No Notify: B's delivery may come from another process, so only the engine's own polling finds it.
	waitFor(t, "B's delivery", func() bool { _, ok := sender.answeredAt(healthy.ID()); return ok })
	at, _ := sender.answeredAt(healthy.ID())
	if took := at.Sub(created); took > time.Second {
		t.Fatalf("B's delivery took %v behind A's hanging endpoints, want at most 1s", took)
	}
	if peak := sender.get(sender.peak, "wsp_a"); peak > 4 {
		t.Fatalf("workspace A had %d attempts in flight, want at most 4", peak)
	}
}

// One hanging endpoint takes at most its endpoint share, so its workspace's other endpoints
// are still served.
func TestHangingEndpointLeavesItsWorkspaceASlot(t *testing.T) {
	sender := newHangingSender()
	slow, fast := hookOf(t, "wsp_a", "whk_slow"), hookOf(t, "wsp_a", "whk_fast")
	sender.hang[slow.ID()] = true
	sender.workspace[slow.ID()], sender.workspace[fast.ID()] = "wsp_a", "wsp_a"
	hooks, ds := stores(slow, fast)
	var backlog []*webhook.Delivery
	for i := range 30 {
		backlog = append(backlog, deliveryTo(slow, fmt.Sprintf("evt_%d", i)))
	}
	backlog = append(backlog, deliveryTo(fast, "evt_0"))
	if err := ds.AddAll(context.Background(), backlog); err != nil {
		t.Fatal(err)
	}
	engine := webhooks.NewDeliveryEngine(ds, hooks, sender, apptest.WallClock{},
		webhooks.DeliveryEngineConfig{Retry: shortSchedule, PerWorkspace: 4, PerEndpoint: 2}, nil)
	runEngine(t, engine)
	waitFor(t, "the healthy endpoint's delivery", func() bool { _, ok := sender.answeredAt(fast.ID()); return ok })
	// The fast delivery may be claimed before the hanging ones start: wait for them too.
	waitFor(t, "two attempts hanging at the slow endpoint", func() bool { return sender.get(sender.peak, slow.ID()) >= 2 })
	if peak := sender.get(sender.peak, slow.ID()); peak != 2 {
		t.Fatalf("the hanging endpoint had %d attempts in flight, want 2", peak)
	}
}
