package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

// stores returns the webhook and delivery fakes of one store, holding the hooks.
func stores(hooks ...*webhook.Webhook) (*apptest.Webhooks, *apptest.Deliveries) {
	s := apptest.NewStore()
	for _, w := range hooks {
		_ = s.Webhooks.Create(context.Background(), w)
	}
	return s.Webhooks, s.Deliveries
}

// delivery returns the stored delivery with the ID.
func delivery(t *testing.T, ds *apptest.Deliveries, id string) *webhook.Delivery {
	t.Helper()
	d := ds.Find(id)
	if d == nil {
		t.Fatalf("delivery %s: %v", id, domain.ErrNotFound)
	}
	return d
}

// ---- the sender ----

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
var shortSchedule = func() retry.Schedule {
	s, err := retry.New(shortDelays...)
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
func waitLooks(t *testing.T, ds *apptest.Deliveries) {
	t.Helper()
	_, from := ds.Calls()
	waitFor(t, "the engine to look twice more", func() bool {
		_, claims := ds.Calls()
		return claims >= from+2
	})
}

// engineWith fans one event out to the hooks and starts an engine over the sender.
func engineWith(t *testing.T, sender ports.Sender, hooks ...*webhook.Webhook) (*apptest.Webhooks, *apptest.Deliveries, []string) {
	t.Helper()
	return engineWithClock(t, apptest.WallClock{}, sender, hooks...)
}

// engineWithClock is engineWith on a clock the test may move by hand.
func engineWithClock(t *testing.T, clock ports.Clock, sender ports.Sender, hooks ...*webhook.Webhook) (*apptest.Webhooks, *apptest.Deliveries, []string) {
	t.Helper()
	wh, ds := stores(hooks...)
	engine := webhooks.NewDeliveryEngine(ds, wh, sender, clock,
		webhooks.DeliveryEngineConfig{Retry: shortSchedule, PollInterval: 2 * time.Millisecond, ClaimLease: time.Second}, nil)
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, clock, engine.Notify)
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	runEngine(t, engine)
	ids := ds.Added()
	return wh, ds, ids
}

// ---- fan-out ----

func TestFanOutBuildsOneDeliveryPerMatchingWebhook(t *testing.T) {
	form1, form2 := "frm_1", "frm_2"
	wh, ds := stores(
		newTestHook(t, "whk_all", nil, "submission.created"),
		newTestHook(t, "whk_form1", &form1, "submission.created", "form.published"),
		newTestHook(t, "whk_form2", &form2, "submission.created"),
		newTestHook(t, "whk_updates", nil, "submission.updated"),
	)
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	ctx := context.Background()
	if err := fan.Handle(ctx, testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	// The same event again (a redelivery) adds nothing.
	if err := fan.Handle(ctx, testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	if len(ds.Added()) != 2 {
		t.Fatalf("deliveries = %d, want 2 (whk_all, whk_form1)", len(ds.Added()))
	}
	var hooks []string
	for _, id := range ds.Added() {
		d := delivery(t, ds, id)
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
	wh, ds := stores(on, off)
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	ctx := context.Background()
	if err := fan.Handle(ctx, testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	if len(ds.Added()) != 1 || delivery(t, ds, ds.Added()[0]).WebhookID() != "whk_on" {
		t.Fatalf("deliveries %v, want one to whk_on", ds.Added())
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
	for _, id := range ds.Added() {
		if d := delivery(t, ds, id); d.WebhookID() == "whk_off" {
			toOff = append(toOff, d.EventID())
		}
	}
	if !slices.Equal(toOff, []string{"evt_next"}) {
		t.Fatalf("deliveries to the webhook switched back on: %v, want only evt_next", toOff)
	}
}

func TestFanOutBatchWritesOnce(t *testing.T) {
	form1 := "frm_1"
	wh, ds := stores(newTestHook(t, "whk_all", nil, "submission.created"), newTestHook(t, "whk_form1", &form1, "submission.created"))
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
	if len(ds.Added()) != 15 { // 5 events of frm_1 to both hooks, 5 of frm_2 to whk_all
		t.Fatalf("deliveries = %d, want 15", len(ds.Added()))
	}
	if adds, _ := ds.Calls(); wh.MatchingCalls() != 4 || adds != 2 || woken != 2 {
		t.Fatalf("Matching calls %d (want 2 per batch), AddAll calls %d (want 1 per batch), wake-ups %d", wh.MatchingCalls(), adds, woken)
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
	wh, ds := stores(newTestHook(t, "whk_1", nil, "submission.created"))
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	ds.AddErr = errors.New("database down")
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err == nil {
		t.Fatal("want an error when deliveries cannot be stored")
	}
	ds.AddErr = nil
	wh.MatchingErr = errors.New("database down")
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err == nil {
		t.Fatal("want an error when webhooks cannot be read")
	}
	wh.MatchingErr = nil
	noMatch := testEvent("evt_2")
	noMatch.Type = event.FormPublished
	if err := fan.Handle(context.Background(), noMatch); err != nil || len(ds.Added()) != 0 {
		t.Fatalf("unmatched event: err %v, deliveries %d", err, len(ds.Added()))
	}
}

// ---- delivery engine ----

func TestEngineMarksUndeliverableAfterFiveFailures(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{fail500}}
	_, ds, ids := engineWith(t, sender, newTestHook(t, "whk_1", nil, "submission.created"))
	waitFor(t, "undeliverable", func() bool { return delivery(t, ds, ids[0]).Status() == webhook.StatusUndeliverable })
	d := delivery(t, ds, ids[0])
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
	waitFor(t, "delivered", func() bool { return delivery(t, ds, ids[0]).Status() == webhook.StatusDelivered })
	d := delivery(t, ds, ids[0])
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
	waitFor(t, "delivered", func() bool { return delivery(t, ds, ids[0]).Status() == webhook.StatusDelivered })
	a := delivery(t, ds, ids[0]).Attempts()
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
		n := delivery(t, ds, ids[0]).NextAttemptAt()
		return n != nil && time.Until(*n) > 50*time.Minute
	})
	waitLooks(t, ds) // the engine looked again before RetryAt and found nothing due
	if n := len(sender.requests()); n != 1 {
		t.Fatalf("calls = %d, want 1 before RetryAt", n)
	}
	if d := delivery(t, ds, ids[0]); d.Status() != webhook.StatusPending || len(d.Attempts()) != 0 {
		t.Fatalf("delivery = %s with %d attempts", d.Status(), len(d.Attempts()))
	}
}

func TestEngineSkipsDeletedWebhook(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{fail500}}
	wh, ds := stores(newTestHook(t, "whk_1", nil, "submission.created"))
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	if err := fan.Handle(context.Background(), testEvent("evt_1")); err != nil {
		t.Fatal(err)
	}
	// Deleted before the engine ever ran: its delivery rows are gone too in the real store,
	// but a claim taken just before the delete must not be sent either. The engine's store
	// has no webhook, the claimed delivery still.
	gone := apptest.NewStore().Webhooks
	engine := webhooks.NewDeliveryEngine(ds, gone, sender, apptest.WallClock{},
		webhooks.DeliveryEngineConfig{Retry: shortSchedule, PollInterval: 2 * time.Millisecond}, nil)
	stop := runEngine(t, engine)
	waitFor(t, "the delivery claimed", func() bool {
		n := delivery(t, ds, ds.Added()[0]).NextAttemptAt()
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
	waitFor(t, "first attempt", func() bool { return len(delivery(t, ds, ids[0]).Attempts()) >= 1 })
	_ = wh.Delete(context.Background(), "wsp_1", "whk_1") // its deliveries with it
	n := len(sender.requests())                           // the clock stands still: no retry is due, none in flight
	clock.Advance(time.Hour)                              // every retry of the schedule is due now
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
	waitFor(t, "first attempt", func() bool { return len(delivery(t, ds, ids[0]).Attempts()) >= 1 })
	off := false // a new value, as a store's Get returns: the engine may hold the old one
	if _, err := wh.Update(context.Background(), "wsp_1", "whk_1", func(w *webhook.Webhook) (ports.Effects, error) {
		return ports.Effects{}, w.Apply(webhook.Patch{Enabled: &off}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "halted", func() bool { return delivery(t, ds, ids[0]).Status() == webhook.StatusUndeliverable })
	d := delivery(t, ds, ids[0])
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
	waitFor(t, "manual retry delivered", func() bool { return delivery(t, ds, ids[0]).Status() == webhook.StatusDelivered })
}

// A delivery of a stored event whose event is gone (its submission was deleted, or the outbox
// row purged) sends nothing: it ends undeliverable, saying why.
func TestEngineSendsNothingOfAGoneEvent(t *testing.T) {
	sender := &scriptedSender{script: []ports.OutboundResult{ok200}}
	wh, ds := stores(newTestHook(t, "whk_1", nil, "submission.created"))
	now := time.Now()
	gone := webhook.UnmarshalDeliveryFromDatabase("dlv_1", "wsp_1", "whk_1", "evt_1", event.SubmissionCreated, "frm_1", nil,
		webhook.StatusPending, 0, nil, &now, now, now)
	gone.RestoreFromEvent(nil)
	if !gone.EventGone() {
		t.Fatal("a delivery of a stored event without its body is not EventGone")
	}
	if err := ds.AddAll(context.Background(), []*webhook.Delivery{gone}); err != nil {
		t.Fatal(err)
	}
	engine := webhooks.NewDeliveryEngine(ds, wh, sender, apptest.WallClock{},
		webhooks.DeliveryEngineConfig{Retry: shortSchedule, PollInterval: 2 * time.Millisecond}, nil)
	runEngine(t, engine)
	waitFor(t, "halted", func() bool { return delivery(t, ds, "dlv_1").Status() == webhook.StatusUndeliverable })
	a := delivery(t, ds, "dlv_1").Attempts()
	if len(a) != 1 || a[0].StatusCode != nil || a[0].Error == nil || *a[0].Error != webhook.ErrEventGone {
		t.Fatalf("attempts = %+v, want one entry saying the event is gone", a)
	}
	if n := len(sender.requests()); n != 0 {
		t.Fatalf("%d requests for a gone event", n)
	}
}

// The fan-out's deliveries name their event and carry DeliveryBody of it: the store keeps the
// event's identity, not another copy.
func TestFanOutDeliveriesComeFromTheEvent(t *testing.T) {
	wh, ds := stores(newTestHook(t, "whk_1", nil, "submission.created"))
	fan := webhooks.NewFanOut(wh, ds, &apptest.IDs{}, apptest.WallClock{}, nil)
	e := testEvent("evt_1")
	if err := fan.Handle(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	d := delivery(t, ds, ds.Added()[0])
	want, err := webhooks.DeliveryBody(e)
	if err != nil {
		t.Fatal(err)
	}
	if !d.FromEvent() || d.EventID() != e.ID || string(d.Body()) != string(want) {
		t.Fatalf("delivery from event %v of %s: %s, want %s", d.FromEvent(), d.EventID(), d.Body(), want)
	}
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
	wh, ds := stores(newTestHook(t, "whk_1", nil, "submission.created"))
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
		for _, id := range ds.Added() {
			if delivery(t, ds, id).Status() != webhook.StatusDelivered {
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
