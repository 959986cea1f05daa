package persistence_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
)

// Saves made at once share commits, yet each caller hears its own outcome: every recorded
// attempt is stored, and a delivery whose row is gone fails alone with domain.ErrNotFound.
func TestDeliverySavesAtOnce(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		hook := mustWebhook(t, r, w.ID(), nil, nil, base)
		var ds []*webhook.Delivery
		for range 40 {
			ds = append(ds, buildDelivery(hook, f.ID(), base, `{}`))
		}
		noErr(t, r.deliveries.AddAll(ctx, ds))
		gone := buildDelivery(hook, f.ID(), base, `{}`) // never stored

		schedule, err := retry.New(time.Minute)
		noErr(t, err)
		errs := make([]error, len(ds)+1)
		var wg sync.WaitGroup
		for i, d := range append(ds, gone) {
			wg.Go(func() {
				d.Record(webhook.Outcome{StatusCode: 204, Duration: time.Millisecond}, base.Add(time.Second), schedule)
				errs[i] = r.deliveries.Save(ctx, d)
			})
		}
		wg.Wait()
		for i, err := range errs[:len(ds)] {
			noErr(t, err)
			got, err := r.deliveries.Get(ctx, w.ID(), hook.ID(), ds[i].ID())
			noErr(t, err)
			if got.Status() != webhook.StatusDelivered || len(got.Attempts()) != 1 {
				t.Fatalf("delivery %d stored as %s with %d attempts, want delivered with 1", i, got.Status(), len(got.Attempts()))
			}
		}
		if err := errs[len(ds)]; !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("saving a delivery with no row: %v, want domain.ErrNotFound", err)
		}
	})
}
