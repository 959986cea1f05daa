package webhooks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// phasedSender answers every attempt at once until hold is set; then it holds each attempt
// to an endpoint in held until the attempt's context ends (the engine stops). Other endpoints
// are answered at once and their first answer recorded. It counts attempts in flight per
// endpoint and their peak.
type phasedSender struct {
	mu       sync.Mutex
	hold     bool
	held     map[string]bool
	inFlight map[string]int
	peak     map[string]int
	answered map[string]time.Time
}

func newPhasedSender(held ...string) *phasedSender {
	s := &phasedSender{held: map[string]bool{}, inFlight: map[string]int{}, peak: map[string]int{}, answered: map[string]time.Time{}}
	for _, id := range held {
		s.held[id] = true
	}
	return s
}

func (s *phasedSender) Send(ctx context.Context, r ports.OutboundRequest) ports.OutboundResult {
	s.mu.Lock()
	s.inFlight[r.EndpointID]++
	s.peak[r.EndpointID] = max(s.peak[r.EndpointID], s.inFlight[r.EndpointID])
	hold := s.hold && s.held[r.EndpointID]
	if _, ok := s.answered[r.EndpointID]; !ok && !hold {
		s.answered[r.EndpointID] = time.Now()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight[r.EndpointID]--
		s.mu.Unlock()
	}()
	if hold {
		<-ctx.Done()
		return ports.OutboundResult{Err: ctx.Err()}
	}
	return ok200
}

// startHolding makes the held endpoints hang from now on and resets the peaks.
func (s *phasedSender) startHolding() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = true
	clear(s.peak)
}

func (s *phasedSender) count(m map[string]int, key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m[key]
}

func (s *phasedSender) answeredAt(endpoint string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.answered[endpoint]
	return at, ok
}

// backlogOf queues n deliveries to the webhook.
func backlogOf(t *testing.T, ds *apptest.Deliveries, w *webhook.Webhook, n int) {
	t.Helper()
	var backlog []*webhook.Delivery
	for i := range n {
		backlog = append(backlog, deliveryTo(w, fmt.Sprintf("evt_%04d", i)))
	}
	if err := ds.AddAll(context.Background(), backlog); err != nil {
		t.Fatal(err)
	}
}

// A webhook that answers fast gets more attempts at once than the two it starts with, and
// more than its workspace's share of four, while the engine has slots nobody else wants; but
// never the reserve kept for another workspace's share.
func TestHealthyEndpointGrowsPastItsShare(t *testing.T) {
	healthy := hookOf(t, "wsp_a", "whk_fast")
	sender := newPhasedSender(healthy.ID())
	hooks, ds := stores(healthy)
	backlogOf(t, ds, healthy, 2000)
	// The defaults: 16 at once, 4 per workspace, 2 per endpoint at first, up to 16.
	engine := webhooks.NewDeliveryEngine(ds, hooks, sender, apptest.WallClock{}, webhooks.DeliveryEngineConfig{Retry: shortSchedule}, nil)
	runEngine(t, engine)

	waitFor(t, "the endpoint's limit to grow past 12", func() bool { return engine.EndpointLimit(healthy.ID()) >= 12 })
	// From now on its attempts hang: the engine fills what the rule lets it have.
	sender.startHolding()
	waitFor(t, "12 attempts at once", func() bool { return sender.count(sender.inFlight, healthy.ID()) >= 12 })
	// The last four slots are the reserve: whatever the engine claims meanwhile, it claims
	// nothing more for this endpoint (the claim after the next is made after the first's start).
	waitLooks(t, ds)
	if n := sender.count(sender.inFlight, healthy.ID()); n != 12 {
		t.Fatalf("%d attempts at once to one endpoint, want 12 (16 less the reserve of 4)", n)
	}
}

// A webhook whose limit grew and that then hangs keeps the reserve free: another workspace's
// delivery is still sent within a second.
func TestGrownEndpointThatHangsLeavesTheReserve(t *testing.T) {
	grown := hookOf(t, "wsp_c", "whk_grown")
	sender := newPhasedSender(grown.ID())
	hooks, ds := stores(grown)
	backlogOf(t, ds, grown, 2000)
	engine := webhooks.NewDeliveryEngine(ds, hooks, sender, apptest.WallClock{}, webhooks.DeliveryEngineConfig{Retry: shortSchedule}, nil)
	runEngine(t, engine)
	waitFor(t, "the endpoint's limit to reach 16", func() bool { return engine.EndpointLimit(grown.ID()) >= 16 })
	sender.startHolding()
	waitFor(t, "the grown endpoint's attempts hanging", func() bool { return sender.count(sender.inFlight, grown.ID()) >= 12 })

	healthy := hookOf(t, "wsp_b", "whk_b")
	hooks.Items[healthy.ID()] = healthy
	created := time.Now()
	if err := ds.AddAll(context.Background(), []*webhook.Delivery{deliveryTo(healthy, "evt_1")}); err != nil {
		t.Fatal(err)
	}
	// No Notify: only the engine's own polling finds it.
	waitFor(t, "B's delivery", func() bool { _, ok := sender.answeredAt(healthy.ID()); return ok })
	at, _ := sender.answeredAt(healthy.ID())
	if took := at.Sub(created); took > time.Second {
		t.Fatalf("B's delivery took %v behind the hanging endpoint, want at most 1s", took)
	}
	if n := sender.count(sender.peak, grown.ID()); n > 12 {
		t.Fatalf("the grown endpoint had %d attempts hanging, want at most 12", n)
	}
}

// Forty hanging webhooks never grow: their workspace keeps to its share even while the engine
// has spare slots.
func TestHangingEndpointsNeverGrow(t *testing.T) {
	var ids []string
	for i := range 40 {
		ids = append(ids, fmt.Sprintf("whk_a%02d", i))
	}
	sender := newPhasedSender(ids...)
	sender.startHolding()
	hooks, ds := stores()
	var backlog []*webhook.Delivery
	for _, id := range ids {
		w := hookOf(t, "wsp_a", id)
		hooks.Items[w.ID()] = w
		backlog = append(backlog, deliveryTo(w, "evt_1"), deliveryTo(w, "evt_2"))
	}
	if err := ds.AddAll(context.Background(), backlog); err != nil {
		t.Fatal(err)
	}
	engine := webhooks.NewDeliveryEngine(ds, hooks, sender, apptest.WallClock{}, webhooks.DeliveryEngineConfig{Retry: shortSchedule}, nil)
	runEngine(t, engine)
	inA := func() int {
		n := 0
		for _, id := range ids {
			n += sender.count(sender.inFlight, id)
		}
		return n
	}
	waitFor(t, "A's share hanging", func() bool { return inA() >= 4 })
	waitLooks(t, ds)
	if n := inA(); n != 4 {
		t.Fatalf("workspace A has %d attempts hanging, want its share of 4", n)
	}
	for _, id := range ids {
		if limit := engine.EndpointLimit(id); limit > 2 {
			t.Fatalf("hanging webhook %s has limit %d, want at most 2", id, limit)
		}
	}
}
