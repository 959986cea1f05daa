package persistence_test

import (
	"context"
	"errors"
	"testing"
)

// A request that was already cancelled when it first used the hot path must not break the
// hot path for every request after it.
func TestHotPathSurvivesCancelledFirstRequest(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ws := mustWorkspace(t, r, base)
		f := mustForm(t, r, ws.ID(), base)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.forms.Get(cancelled, ws.ID(), f.ID()); !errors.Is(err, context.Canceled) {
			t.Fatalf("get with a cancelled context: %v, want context.Canceled", err)
		}
		ctx := context.Background()
		got, err := r.forms.Get(ctx, ws.ID(), f.ID())
		if err != nil {
			t.Fatalf("get after a cancelled first request: %v", err)
		}
		if got.ID() != f.ID() {
			t.Fatalf("got form %s, want %s", got.ID(), f.ID())
		}
		if _, err := r.forms.Find(ctx, f.ID()); err != nil {
			t.Fatalf("find after a cancelled first request: %v", err)
		}
	})
}
