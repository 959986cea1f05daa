package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
	"slices"
	"sync"
	"testing"
	"time"
)

// ---- fakes of the webhook ports, kept apart from fakes_test.go ----

// pipeWebhooks is a webhook store in memory; only Get and Matching matter to the pipeline.
type pipeWebhooks struct {
	mu      sync.Mutex
	hooks   map[string]*webhook.Webhook
	err     error // Matching fails with it when set
	matches int   // Matching calls
}

func newPipeWebhooks(ws ...*webhook.Webhook) *pipeWebhooks {
	r := &pipeWebhooks{hooks: map[string]*webhook.Webhook{}}
	for _, w := range ws {
		r.hooks[w.ID()] = w
	}
	return r
}

func (r *pipeWebhooks) Create(context.Context, *webhook.Webhook) error { return errors.New("unused") }
func (r *pipeWebhooks) List(context.Context, string, ports.Page) ([]*webhook.Webhook, error) {
	return nil, errors.New("unused")
}
func (r *pipeWebhooks) Update(context.Context, string, string, func(*webhook.Webhook) (ports.Effects, error)) (*webhook.Webhook, error) {
	return nil, errors.New("unused")
}
func (r *pipeWebhooks) Count(context.Context, string) (int, error) { return len(r.hooks), nil }

func (r *pipeWebhooks) Get(_ context.Context, workspaceID, id string) (*webhook.Webhook, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.hooks[id]
	if !ok || w.WorkspaceID() != workspaceID {
		return nil, domain.ErrNotFound
	}
	return w, nil
}

func (r *pipeWebhooks) Delete(_ context.Context, _, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.hooks, id)
	return nil
}

func (r *pipeWebhooks) Matching(_ context.Context, e event.Event) ([]*webhook.Webhook, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.matches++
	if r.err != nil {
		return nil, r.err
	}
	var out []*webhook.Webhook
	for _, w := range r.hooks {
		if w.Subscribes(e) {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *webhook.Webhook) int {
		if a.ID() < b.ID() {
			return -1
		}
		return 1
	})
	return out, nil
}

// pipeDeliveries is a delivery store in memory with the repository's dedupe and claims.
type pipeDeliveries struct {
	mu     sync.Mutex
	items  map[string]*webhook.Delivery
	order  []string
	addErr error
	adds   int // AddAll calls
	claims int // ClaimDue calls: the engine looked for due deliveries
}

func newPipeDeliveries() *pipeDeliveries {
	return &pipeDeliveries{items: map[string]*webhook.Delivery{}}
}

func (r *pipeDeliveries) AddAll(_ context.Context, ds []*webhook.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adds++
	if r.addErr != nil {
		return r.addErr
	}
	for _, d := range ds {
		dup := false
		for _, old := range r.items {
			if old.WebhookID() == d.WebhookID() && old.EventID() == d.EventID() {
				dup = true
			}
		}
		if !dup {
			r.items[d.ID()] = d
			r.order = append(r.order, d.ID())
		}
	}
	return nil
}

// snapshot copies a delivery, as a database read would.
func snapshot(d *webhook.Delivery) *webhook.Delivery {
	return webhook.UnmarshalDeliveryFromDatabase(d.ID(), d.WorkspaceID(), d.WebhookID(), d.EventID(), d.EventType(), d.FormID(),
		d.Body(), d.Status(), d.Cycle(), d.Attempts(), d.NextAttemptAt(), d.CreatedAt(), d.UpdatedAt())
}

func (r *pipeDeliveries) Get(_ context.Context, _, _, id string) (*webhook.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.items[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return snapshot(d), nil
}

func (r *pipeDeliveries) List(context.Context, string, string, ports.Page) ([]*webhook.Delivery, error) {
	return nil, errors.New("unused")
}

func (r *pipeDeliveries) Update(context.Context, string, string, string, func(*webhook.Delivery) (ports.Effects, error)) (*webhook.Delivery, error) {
	return nil, errors.New("unused")
}

func (r *pipeDeliveries) ClaimDue(_ context.Context, c ports.Claim) ([]*webhook.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claims++
	var due []*webhook.Delivery
	for _, id := range r.order {
		d, ok := r.items[id]
		if ok && d.Status() == webhook.StatusPending && d.NextAttemptAt() != nil && !d.NextAttemptAt().After(c.Now) {
			due = append(due, d)
		}
	}
	var out []*webhook.Delivery
	for _, i := range apptest.ClaimFairly(c, len(due), func(i int) (string, string) { return due[i].WorkspaceID(), due[i].WebhookID() }) {
		out = append(out, snapshot(due[i]))
		due[i].Postpone(c.Now.Add(c.Lease))
	}
	return out, nil
}

func (r *pipeDeliveries) Save(_ context.Context, d *webhook.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.items[d.ID()]; !ok {
		return domain.ErrNotFound
	}
	r.items[d.ID()] = snapshot(d)
	return nil
}

func (r *pipeDeliveries) deleteOf(webhookID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, d := range r.items {
		if d.WebhookID() == webhookID {
			delete(r.items, id)
		}
	}
}

func (r *pipeDeliveries) get(t *testing.T, id string) *webhook.Delivery {
	t.Helper()
	d, err := r.Get(context.Background(), "", "", id)
	if err != nil {
		t.Fatalf("delivery %s: %v", id, err)
	}
	return d
}

// scriptedSender answers from a script per call, then with the last entry; it records requests.
type scriptedSender struct {
	mu     sync.Mutex
	script []ports.OutboundResult
	reqs   []ports.OutboundRequest
}

func (s *scriptedSender) Send(_ context.Context, r ports.OutboundRequest) ports.OutboundResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	i := min(len(s.reqs)-1, len(s.script)-1)
	return s.script[i]
}

func (s *scriptedSender) requests() []ports.OutboundRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

var (
	fail500 = ports.OutboundResult{StatusCode: 500, Duration: time.Millisecond, Err: errors.New("endpoint answered 500")}
	ok200   = ports.OutboundResult{StatusCode: 200, Duration: time.Millisecond}
)

var shortDelays = []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond}

// shortSchedule is shortDelays as a retry schedule: five attempts within a tenth of a second.
var shortSchedule = func() webhook.RetrySchedule {
	s, err := webhook.NewRetrySchedule(shortDelays...)
	if err != nil {
		panic(err)
	}
	return s
}()

func newTestHook(t *testing.T, id string, formID *string, events ...string) *webhook.Webhook {
	t.Helper()
	secret := "s3cret"
	w, err := webhook.New(id, "wsp_1", webhook.Draft{URL: "https://hooks.example/" + id, Events: events, FormID: formID, Secret: &secret}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func testEvent(id string) event.Event {
	return event.Event{ID: id, Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_1",
		OccurredAt: time.Date(2024, 5, 1, 10, 0, 0, 123456789, time.UTC),
		Data:       map[string]any{"submission_id": "sub_1", "fields": map[string]any{"fld_a": "x", "fld_b": []string{"p", "q"}}}}
}

// runEngine runs an engine until the test ends, or until the returned stop, which waits for the
// attempts in flight.
func runEngine(t *testing.T, e *webhooks.DeliveryEngine) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("engine did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 0, cond, "%s", what)
}

// waitLooks waits until the engine has looked for due deliveries twice more: whatever it would
// claim by now, it has claimed and started on (the second look comes after the first one's
// dispatch).
func waitLooks(t *testing.T, ds *pipeDeliveries) {
	t.Helper()
	ds.mu.Lock()
	from := ds.claims
	ds.mu.Unlock()
	waitFor(t, "the engine to look twice more", func() bool {
		ds.mu.Lock()
		defer ds.mu.Unlock()
		return ds.claims >= from+2
	})
}

// engineWith fans one event out to the hooks and starts an engine over the sender.
func engineWith(t *testing.T, sender ports.Sender, hooks ...*webhook.Webhook) (*pipeWebhooks, *pipeDeliveries, []string) {
	t.Helper()
	return engineWithClock(t, apptest.WallClock{}, sender, hooks...)
}

// engineWithClock is engineWith on a clock the test may move by hand.
func engineWithClock(t *testing.T, clock ports.Clock, sender ports.Sender, hooks ...*webhook.Webhook) (*pipeWebhooks, *pipeDeliveries, []string) {
	t.Helper()
	wh, ds := newPipeWebhooks(hooks...), newPipeDeliveries()
	engine := webhooks.NewDeliveryEngine(ds, wh, sender, clock,
		webhooks.DeliveryEngineConfig{Retry: shortSchedule, PollInterval: 2 * time.Millisecond, ClaimLease: time.Second}, nil)
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, clock, engine.Notify)
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	runEngine(t, engine)
	ds.mu.Lock()
	ids := slices.Clone(ds.order)
	ds.mu.Unlock()
	return wh, ds, ids
}

// ---- fan-out ----

func TestFanOutBuildsOneDeliveryPerMatchingWebhook(t *testing.T) {
	form1, form2 := "frm_1", "frm_2"
	wh := newPipeWebhooks(
		newTestHook(t, "whk_all", nil, "submission.created"),
		newTestHook(t, "whk_form1", &form1, "submission.created", "form.published"),
		newTestHook(t, "whk_form2", &form2, "submission.created"),
		newTestHook(t, "whk_updates", nil, "submission.updated"),
	)
	ds := newPipeDeliveries()
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	ctx := context.Background()
	if err := fan.Handle(ctx, testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	// The same event again (a redelivery) adds nothing.
	if err := fan.Handle(ctx, testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	if len(ds.order) != 2 {
		t.Fatalf("deliveries = %d, want 2 (whk_all, whk_form1)", len(ds.order))
	}
	var hooks []string
	for _, id := range ds.order {
		d := ds.get(t, id)
		hooks = append(hooks, d.WebhookID())
		if d.Status() != webhook.StatusPending || d.NextAttemptAt() == nil || d.EventID() != "evt_1" {
			t.Fatalf("delivery = %+v", d)
		}
		var body map[string]any
		if err := json.Unmarshal(d.Body(), &body); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"event": "submission.created", "form_id": "frm_1", "timestamp": "2024-05-01T10:00:00.123Z",
			"data": map[string]any{"submission_id": "sub_1", "fields": map[string]any{"fld_a": "x", "fld_b": []any{"p", "q"}}}}
		if fmt.Sprint(body) != fmt.Sprint(want) {
			t.Fatalf("body = %s", d.Body())
		}
	}
	slices.Sort(hooks)
	if !slices.Equal(hooks, []string{"whk_all", "whk_form1"}) {
		t.Fatalf("hooks = %v", hooks)
	}
}

// A disabled webhook gets no delivery, and the events of the time it was disabled stay
// skipped after it is switched back on, even when the fan-out sees them only then.
func TestFanOutSkipsDisabledWebhooks(t *testing.T) {
	on, off := newTestHook(t, "whk_on", nil, "submission.created"), newTestHook(t, "whk_off", nil, "submission.created")
	occurred := testEvent("evt_1").OccurredAt
	if err := off.Apply(webhook.Patch{Enabled: apptest.Ptr(false)}, occurred.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	wh, ds := newPipeWebhooks(on, off), newPipeDeliveries()
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	ctx := context.Background()
	if err := fan.Handle(ctx, testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	if len(ds.order) != 1 || ds.get(t, ds.order[0]).WebhookID() != "whk_on" {
		t.Fatalf("deliveries %v, want one to whk_on", ds.order)
	}
	// Switched on after the event happened: its late fan-out still skips it, later events go.
	if err := off.Apply(webhook.Patch{Enabled: apptest.Ptr(true)}, occurred.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	late := testEvent("evt_late")
	next := testEvent("evt_next")
	next.OccurredAt = occurred.Add(time.Hour)
	if err := fan.HandleBatch(ctx, []event.Event{late, next}); err != nil {
		t.Fatal(err)
	}
	var toOff []string
	for _, id := range ds.order {
		if d := ds.get(t, id); d.WebhookID() == "whk_off" {
			toOff = append(toOff, d.EventID())
		}
	}
	if !slices.Equal(toOff, []string{"evt_next"}) {
		t.Fatalf("deliveries to the webhook switched back on: %v, want only evt_next", toOff)
	}
}

func TestFanOutBatchWritesOnce(t *testing.T) {
	form1 := "frm_1"
	wh := newPipeWebhooks(newTestHook(t, "whk_all", nil, "submission.created"), newTestHook(t, "whk_form1", &form1, "submission.created"))
	ds := newPipeDeliveries()
	woken := 0
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, func() { woken++ })
	var evs []event.Event
	for i := range 10 {
		e := testEvent(fmt.Sprintf("evt_%d", i))
		if i%2 == 1 {
			e.FormID = "frm_2"
		}
		evs = append(evs, e)
	}
	if err := fan.HandleBatch(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	// Redelivered as a whole (after a failure, say): nothing new.
	if err := fan.HandleBatch(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if len(ds.order) != 15 { // 5 events of frm_1 to both hooks, 5 of frm_2 to whk_all
		t.Fatalf("deliveries = %d, want 15", len(ds.order))
	}
	if wh.matches != 4 || ds.adds != 2 || woken != 2 {
		t.Fatalf("Matching calls %d (want 2 per batch), AddAll calls %d (want 1 per batch), wake-ups %d", wh.matches, ds.adds, woken)
	}
}

func TestDeliveryBodyFormPublished(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	b, err := webhooks.DeliveryBody(event.Event{ID: "evt_1", Type: event.FormPublished, WorkspaceID: "wsp_1", FormID: "frm_1", OccurredAt: at,
		Data: map[string]any{"name": "Contact", "published_at": "2024-05-01T10:00:00.000Z"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event":"form.published","form_id":"frm_1","timestamp":"2024-05-01T10:00:00.000Z","data":{"name":"Contact","published_at":"2024-05-01T10:00:00.000Z"}}`
	if string(b) != want {
		t.Fatalf("body = %s\nwant   %s", b, want)
	}
}

func TestFanOutFailsOnlyWhenStorageFails(t *testing.T) {
	wh := newPipeWebhooks(newTestHook(t, "whk_1", nil, "submission.created"))
	ds := newPipeDeliveries()
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	ds.addErr = errors.New("database down")
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err == nil {
		t.Fatal("want an error when deliveries cannot be stored")
	}
	ds.addErr = nil
	wh.err = errors.New("database down")
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err == nil {
		t.Fatal("want an error when webhooks cannot be read")
	}
	wh.err = nil
	noMatch := testEvent("evt_2")
	noMatch.Type = event.FormPublished
	if err := fan.Handle(context.Background(), noMatch); err != nil || len(ds.order) != 0 {
		t.Fatalf("unmatched event: err %v, deliveries %d", err, len(ds.order))
	}
}

// ---- delivery engine ----

func TestEngineMarksUndeliverableAfterFiveFailures(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{fail500}}
	_, ds, ids := engineWith(t, sender, newTestHook(t, "whk_1", nil, "submission.created"))
	waitFor(t, "undeliverable", func() bool { return ds.get(t, ids[0]).Status() == webhook.StatusUndeliverable })
	d := ds.get(t, ids[0])
	attempts := d.Attempts()
	if len(attempts) != 5 || d.NextAttemptAt() != nil {
		t.Fatalf("attempts = %d, next = %v; want 5 and none", len(attempts), d.NextAttemptAt())
	}
	for i, a := range attempts {
		if a.Number != i+1 || a.StatusCode == nil || *a.StatusCode != 500 || a.Error == nil {
			t.Fatalf("attempt %d = %+v", i, a)
		}
		if i > 0 {
			if gap := a.At.Sub(attempts[i-1].At); gap < shortDelays[i-1] {
				t.Fatalf("attempt %d came %v after the previous one, want at least %v", i+1, gap, shortDelays[i-1])
			}
		}
	}
	waitLooks(t, ds) // a sixth request would come from one of these
	reqs := sender.requests()
	if len(reqs) != 5 {
		t.Fatalf("requests = %d, want 5", len(reqs))
	}
	for i, r := range reqs {
		if r.Attempt != i+1 || r.DeliveryID != ids[0] || r.EndpointID != "whk_1" || r.Secret != "s3cret" ||
			r.Event != "submission.created" || r.URL != "https://hooks.example/whk_1" || string(r.Body) != string(d.Body()) {
			t.Fatalf("request %d = %+v", i, r)
		}
	}
}

func TestEngineDeliversOnThirdAttempt(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{fail500, {Err: errors.New("timed out"), Duration: time.Millisecond}, ok200}}
	_, ds, ids := engineWith(t, sender, newTestHook(t, "whk_1", nil, "submission.created"))
	waitFor(t, "delivered", func() bool { return ds.get(t, ids[0]).Status() == webhook.StatusDelivered })
	d := ds.get(t, ids[0])
	a := d.Attempts()
	if len(a) != 3 || a[1].StatusCode != nil || a[1].Error == nil || a[2].Error != nil || *a[2].StatusCode != 200 {
		t.Fatalf("attempts = %+v", a)
	}
	waitLooks(t, ds)
	if n := len(sender.requests()); n != 3 {
		t.Fatalf("requests = %d, want 3", n)
	}
}

func TestEngineBreakerRefusalUsesNoAttempt(t *testing.T) {
	open := ports.OutboundResult{Err: errors.New("circuit breaker open"), BreakerOpen: true}
	sender := &scriptedSender{}
	// Refused three times (retry at once), then failed, then refused again, then delivered.
	sender.script = []ports.OutboundResult{open, open, open, fail500, open, ok200}
	for i := range sender.script {
		if sender.script[i].BreakerOpen {
			sender.script[i].RetryAt = time.Now()
		}
	}
	_, ds, ids := engineWith(t, sender, newTestHook(t, "whk_1", nil, "submission.created"))
	waitFor(t, "delivered", func() bool { return ds.get(t, ids[0]).Status() == webhook.StatusDelivered })
	a := ds.get(t, ids[0]).Attempts()
	if len(a) != 2 || a[0].Number != 1 || a[1].Number != 2 {
		t.Fatalf("attempts = %+v, want 2 recorded (refusals are not attempts)", a)
	}
	var numbers []int
	for _, r := range sender.requests() {
		numbers = append(numbers, r.Attempt)
	}
	if !slices.Equal(numbers, []int{1, 1, 1, 1, 2, 2}) {
		t.Fatalf("X-Service-Attempt per call = %v, want [1 1 1 1 2 2]", numbers)
	}
}

func TestEngineBreakerRefusalWaitsForRetryAt(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{{Err: errors.New("open"), BreakerOpen: true, RetryAt: time.Now().Add(time.Hour)}}}
	_, ds, ids := engineWith(t, sender, newTestHook(t, "whk_1", nil, "submission.created"))
	waitFor(t, "postponed", func() bool {
		n := ds.get(t, ids[0]).NextAttemptAt()
		return n != nil && time.Until(*n) > 50*time.Minute
	})
	waitLooks(t, ds) // the engine looked again before RetryAt and found nothing due
	if n := len(sender.requests()); n != 1 {
		t.Fatalf("calls = %d, want 1 before RetryAt", n)
	}
	if d := ds.get(t, ids[0]); d.Status() != webhook.StatusPending || len(d.Attempts()) != 0 {
		t.Fatalf("delivery = %s with %d attempts", d.Status(), len(d.Attempts()))
	}
}

func TestEngineSkipsDeletedWebhook(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{fail500}}
	wh, ds := newPipeWebhooks(newTestHook(t, "whk_1", nil, "submission.created")), newPipeDeliveries()
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	// Deleted before the engine ever ran: its delivery rows are gone too in the real store,
	// but a claim taken just before the delete must not be sent either.
	_ = wh.Delete(context.Background(), "wsp_1", "whk_1")
	engine := webhooks.NewDeliveryEngine(ds, wh, sender, apptest.WallClock{},
		webhooks.DeliveryEngineConfig{Retry: shortSchedule, PollInterval: 2 * time.Millisecond}, nil)
	stop := runEngine(t, engine)
	waitFor(t, "the delivery claimed", func() bool {
		n := ds.get(t, ds.order[0]).NextAttemptAt()
		return n != nil && time.Until(*n) > 10*time.Second // the claim's lease
	})
	stop() // waits for the attempt in flight
	if n := len(sender.requests()); n != 0 {
		t.Fatalf("requests to a deleted webhook = %d", n)
	}
}

func TestEngineStopsRetryingWhenWebhookDeleted(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{fail500}}
	clock := testkit.NewClock(time.Now())
	wh, ds, ids := engineWithClock(t, clock, sender, newTestHook(t, "whk_1", nil, "submission.created"))
	waitFor(t, "first attempt", func() bool { return len(ds.get(t, ids[0]).Attempts()) >= 1 })
	_ = wh.Delete(context.Background(), "wsp_1", "whk_1")
	ds.deleteOf("whk_1")
	n := len(sender.requests()) // the clock stands still: no retry is due, none in flight
	clock.Advance(time.Hour)    // every retry of the schedule is due now
	waitLooks(t, ds)
	if after := len(sender.requests()); after != n {
		t.Fatalf("requests after delete went from %d to %d", n, after)
	}
}

// A webhook switched off between two attempts: the next retry is not sent, the delivery ends
// undeliverable saying why; a manual Retry still sends.
func TestEngineStopsRetryingWhenWebhookDisabled(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{fail500, ok200}}
	wh, ds, ids := engineWith(t, sender, newTestHook(t, "whk_1", nil, "submission.created"))
	waitFor(t, "first attempt", func() bool { return len(ds.get(t, ids[0]).Attempts()) >= 1 })
	wh.mu.Lock() // a new value, as a store's Get returns: the engine may hold the old one
	w := wh.hooks["whk_1"]
	wh.hooks["whk_1"] = webhook.UnmarshalFromDatabase(w.ID(), w.WorkspaceID(), w.URL(), w.Events(), w.FormID(), w.Secret(), false,
		w.EnabledSince(), w.CreatedAt(), time.Now())
	wh.mu.Unlock()
	waitFor(t, "halted", func() bool { return ds.get(t, ids[0]).Status() == webhook.StatusUndeliverable })
	d := ds.get(t, ids[0])
	a := d.Attempts()
	if last := a[len(a)-1]; last.StatusCode != nil || last.Error == nil || *last.Error != webhook.ErrWebhookDisabled {
		t.Fatalf("last entry = %+v, want the halt", last)
	}
	if sent := len(sender.requests()); sent != len(a)-1 {
		t.Fatalf("%d requests for %d attempts and the halt", sent, len(a)-1)
	}
	d.Retry(time.Now())
	if err := ds.Save(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "manual retry delivered", func() bool { return ds.get(t, ids[0]).Status() == webhook.StatusDelivered })
}

func TestEngineBoundsConcurrency(t *testing.T) {
	gate := make(chan struct{}) // a send lets one request finish; closing it lets all
	var mu sync.Mutex
	inFlight, peak, started := 0, 0, 0
	sender := senderFunc(func(context.Context, ports.OutboundRequest) ports.OutboundResult {
		mu.Lock()
		inFlight++
		started++
		peak = max(peak, inFlight)
		mu.Unlock()
		<-gate
		mu.Lock()
		inFlight--
		mu.Unlock()
		return ok200
	})
	wh := newPipeWebhooks(newTestHook(t, "whk_1", nil, "submission.created"))
	ds := newPipeDeliveries()
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	for i := range 20 {
		if err := fan.Handle(context.Background(), testEvent(fmt.Sprintf("evt_%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	engine := webhooks.NewDeliveryEngine(ds, wh, sender, apptest.WallClock{},
		webhooks.DeliveryEngineConfig{Concurrency: 4, PerEndpoint: 4, PollInterval: 2 * time.Millisecond}, nil)
	runEngine(t, engine)
	waitFor(t, "4 in flight", func() bool { mu.Lock(); defer mu.Unlock(); return inFlight == 4 })
	// A fifth may start only once one of the four has finished: finish one and wait for the
	// fifth, which an engine ignoring the bound would have started already.
	gate <- struct{}{}
	waitFor(t, "a fifth started", func() bool { mu.Lock(); defer mu.Unlock(); return started == 5 })
	close(gate)
	waitFor(t, "all delivered", func() bool {
		for _, id := range ds.order {
			if ds.get(t, id).Status() != webhook.StatusDelivered {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	if peak != 4 {
		t.Fatalf("peak concurrency = %d, want 4", peak)
	}
}

type senderFunc func(context.Context, ports.OutboundRequest) ports.OutboundResult

func (f senderFunc) Send(ctx context.Context, r ports.OutboundRequest) ports.OutboundResult {
	return f(ctx, r)
}
