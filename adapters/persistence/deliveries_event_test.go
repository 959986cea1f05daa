package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// eventScene is a submission whose submission.created event went through the fan-out to one
// webhook, as the relay hands it over (read back from the outbox).
type eventScene struct {
	hook    *webhook.Webhook
	body    []byte // DeliveryBody of the event the fan-out got
	inMem   []byte // DeliveryBody of the event as the capture made it
	subID   string
	formID  string
	eventID string
}

func fanOutOne(t *testing.T, r repos, at time.Time) eventScene {
	t.Helper()
	ctx := context.Background()
	w := mustWorkspace(t, r, at)
	f := mustForm(t, r, w.ID(), at)
	hook := mustWebhook(t, r, w.ID(), nil, strp("whsec-1"), at, "submission.created")
	s, e := buildSubmission(t, f, at, subOpts{})
	noErr(t, r.submissions.Add(ctx, s, e))
	recs, err := r.outbox.Pending(ctx, 0, 1000)
	noErr(t, err)
	sc := eventScene{hook: hook, subID: s.ID(), formID: f.ID(), eventID: e.ID}
	for _, rec := range recs {
		if rec.Event.ID != e.ID {
			continue
		}
		fan := webhooks.NewFanOut(r.webhooks, r.deliveries, system.NewIDs(), clockAt{at}, nil)
		noErr(t, fan.Handle(ctx, rec.Event))
		sc.body, err = webhooks.DeliveryBody(rec.Event)
		noErr(t, err)
	}
	if sc.body == nil {
		t.Fatalf("event %s not in the outbox", e.ID)
	}
	sc.inMem, err = webhooks.DeliveryBody(e)
	noErr(t, err)
	return sc
}

// rawBody is the stored body column of the webhook's delivery of the event.
func rawBody(t *testing.T, r repos, sc eventScene) []byte {
	t.Helper()
	var b []byte
	noErr(t, r.db.SQL().QueryRowContext(context.Background(), "SELECT body FROM deliveries WHERE webhook_id = $1 AND event_id = $2",
		sc.hook.ID(), sc.eventID).Scan(&b))
	return b
}

// A delivery of a stored event keeps the event's identity, no copy of its body: the claim
// rebuilds the body from the outbox, byte for byte what the fan-out had. A test event's
// delivery (no stored event) keeps its sealed body.
func TestEventDeliveryStoresNoBody(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		sc := fanOutOne(t, r, base)
		if b := rawBody(t, r, sc); len(b) != 0 {
			t.Fatalf("stored body of %d bytes, want none", len(b))
		}
		if string(sc.body) != string(sc.inMem) {
			t.Fatalf("body from the outbox %s\nfrom the capture's event %s", sc.body, sc.inMem)
		}
		test := buildDelivery(sc.hook, sc.formID, base, `{"event":"webhook.test"}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{test}))

		got, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Second), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(got) != 2 {
			t.Fatalf("claimed %d, want 2", len(got))
		}
		for _, d := range got {
			want := sc.body
			if d.ID() == test.ID() {
				want = []byte(`{"event":"webhook.test"}`)
			}
			if string(d.Body()) != string(want) || d.EventGone() {
				t.Fatalf("claimed body of %s = %s, want %s", d.EventID(), d.Body(), want)
			}
		}
		listed, err := r.deliveries.List(ctx, sc.hook.WorkspaceID(), sc.hook.ID(), ports.Page{Limit: 10})
		noErr(t, err)
		if len(listed) != 2 {
			t.Fatalf("listed %d", len(listed))
		}
	})
}

// The submission deleted: its event's payload is emptied, and the delivery, due again, comes
// without a body (EventGone): the engine sends nothing of it.
func TestEventDeliveryOfDeletedSubmission(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		sc := fanOutOne(t, r, base)
		noErr(t, r.submissions.Delete(ctx, sc.hook.WorkspaceID(), sc.formID, sc.subID))
		got, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Second), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(got) != 1 || !got[0].EventGone() || got[0].Body() != nil {
			t.Fatalf("claimed %v, want the delivery without its gone event", got)
		}
	})
}

// The outbox purge keeps the events of pending deliveries (their bodies are rebuilt from them)
// and takes them once the deliveries ended; a manual retry after that finds the event gone.
func TestOutboxPurgeKeepsEventsOfPendingDeliveries(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		sc := fanOutOne(t, r, base)
		recs, err := r.outbox.Pending(ctx, 0, 1000)
		noErr(t, err)
		var seqs []int64
		for _, rec := range recs {
			seqs = append(seqs, rec.Seq)
		}
		noErr(t, r.outbox.MarkPublished(ctx, seqs, base))
		events := func() int64 { return countWhere(t, r.db, "outbox", "id", sc.eventID) }

		_, err = r.outbox.PurgePublished(ctx, base.Add(time.Hour))
		noErr(t, err)
		if events() != 1 {
			t.Fatal("the purge took the event of a pending delivery")
		}
		got, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Second), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(got) != 1 || string(got[0].Body()) != string(sc.body) {
			t.Fatalf("claimed %v", got)
		}
		d := got[0]
		d.Record(webhook.Outcome{StatusCode: 200}, base.Add(2*time.Second), retry.Default())
		noErr(t, r.deliveries.Save(ctx, d))
		_, err = r.outbox.PurgePublished(ctx, base.Add(time.Hour))
		noErr(t, err)
		if events() != 0 {
			t.Fatal("the purge kept the event of a delivered delivery")
		}

		_, err = r.deliveries.Update(ctx, d.WorkspaceID(), d.WebhookID(), d.ID(), func(d *webhook.Delivery) (ports.Effects, error) {
			d.Retry(base.Add(time.Hour))
			return ports.Effects{}, nil
		})
		noErr(t, err)
		got, err = r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(2 * time.Hour), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(got) != 1 || !got[0].EventGone() {
			t.Fatalf("retried after the purge: %v, want the event gone", got)
		}
	})
}

// A privacy erasure finds the deliveries of stored events through their events' submission.
func TestDeleteDeliveriesOfEventDeliveries(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		sc := fanOutOne(t, r, base)
		n, err := persistence.NewRetentionStore(r.db, r.cipher).DeleteDeliveriesOf(ctx, sc.hook.WorkspaceID(), sc.formID, []string{"sub_other"})
		if err != nil || n != 0 {
			t.Fatalf("deleted %d (%v) of another submission", n, err)
		}
		n, err = persistence.NewRetentionStore(r.db, r.cipher).DeleteDeliveriesOf(ctx, sc.hook.WorkspaceID(), sc.formID, []string{sc.subID})
		if err != nil || n != 1 {
			t.Fatalf("deleted %d (%v), want the delivery of the submission's event", n, err)
		}
	})
}
