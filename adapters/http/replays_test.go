package httpapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

func TestReplayRequestsAreChecked(t *testing.T) {
	h := sqliteHarness(t)
	id := h.createWebhook(map[string]any{"url": hookURL, "events": []string{"submission.created", "form.published"}})["id"].(string)
	path := "/v1/webhooks/" + id + "/replay"
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }

	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"since missing", map[string]any{}, "since"},
		{"since not a time", map[string]any{"since": "yesterday"}, "since"},
		{"since before the retention", map[string]any{"since": at(-8 * 24 * time.Hour)}, "since"},
		{"since in the future", map[string]any{"since": at(time.Hour)}, "since"},
		{"until before since", map[string]any{"since": at(-time.Hour), "until": at(-2 * time.Hour)}, "until"},
		{"until in the future", map[string]any{"since": at(-time.Hour), "until": at(time.Hour)}, "until"},
		{"a type the webhook does not take", map[string]any{"since": at(-time.Hour), "types": []string{"submission.updated"}}, "types[0]"},
		{"an unknown property", map[string]any{"since": at(-time.Hour), "from": at(-time.Hour)}, "from"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.do("POST", path, h.keys["admin"], c.body)
			h.expect(r, 422, "validation_failed")
			if !hasViolation(r, c.field) {
				t.Fatalf("no violation at %q: %s", c.field, r.Body.String())
			}
		})
	}

	// Keys: read-only may not start one; another workspace sees no webhook.
	ok := map[string]any{"since": at(-time.Hour)}
	h.expect(h.do("POST", path, h.keys["read-only"], ok), 403, "forbidden")
	h.expect(h.do("POST", path, h.keys["other"], ok), 404, "not_found")

	r := h.do("POST", path, h.keys["read-write"], ok)
	h.expect(r, 202, "")
	job := r.json["id"].(string)
	if r.json["status"] != "queued" || r.Header().Get("Location") != "/v1/webhooks/"+id+"/replays/"+job || len(r.json["types"].([]any)) != 2 {
		t.Fatalf("replay %s (Location %q)", r.Body.String(), r.Header().Get("Location"))
	}
	// One at a time per webhook.
	r = h.do("POST", path, h.keys["admin"], ok)
	h.expect(r, 409, "conflict")
	h.expect(h.do("GET", "/v1/webhooks/"+id+"/replays/"+job, h.keys["read-only"], nil), 200, "")
	h.expect(h.do("GET", "/v1/webhooks/"+id+"/replays/"+job, h.keys["other"], nil), 404, "not_found")
	h.expect(h.do("GET", "/v1/webhooks/"+id+"/replays/rpl_nope", h.keys["admin"], nil), 404, "not_found")
	r = h.do("GET", "/v1/webhooks/"+id+"/replays", h.keys["read-only"], nil)
	h.expect(r, 200, "")
	if l := r.json["data"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != job {
		t.Fatalf("replays %s", r.Body.String())
	}

	// A disabled webhook gets no replay.
	off := h.createWebhook(map[string]any{"url": hookURL, "events": []string{"submission.created"}, "enabled": false})["id"].(string)
	h.expect(h.do("POST", "/v1/webhooks/"+off+"/replay", h.keys["admin"], ok), 409, "conflict")
}

func hasViolation(r response, field string) bool {
	e, _ := r.json["error"].(map[string]any)
	details, _ := e["details"].([]any)
	for _, d := range details {
		if m, _ := d.(map[string]any); m["field"] == field {
			return true
		}
	}
	return false
}

// TestReplayQueuesEveryRetainedEventOnce walks a replay job as a worker would: it queues one
// delivery per event of its range (the webhook's existing delivery again, or a new one),
// never one of a deleted submission, and is done once none of them is pending.
func TestReplayQueuesEveryRetainedEventOnce(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		f := h.createForm(map[string]any{"label": "Message", "type": "text"})
		formID, field := f["id"].(string), fieldIDs(f)[0]
		hook := h.createWebhook(map[string]any{"url": hookURL, "events": []string{"submission.created"}, "form_id": formID})["id"].(string)
		// Another form's events are not this webhook's.
		other := h.createForm(map[string]any{"label": "Other", "type": "text"})
		before := time.Now().UTC().Add(-time.Second)
		var subs []string
		for i := range 7 {
			r := h.do("POST", "/v1/forms/"+formID+"/submissions", h.keys["admin"], map[string]any{"data": map[string]any{field: fmt.Sprintf("answer %d", i)}})
			h.expect(r, 201, "")
			subs = append(subs, r.json["id"].(string))
			h.expect(h.do("POST", "/v1/forms/"+other["id"].(string)+"/submissions", h.keys["admin"],
				map[string]any{"data": map[string]any{fieldIDs(other)[0]: "x"}}), 201, "")
		}
		// The fan-out had delivered the first two before the endpoint went down.
		outbox := persistence.NewOutbox(h.db, persistencetest.Cipher())
		recs, err := outbox.Pending(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		fan := webhooks.NewFanOut(persistence.NewWebhookRepository(h.db, persistencetest.Cipher()), h.deliveries, system.NewIDs(), system.Clock{}, nil)
		var first []string
		for _, rec := range recs {
			if rec.Event.FormID == formID && len(first) < 2 {
				if err := fan.Handle(ctx, rec.Event); err != nil {
					t.Fatal(err)
				}
				first = append(first, rec.Event.ID)
			}
		}
		original := map[string]string{} // event → delivery ID
		for _, d := range h.listDeliveries(hook) {
			original[d.EventID()] = d.ID()
			d.Record(webhook.Outcome{StatusCode: 204}, time.Now(), retry.Default())
			if err := h.deliveries.Save(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		if len(original) != 2 {
			t.Fatalf("%d deliveries before the replay, want 2", len(original))
		}
		// A deleted submission is never replayed.
		h.expect(h.do("DELETE", "/v1/forms/"+formID+"/submissions/"+subs[3], h.keys["admin"], nil), 204, "")

		r := h.do("POST", "/v1/webhooks/"+hook+"/replay", h.keys["admin"], map[string]any{"since": before.Format(time.RFC3339Nano)})
		h.expect(r, 202, "")
		job := r.json["id"].(string)

		runner := webhooks.NewReplayRunner(persistence.NewReplayRepository(h.db, persistencetest.Cipher()),
			persistence.NewWebhookRepository(h.db, persistencetest.Cipher()), system.NewIDs(), system.Clock{},
			webhooks.ReplayRunnerConfig{Batch: 3, InFlight: 25 * time.Second, Retention: 7 * 24 * time.Hour}, nil)
		if err := runner.Step(ctx); err != nil {
			t.Fatal(err)
		}
		ds := h.listDeliveries(hook)
		if len(ds) != 6 {
			t.Fatalf("%d deliveries after the replay, want 6 (7 submissions, one deleted)", len(ds))
		}
		for _, d := range ds {
			if d.ReplayID() != job || d.Status() != webhook.StatusPending {
				t.Fatalf("delivery %s: replay %q status %s", d.ID(), d.ReplayID(), d.Status())
			}
			if id, ok := original[d.EventID()]; ok && id != d.ID() {
				t.Fatalf("event %s was first delivered as %s, replayed as %s: receivers could not dedupe", d.EventID(), id, d.ID())
			}
		}
		got := h.do("GET", "/v1/webhooks/"+hook+"/replays/"+job, h.keys["read-only"], nil)
		h.expect(got, 200, "")
		if got.json["status"] != "running" || got.json["events_total"] != 6.0 || got.json["events_sent"] != 0.0 {
			t.Fatalf("running job %s", got.Body.String())
		}
		// A second step queues nothing twice.
		if err := runner.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(h.listDeliveries(hook)); n != 6 {
			t.Fatalf("%d deliveries after a second step", n)
		}
		// The endpoint takes five, refuses one for good: the job is done.
		for i, d := range h.listDeliveries(hook) {
			if i == 0 {
				for d.Status() == webhook.StatusPending {
					d.Record(webhook.Outcome{StatusCode: 500, Err: fmt.Errorf("endpoint answered 500")}, time.Now(), retry.Default())
				}
			} else {
				d.Record(webhook.Outcome{StatusCode: 204}, time.Now(), retry.Default())
			}
			if err := h.deliveries.Save(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		if err := runner.Step(ctx); err != nil {
			t.Fatal(err)
		}
		got = h.do("GET", "/v1/webhooks/"+hook+"/replays/"+job, h.keys["read-only"], nil)
		h.expect(got, 200, "")
		if got.json["status"] != "done" || got.json["events_total"] != 6.0 || got.json["events_sent"] != 5.0 ||
			got.json["events_failed"] != 1.0 || got.json["finished_at"] == nil {
			t.Fatalf("finished job %s", got.Body.String())
		}
		// Deleting the webhook deletes its replays.
		h.expect(h.do("DELETE", "/v1/webhooks/"+hook, h.keys["admin"], nil), 204, "")
		if _, err := h.app.Queries.GetReplay.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(h.wsA)), webhooks.GetReplay{WebhookID: hook, ID: job}); err == nil {
			t.Fatal("the replay of a deleted webhook remains")
		}
	})
}

// listDeliveries reads every delivery of a webhook of workspace A.
func (h *harness) listDeliveries(webhookID string) []*webhook.Delivery {
	h.t.Helper()
	ctx := auth.WithPrincipal(context.Background(), auth.SystemPrincipal(h.wsA))
	ds, _, err := h.app.Queries.ListDeliveries.Handle(ctx, webhooks.ListDeliveries{WebhookID: webhookID, Page: ports.Page{Limit: 100}})
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

// TestReplayResumesAfterARestart: a worker that dies between two batches leaves the job's
// cursor where its last transaction put it; once the claim runs out another worker takes the
// job up there, and no event is queued twice.
func TestReplayResumesAfterARestart(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		f := h.createForm(map[string]any{"label": "Message", "type": "text"})
		formID, field := f["id"].(string), fieldIDs(f)[0]
		hook := h.createWebhook(map[string]any{"url": hookURL, "events": []string{"submission.created"}})["id"].(string)
		since := time.Now().UTC().Add(-time.Second)
		for i := range 5 {
			h.expect(h.do("POST", "/v1/forms/"+formID+"/submissions", h.keys["admin"], map[string]any{"data": map[string]any{field: fmt.Sprintf("a %d", i)}}), 201, "")
		}
		h.expect(h.do("POST", "/v1/webhooks/"+hook+"/replay", h.keys["admin"], map[string]any{"since": since.Format(time.RFC3339Nano)}), 202, "")

		replays := persistence.NewReplayRepository(h.db, persistencetest.Cipher())
		now := time.Now()
		job, err := replays.Claim(ctx, now, time.Minute, now.Add(-time.Hour))
		if err != nil || job == nil {
			t.Fatalf("claim: %v %v", job, err)
		}
		// The first worker queues one batch of two events, then dies.
		recs, cursor, err := replays.Events(ctx, job, 2)
		if err != nil || len(recs) != 2 {
			t.Fatalf("first batch: %d events, %v", len(recs), err)
		}
		w, err := persistence.NewWebhookRepository(h.db, persistencetest.Cipher()).Get(ctx, h.wsA, hook)
		if err != nil {
			t.Fatal(err)
		}
		var ds []*webhook.Delivery
		for _, r := range recs {
			d := webhook.NewDelivery(system.NewIDs().New("dlv"), w, r.Event, []byte("{}"), now)
			d.RestoreReplayID(job.Replay.ID())
			ds = append(ds, d)
		}
		if err := replays.Queue(ctx, job, ds, cursor, now, time.Minute, 25*time.Second); err != nil {
			t.Fatal(err)
		}
		// While its claim holds, nobody else takes the job.
		if again, err := replays.Claim(ctx, now.Add(30*time.Second), time.Minute, now.Add(-time.Hour)); err != nil || again != nil {
			t.Fatalf("claimed while held: %v %v", again, err)
		}
		// After it, a second worker resumes at the cursor and queues the three others.
		runner := webhooks.NewReplayRunner(replays, persistence.NewWebhookRepository(h.db, persistencetest.Cipher()), system.NewIDs(),
			fixedClock{now.Add(2 * time.Minute)}, webhooks.ReplayRunnerConfig{Batch: 2, InFlight: 25 * time.Second, Retention: 7 * 24 * time.Hour}, nil)
		if err := runner.Step(ctx); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, d := range h.listDeliveries(hook) {
			seen[d.EventID()]++
			if d.ReplayID() != job.Replay.ID() {
				t.Fatalf("delivery %s not of the replay", d.ID())
			}
		}
		if len(seen) != 5 {
			t.Fatalf("%d events queued, want 5", len(seen))
		}
		for e, n := range seen {
			if n != 1 {
				t.Fatalf("event %s queued %d times", e, n)
			}
		}
	})
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }
