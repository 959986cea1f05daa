package webhook_test

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
)

func newDelivery(t *testing.T) *webhook.Delivery {
	t.Helper()
	w, err := webhook.New("whk_1", "wsp_1", webhook.Draft{URL: "https://example.com/", Events: []string{"submission.created"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	e := event.Event{ID: "evt_1", Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_1", OccurredAt: now}
	return webhook.NewDelivery("dlv_1", w, e, []byte(`{"event":"submission.created"}`), now)
}

func TestNewDelivery(t *testing.T) {
	d := newDelivery(t)
	if d.Status() != webhook.StatusPending || d.NextAttemptAt() == nil || !d.NextAttemptAt().Equal(now) || d.NextAttemptNumber() != 1 {
		t.Fatalf("new delivery: status %s next %v attempt %d", d.Status(), d.NextAttemptAt(), d.NextAttemptNumber())
	}
	if d.WebhookID() != "whk_1" || d.WorkspaceID() != "wsp_1" || d.EventID() != "evt_1" || d.EventType() != event.SubmissionCreated || d.FormID() != "frm_1" {
		t.Fatalf("delivery = %+v", d)
	}
	if retry.Default().MaxAttempts() != 5 {
		t.Fatalf("max attempts = %d", retry.Default().MaxAttempts())
	}
}

func TestRecordSchedule(t *testing.T) {
	d := newDelivery(t)
	fail := webhook.Outcome{StatusCode: 503, Duration: 120 * time.Millisecond, Err: errors.New("endpoint answered 503")}
	wantDelays := []time.Duration{30 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}
	at := now
	for i, delay := range wantDelays {
		if d.NextAttemptNumber() != i+1 {
			t.Fatalf("before failure %d: next attempt number %d", i+1, d.NextAttemptNumber())
		}
		d.Record(fail, at, retry.Default())
		if d.Status() != webhook.StatusPending {
			t.Fatalf("after failure %d: status %s", i+1, d.Status())
		}
		if d.NextAttemptAt() == nil || !d.NextAttemptAt().Equal(at.Add(delay)) {
			t.Fatalf("after failure %d: next attempt at %v, want %v", i+1, d.NextAttemptAt(), at.Add(delay))
		}
		at = at.Add(delay)
	}
	// The fifth failure gives up.
	d.Record(webhook.Outcome{Duration: 10 * time.Second, Err: errors.New("timeout")}, at, retry.Default())
	if d.Status() != webhook.StatusUndeliverable || d.NextAttemptAt() != nil {
		t.Fatalf("after the 5th failure: %s %v", d.Status(), d.NextAttemptAt())
	}
	as := d.Attempts()
	if len(as) != 5 {
		t.Fatalf("%d attempts", len(as))
	}
	for i, a := range as {
		if a.Number != i+1 {
			t.Fatalf("attempt %d numbered %d", i, a.Number)
		}
	}
	if as[0].StatusCode == nil || *as[0].StatusCode != 503 || as[0].Error == nil || as[0].Duration != 120*time.Millisecond {
		t.Fatalf("first attempt = %+v", as[0])
	}
	if as[4].StatusCode != nil || as[4].Error == nil || *as[4].Error != "timeout" {
		t.Fatalf("last attempt = %+v", as[4])
	}
}

func TestRecordSuccess(t *testing.T) {
	d := newDelivery(t)
	d.Record(webhook.Outcome{StatusCode: 500, Err: errors.New("500")}, now, retry.Default())
	d.Record(webhook.Outcome{StatusCode: 204, Duration: time.Millisecond}, now.Add(30*time.Second), retry.Default())
	if d.Status() != webhook.StatusDelivered || d.NextAttemptAt() != nil {
		t.Fatalf("status %s next %v", d.Status(), d.NextAttemptAt())
	}
	a := d.Attempts()[1]
	if a.Number != 2 || a.Error != nil || a.StatusCode == nil || *a.StatusCode != 204 {
		t.Fatalf("attempt = %+v", a)
	}
	if !d.UpdatedAt().Equal(now.Add(30 * time.Second)) {
		t.Fatalf("updated_at = %v", d.UpdatedAt())
	}
}

func TestPostpone(t *testing.T) {
	d := newDelivery(t)
	d.Postpone(now.Add(time.Minute))
	if !d.NextAttemptAt().Equal(now.Add(time.Minute)) || d.NextAttemptNumber() != 1 || len(d.Attempts()) != 0 {
		t.Fatalf("postpone used an attempt or did not move: %v %d", d.NextAttemptAt(), d.NextAttemptNumber())
	}
	d.Record(webhook.Outcome{StatusCode: 200}, now, retry.Default())
	d.Postpone(now.Add(time.Hour))
	if d.NextAttemptAt() != nil {
		t.Fatal("postpone rescheduled a delivered delivery")
	}
}

func TestRetryStartsNewCycle(t *testing.T) {
	d := newDelivery(t)
	for range 5 {
		d.Record(webhook.Outcome{StatusCode: 500, Err: errors.New("500")}, now, retry.Default())
	}
	if d.Status() != webhook.StatusUndeliverable {
		t.Fatalf("status %s", d.Status())
	}
	later := now.Add(24 * time.Hour)
	d.Retry(later)
	if d.Status() != webhook.StatusPending || d.Cycle() != 0 || d.NextAttemptNumber() != 1 || !d.NextAttemptAt().Equal(later) || !d.UpdatedAt().Equal(later) {
		t.Fatalf("after retry: %s cycle %d next %v", d.Status(), d.Cycle(), d.NextAttemptAt())
	}
	d.Record(webhook.Outcome{StatusCode: 500, Err: errors.New("500")}, later, retry.Default())
	if d.Status() != webhook.StatusPending || !d.NextAttemptAt().Equal(later.Add(30*time.Second)) {
		t.Fatalf("the new cycle does not restart the schedule: %v", d.NextAttemptAt())
	}
	if n := len(d.Attempts()); n != 6 || d.Attempts()[5].Number != 1 {
		t.Fatalf("attempts kept %d, last numbered %d", n, d.Attempts()[n-1].Number)
	}
}

func TestHaltEndsAPendingDeliveryUnsent(t *testing.T) {
	d := newDelivery(t)
	d.Record(webhook.Outcome{StatusCode: 500, Err: errors.New("500")}, now, retry.Default())
	later := now.Add(time.Minute)
	d.Halt(webhook.ErrWebhookDisabled, later)
	a := d.Attempts()
	if d.Status() != webhook.StatusUndeliverable || d.NextAttemptAt() != nil || len(a) != 2 {
		t.Fatalf("after halt: %s, next %v, %d attempts", d.Status(), d.NextAttemptAt(), len(a))
	}
	if a[1].Number != 2 || a[1].StatusCode != nil || a[1].Error == nil || *a[1].Error != webhook.ErrWebhookDisabled || !a[1].At.Equal(later) {
		t.Fatalf("halt entry = %+v", a[1])
	}
	d.Halt("again", later.Add(time.Minute))
	if len(d.Attempts()) != 2 {
		t.Fatal("halting an ended delivery changed it")
	}
	d.Retry(later)
	if d.Status() != webhook.StatusPending || d.NextAttemptNumber() != 1 {
		t.Fatalf("retry after halt: %s, next attempt %d", d.Status(), d.NextAttemptNumber())
	}
}
