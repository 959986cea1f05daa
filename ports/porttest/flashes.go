package porttest

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// flashes: a flash is taken once, only by its session and kind, only before it expires; of
// concurrent takes exactly one gets it; Purge deletes the expired ones and only them.
func flashes(t *testing.T, r Repos) {
	session, other := newID("ses"), newID("ses")
	flash := func(kind string, expires time.Time) ports.Flash {
		return ports.Flash{ID: newID("fls"), SessionID: session, Kind: kind, Sealed: []byte("sealed " + kind),
			CreatedAt: base, ExpiresAt: expires}
	}
	key := flash("api_key", base.Add(5*time.Minute))
	noErr(t, r.Flashes.Put(ctx, key))
	_, err := r.Flashes.Take(ctx, key.ID, other, key.Kind, base)
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Flashes.Take(ctx, key.ID, session, "invitation", base)
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Flashes.Take(ctx, key.ID, session, key.Kind, key.ExpiresAt)
	wantErr(t, err, domain.ErrNotFound)
	got, err := r.Flashes.Take(ctx, key.ID, session, key.Kind, base.Add(time.Minute))
	noErr(t, err)
	if got.ID != key.ID || got.SessionID != session || got.Kind != key.Kind || !bytes.Equal(got.Sealed, key.Sealed) ||
		!got.CreatedAt.Equal(base) || !got.ExpiresAt.Equal(key.ExpiresAt) {
		t.Fatalf("took %+v, want %+v", got, key)
	}
	_, err = r.Flashes.Take(ctx, key.ID, session, key.Kind, base.Add(time.Minute))
	wantErr(t, err, domain.ErrNotFound)

	// Concurrent takes: one gets the flash.
	raced := flash("recovery_codes", base.Add(5*time.Minute))
	noErr(t, r.Flashes.Put(ctx, raced))
	const takers = 8
	var wg sync.WaitGroup
	results := make(chan error, takers)
	start := make(chan struct{})
	for range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := r.Flashes.Take(ctx, raced.ID, session, raced.Kind, base)
			results <- err
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, domain.ErrNotFound):
			t.Fatalf("concurrent take: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent takes got the flash, want 1", won)
	}

	// Purge: the expired flash goes, the live one stays.
	expired := flash("invitation", base.Add(time.Minute))
	live := flash("invitation", base.Add(time.Hour))
	noErr(t, r.Flashes.Put(ctx, expired))
	noErr(t, r.Flashes.Put(ctx, live))
	n, err := r.Flashes.Purge(ctx, base.Add(time.Minute))
	noErr(t, err)
	if n < 1 {
		t.Fatalf("purged %d flashes, want the expired one at least", n)
	}
	if _, err := r.Flashes.Take(ctx, expired.ID, session, expired.Kind, base); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the expired flash survived the purge: %v", err)
	}
	if _, err := r.Flashes.Take(ctx, live.ID, session, live.Kind, base); err != nil {
		t.Fatalf("the purge took a live flash: %v", err)
	}
}
