package persistence_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

func strp(s string) *string { return &s }

func buildWebhook(t testing.TB, workspaceID string, formID, secret *string, at time.Time, events ...string) *webhook.Webhook {
	t.Helper()
	if len(events) == 0 {
		events = []string{"submission.created", "form.published"}
	}
	w, err := webhook.New(newID("whk"), workspaceID, webhook.Draft{URL: "https://hooks.example.com/in", Events: events, FormID: formID, Secret: secret}, at)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustWebhook(t testing.TB, r repos, workspaceID string, formID, secret *string, at time.Time, events ...string) *webhook.Webhook {
	t.Helper()
	w := buildWebhook(t, workspaceID, formID, secret, at, events...)
	if err := r.webhooks.Create(context.Background(), w); err != nil {
		t.Fatalf("create webhook: %v", err)
	}
	return w
}

func buildDelivery(w *webhook.Webhook, formID string, at time.Time, body string) *webhook.Delivery {
	e := event.Event{ID: newID("evt"), Type: event.SubmissionCreated, WorkspaceID: w.WorkspaceID(), FormID: formID, OccurredAt: at}
	return webhook.NewDelivery(newID("dlv"), w, e, []byte(body), at)
}

func TestWebhookCRUDAndIsolation(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base)
		w := mustWebhook(t, r, a.ID(), strp(f.ID()), strp("whsec-1"), base.Add(time.Microsecond))
		wantErr(t, r.webhooks.Create(ctx, w), domain.ErrConflict)

		got, err := r.webhooks.Get(ctx, a.ID(), w.ID())
		noErr(t, err)
		if got.URL() != w.URL() || !reflect.DeepEqual(got.Events(), w.Events()) || *got.FormID() != f.ID() || got.Secret() != "whsec-1" {
			t.Fatalf("got %+v", got)
		}
		if !got.CreatedAt().Equal(base) || !got.UpdatedAt().Equal(base) {
			t.Fatalf("times %v %v", got.CreatedAt(), got.UpdatedAt())
		}

		// A form of another workspace cannot be named.
		wantErr(t, r.webhooks.Create(ctx, buildWebhook(t, b.ID(), strp(f.ID()), nil, base)), domain.ErrNotFound)

		// Another workspace sees nothing.
		_, err = r.webhooks.Get(ctx, b.ID(), w.ID())
		wantErr(t, err, domain.ErrNotFound)
		list, err := r.webhooks.List(ctx, b.ID(), ports.Page{Limit: 10})
		noErr(t, err)
		n, err := r.webhooks.Count(ctx, b.ID())
		noErr(t, err)
		if len(list) != 0 || n != 0 {
			t.Fatalf("workspace b sees %d webhooks (count %d)", len(list), n)
		}
		_, err = r.webhooks.Update(ctx, b.ID(), w.ID(), func(*webhook.Webhook) (ports.Effects, error) { t.Fatal("change called"); return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
		wantErr(t, r.webhooks.Delete(ctx, b.ID(), w.ID()), domain.ErrNotFound)

		// Update: remove the secret and the form filter, then set a new secret.
		var none *string
		upd, err := r.webhooks.Update(ctx, a.ID(), w.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{}, w.Apply(webhook.Patch{URL: strp("https://hooks.example.com/v2"), FormID: &none, Secret: &none}, base.Add(time.Minute))
		})
		noErr(t, err)
		got, err = r.webhooks.Get(ctx, a.ID(), w.ID())
		noErr(t, err)
		if got.URL() != "https://hooks.example.com/v2" || got.FormID() != nil || got.SecretSet() || !got.UpdatedAt().Equal(upd.UpdatedAt()) {
			t.Fatalf("after update: %+v", got)
		}
		_, err = r.webhooks.Update(ctx, a.ID(), w.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{}, w.Apply(webhook.Patch{Secret: func() **string { s := strp("whsec-2"); return &s }()}, base.Add(2*time.Minute))
		})
		noErr(t, err)
		got, err = r.webhooks.Get(ctx, a.ID(), w.ID())
		noErr(t, err)
		if got.Secret() != "whsec-2" {
			t.Fatalf("secret = %q", got.Secret())
		}
		// A failing change writes nothing.
		boom := errors.New("boom")
		_, err = r.webhooks.Update(ctx, a.ID(), w.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
			_ = w.Apply(webhook.Patch{URL: strp("https://changed.example.com/")}, base)
			return ports.Effects{}, boom
		})
		wantErr(t, err, boom)
		got, _ = r.webhooks.Get(ctx, a.ID(), w.ID())
		if got.URL() != "https://hooks.example.com/v2" {
			t.Fatal("failed change was written")
		}
		// Naming a form of another workspace through Update is refused.
		fb := mustForm(t, r, b.ID(), base)
		_, err = r.webhooks.Update(ctx, a.ID(), w.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{}, w.Apply(webhook.Patch{FormID: func() **string { s := strp(fb.ID()); return &s }()}, base)
		})
		wantErr(t, err, domain.ErrNotFound)

		n, err = r.webhooks.Count(ctx, a.ID())
		noErr(t, err)
		if n != 1 {
			t.Fatalf("count = %d", n)
		}
		noErr(t, r.webhooks.Delete(ctx, a.ID(), w.ID()))
		wantErr(t, r.webhooks.Delete(ctx, a.ID(), w.ID()), domain.ErrNotFound)
		_, err = r.webhooks.Get(ctx, a.ID(), w.ID())
		wantErr(t, err, domain.ErrNotFound)
	})
}

func TestWebhookListPagination(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		var want []string
		for i := range 5 {
			want = append(want, mustWebhook(t, r, w.ID(), nil, nil, base.Add(time.Duration(i%3)*time.Second)).ID())
		}
		var got []string
		page := ports.Page{Limit: 2}
		for {
			items, err := r.webhooks.List(ctx, w.ID(), page)
			noErr(t, err)
			for _, it := range items {
				got = append(got, it.ID())
			}
			if len(items) < page.Limit {
				break
			}
			last := items[len(items)-1]
			page.After = &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}
		}
		// created offsets 0,1,2,0,1 → order: #2 (2s), #4 (1s), #1 (1s), #3 (0s), #0 (0s)
		order := []string{want[2], want[4], want[1], want[3], want[0]}
		if !reflect.DeepEqual(got, order) {
			t.Fatalf("list = %v, want %v", got, order)
		}
	})
}

func TestWebhookMatching(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		f1, f2 := mustForm(t, r, a.ID(), base), mustForm(t, r, a.ID(), base)
		all := mustWebhook(t, r, a.ID(), nil, nil, base, "submission.created")
		bound := mustWebhook(t, r, a.ID(), strp(f1.ID()), nil, base.Add(time.Second), "submission.created", "form.published")
		mustWebhook(t, r, a.ID(), strp(f2.ID()), nil, base, "submission.created")
		mustWebhook(t, r, a.ID(), nil, nil, base, "submission.updated")
		mustWebhook(t, r, b.ID(), nil, nil, base, "submission.created")

		ids := func(e event.Event) []string {
			ws, err := r.webhooks.Matching(ctx, e)
			noErr(t, err)
			var out []string
			for _, w := range ws {
				out = append(out, w.ID())
			}
			sort.Strings(out)
			return out
		}
		sorted := func(s ...string) []string { sort.Strings(s); return s }
		got := ids(event.Event{ID: "evt_x", Type: event.SubmissionCreated, WorkspaceID: a.ID(), FormID: f1.ID()})
		if want := sorted(all.ID(), bound.ID()); !reflect.DeepEqual(got, want) {
			t.Fatalf("submission.created on f1 matches %v, want %v", got, want)
		}
		got = ids(event.Event{ID: "evt_y", Type: event.FormPublished, WorkspaceID: a.ID(), FormID: f1.ID()})
		if want := []string{bound.ID()}; !reflect.DeepEqual(got, want) {
			t.Fatalf("form.published on f1 matches %v, want %v", got, want)
		}
		if got := ids(event.Event{ID: "evt_z", Type: event.FormPublished, WorkspaceID: a.ID(), FormID: f2.ID()}); len(got) != 0 {
			t.Fatalf("form.published on f2 matches %v", got)
		}
	})
}

// The enabled switch is stored; Matching leaves out a disabled webhook, and a webhook switched
// back on takes only the events that happened since.
func TestWebhookEnabledSwitch(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a := mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base)
		on := mustWebhook(t, r, a.ID(), nil, nil, base, "submission.created")
		off, err := webhook.New(newID("whk"), a.ID(), webhook.Draft{URL: "https://hooks.example.com/off", Events: []string{"submission.created"},
			Enabled: boolp(false)}, base)
		noErr(t, err)
		noErr(t, r.webhooks.Create(ctx, off))
		got, err := r.webhooks.Get(ctx, a.ID(), off.ID())
		noErr(t, err)
		if got.Enabled() || !got.EnabledSince().IsZero() {
			t.Fatalf("stored disabled: %v %v", got.Enabled(), got.EnabledSince())
		}
		matching := func(at time.Time) []string {
			ws, err := r.webhooks.Matching(ctx, event.Event{ID: "evt_x", Type: event.SubmissionCreated, WorkspaceID: a.ID(), FormID: f.ID(), OccurredAt: at})
			noErr(t, err)
			var out []string
			for _, w := range ws {
				out = append(out, w.ID())
			}
			return out
		}
		if got := matching(base); !reflect.DeepEqual(got, []string{on.ID()}) {
			t.Fatalf("matching with one disabled: %v", got)
		}

		switchedOn := base.Add(time.Hour)
		_, err = r.webhooks.Update(ctx, a.ID(), off.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{}, w.Apply(webhook.Patch{Enabled: boolp(true)}, switchedOn)
		})
		noErr(t, err)
		got, err = r.webhooks.Get(ctx, a.ID(), off.ID())
		noErr(t, err)
		if !got.Enabled() || !got.EnabledSince().Equal(switchedOn) {
			t.Fatalf("stored enabled: %v %v", got.Enabled(), got.EnabledSince())
		}
		// Matching answers for the kind of event; the stored time it was switched on lets the
		// fan-out skip an event that happened before.
		if got := matching(switchedOn); len(got) != 2 {
			t.Fatalf("after switching it on: %v", got)
		}
		early := event.Event{ID: "evt_e", Type: event.SubmissionCreated, WorkspaceID: a.ID(), FormID: f.ID(), OccurredAt: switchedOn.Add(-time.Second)}
		if got.Matches(early) || !got.Matches(event.Event{ID: "evt_l", Type: event.SubmissionCreated, WorkspaceID: a.ID(), FormID: f.ID(), OccurredAt: switchedOn}) {
			t.Fatal("the time it was switched on was not kept")
		}

		_, err = r.webhooks.Update(ctx, a.ID(), on.ID(), func(w *webhook.Webhook) (ports.Effects, error) {
			return ports.Effects{}, w.Apply(webhook.Patch{Enabled: boolp(false)}, switchedOn)
		})
		noErr(t, err)
		if got := matching(switchedOn.Add(time.Hour)); !reflect.DeepEqual(got, []string{off.ID()}) {
			t.Fatalf("after switching the other off: %v", got)
		}
	})
}

func boolp(b bool) *bool { return &b }

func TestDeliveryAddAllDedupesAndLists(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base)
		w := mustWebhook(t, r, a.ID(), nil, nil, base)
		d1 := buildDelivery(w, f.ID(), base, `{"n":1}`)
		d2 := buildDelivery(w, f.ID(), base.Add(time.Second), `{"n":2}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{d1, d2}))
		// The same event to the same webhook again, under a new delivery ID: skipped.
		e := event.Event{ID: d1.EventID(), Type: event.SubmissionCreated, WorkspaceID: a.ID(), FormID: f.ID()}
		dup := webhook.NewDelivery(newID("dlv"), w, e, []byte(`{"n":"dup"}`), base)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{dup}))
		noErr(t, r.deliveries.AddAll(ctx, nil))
		if n := countWhere(t, r.db, "deliveries", "webhook_id", w.ID()); n != 2 {
			t.Fatalf("%d deliveries stored, want 2", n)
		}

		list, err := r.deliveries.List(ctx, a.ID(), w.ID(), ports.Page{Limit: 10})
		noErr(t, err)
		if len(list) != 2 || list[0].ID() != d2.ID() || list[1].ID() != d1.ID() {
			t.Fatalf("list = %v", list)
		}
		got, err := r.deliveries.Get(ctx, a.ID(), w.ID(), d1.ID())
		noErr(t, err)
		if string(got.Body()) != `{"n":1}` || got.Status() != webhook.StatusPending || got.EventID() != d1.EventID() ||
			got.EventType() != event.SubmissionCreated || got.FormID() != f.ID() || !got.NextAttemptAt().Equal(base) {
			t.Fatalf("got %+v", got)
		}
		page, err := r.deliveries.List(ctx, a.ID(), w.ID(), ports.Page{Limit: 1, After: &ports.Position{CreatedAt: d2.CreatedAt(), ID: d2.ID()}})
		noErr(t, err)
		if len(page) != 1 || page[0].ID() != d1.ID() {
			t.Fatalf("second page = %v", page)
		}

		// Another workspace sees none of them.
		_, err = r.deliveries.Get(ctx, b.ID(), w.ID(), d1.ID())
		wantErr(t, err, domain.ErrNotFound)
		list, err = r.deliveries.List(ctx, b.ID(), w.ID(), ports.Page{Limit: 10})
		noErr(t, err)
		if len(list) != 0 {
			t.Fatalf("workspace b lists %d deliveries", len(list))
		}
		_, err = r.deliveries.Update(ctx, b.ID(), w.ID(), d1.ID(), func(*webhook.Delivery) (ports.Effects, error) { t.Fatal("change called"); return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
	})
}

func TestDeliverySaveAndUpdate(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a := mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base)
		w := mustWebhook(t, r, a.ID(), nil, nil, base)
		d := buildDelivery(w, f.ID(), base, `{}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{d}))

		d.Record(webhook.Outcome{StatusCode: 502, Duration: 1500 * time.Millisecond, Err: errors.New("endpoint answered 502")}, base.Add(time.Second), retry.Default())
		d.Record(webhook.Outcome{Duration: 10 * time.Second, Err: errors.New("timeout after 10s")}, base.Add(time.Minute), retry.Default())
		noErr(t, r.deliveries.Save(ctx, d))
		got, err := r.deliveries.Get(ctx, a.ID(), w.ID(), d.ID())
		noErr(t, err)
		if !reflect.DeepEqual(got.Attempts(), d.Attempts()) || got.Cycle() != 2 || !got.NextAttemptAt().Equal(*d.NextAttemptAt()) {
			t.Fatalf("attempts %+v cycle %d next %v, want %+v", got.Attempts(), got.Cycle(), got.NextAttemptAt(), d.Attempts())
		}

		upd, err := r.deliveries.Update(ctx, a.ID(), w.ID(), d.ID(), func(d *webhook.Delivery) (ports.Effects, error) {
			d.Record(webhook.Outcome{StatusCode: 200}, base.Add(time.Hour), retry.Default())
			return ports.Effects{}, nil
		})
		noErr(t, err)
		got, _ = r.deliveries.Get(ctx, a.ID(), w.ID(), d.ID())
		if got.Status() != webhook.StatusDelivered || got.NextAttemptAt() != nil || upd.Status() != webhook.StatusDelivered {
			t.Fatalf("status %s next %v", got.Status(), got.NextAttemptAt())
		}

		// Deleting the webhook deletes its deliveries; a later Save does not bring one back.
		noErr(t, r.webhooks.Delete(ctx, a.ID(), w.ID()))
		d.Retry(base.Add(2 * time.Hour))
		wantErr(t, r.deliveries.Save(ctx, d), domain.ErrNotFound)
		if n := countWhere(t, r.db, "deliveries", "id", d.ID()); n != 0 {
			t.Fatalf("save resurrected the delivery")
		}
		_, err = r.deliveries.Update(ctx, a.ID(), w.ID(), d.ID(), func(*webhook.Delivery) (ports.Effects, error) { return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
		// Adding a delivery to a deleted webhook fails.
		wantErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{buildDelivery(w, f.ID(), base, `{}`)}), domain.ErrNotFound)
	})
}

func TestDeliveryCascades(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a := mustWorkspace(t, r, base)
		f1, f2 := mustForm(t, r, a.ID(), base), mustForm(t, r, a.ID(), base)
		bound := mustWebhook(t, r, a.ID(), strp(f1.ID()), strp("s"), base)
		all := mustWebhook(t, r, a.ID(), nil, nil, base)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{buildDelivery(bound, f1.ID(), base, `{}`), buildDelivery(all, f1.ID(), base, `{}`)}))

		// Deleting f2 touches neither webhook.
		noErr(t, r.forms.Delete(ctx, a.ID(), f2.ID()))
		if n := countWhere(t, r.db, "webhooks", "workspace_id", a.ID()); n != 2 {
			t.Fatalf("%d webhooks after deleting an unrelated form", n)
		}
		// Deleting f1 deletes the webhook bound to it and its deliveries, not the other.
		noErr(t, r.forms.Delete(ctx, a.ID(), f1.ID()))
		_, err := r.webhooks.Get(ctx, a.ID(), bound.ID())
		wantErr(t, err, domain.ErrNotFound)
		if n := countWhere(t, r.db, "deliveries", "webhook_id", bound.ID()); n != 0 {
			t.Fatalf("%d deliveries of the deleted webhook remain", n)
		}
		_, err = r.webhooks.Get(ctx, a.ID(), all.ID())
		noErr(t, err)
		if n := countWhere(t, r.db, "deliveries", "webhook_id", all.ID()); n != 1 {
			t.Fatalf("%d deliveries of the unbound webhook, want 1", n)
		}
		// Deleting a webhook deletes its pending deliveries.
		noErr(t, r.webhooks.Delete(ctx, a.ID(), all.ID()))
		if n := countWhere(t, r.db, "deliveries", "workspace_id", a.ID()); n != 0 {
			t.Fatalf("%d deliveries remain", n)
		}
		claimed, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Hour), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 0 {
			t.Fatalf("claimed %d deliveries of deleted webhooks", len(claimed))
		}
	})
}

func TestDeliveryClaimDue(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a := mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base)
		w := mustWebhook(t, r, a.ID(), nil, nil, base)

		due := buildDelivery(w, f.ID(), base, `{"due":1}`)
		later := buildDelivery(w, f.ID(), base, `{}`)
		later.Postpone(base.Add(time.Hour))
		done := buildDelivery(w, f.ID(), base, `{}`)
		done.Record(webhook.Outcome{StatusCode: 200}, base, retry.Default())
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{due, later, done}))

		now := base.Add(time.Second)
		got, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: now, Limit: 10, Lease: 5 * time.Minute})
		noErr(t, err)
		if len(got) != 1 || got[0].ID() != due.ID() || string(got[0].Body()) != `{"due":1}` {
			t.Fatalf("claimed %v", got)
		}
		if !got[0].NextAttemptAt().Equal(now.Add(5 * time.Minute)) {
			t.Fatalf("claimed next attempt at %v", got[0].NextAttemptAt())
		}
		// Leased: not claimed again until the lease runs out.
		again, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: now, Limit: 10, Lease: 5 * time.Minute})
		noErr(t, err)
		if len(again) != 0 {
			t.Fatalf("claimed %d leased deliveries", len(again))
		}
		again, err = r.deliveries.ClaimDue(ctx, ports.Claim{Now: now.Add(5 * time.Minute), Limit: 10, Lease: 5 * time.Minute})
		noErr(t, err)
		if len(again) != 1 || again[0].ID() != due.ID() {
			t.Fatalf("after the lease: %v", again)
		}
		stored, err := r.deliveries.Get(ctx, a.ID(), w.ID(), due.ID())
		noErr(t, err)
		if !stored.NextAttemptAt().Equal(now.Add(10 * time.Minute)) {
			t.Fatalf("stored next attempt at %v", stored.NextAttemptAt())
		}
	})
}

func TestDeliveryClaimDueConcurrent(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a := mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base)
		w := mustWebhook(t, r, a.ID(), nil, nil, base)
		const total = 60
		ds := make([]*webhook.Delivery, total)
		for i := range ds {
			ds[i] = buildDelivery(w, f.ID(), base.Add(time.Duration(i)*time.Millisecond), `{}`)
		}
		noErr(t, r.deliveries.AddAll(ctx, ds))

		now := base.Add(time.Hour)
		var (
			mu   sync.Mutex
			seen = map[string]int{}
			wg   sync.WaitGroup
			errs = make(chan error, 2)
		)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					got, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: now, Limit: 7, Lease: time.Hour})
					if err != nil {
						errs <- err
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, d := range got {
						seen[d.ID()]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if len(seen) != total {
			t.Fatalf("claimed %d distinct deliveries, want %d", len(seen), total)
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("delivery %s claimed %d times", id, n)
			}
		}
	})
}
