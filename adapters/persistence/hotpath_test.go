package persistence_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
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

// The hot key read returns the whole key, its last use and creator included: the API's
// authentication writes last_used_at only when the key it read says a minute has passed, so a
// read without it would write on every request.
func TestHotKeyReadHasLastUseAndCreator(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		ws := mustWorkspace(t, r, base)
		creator := audit.Actor{Type: audit.ActorUser, ID: "usr_1", Name: "Ada"}
		k, err := apikey.New(newID("key"), ws.ID(), "ci", apikey.ScopeAdmin, apikey.HashSecret("s"), creator, base)
		noErr(t, err)
		noErr(t, r.keys.Create(ctx, k))
		got, err := r.keys.Get(ctx, k.ID())
		noErr(t, err)
		if got.LastUsedAt() != nil || !got.NeedsUse(base) {
			t.Fatalf("a new key: last used %v, needs use %v", got.LastUsedAt(), got.NeedsUse(base))
		}
		if got.CreatedBy() != creator {
			t.Fatalf("created by %+v, want %+v", got.CreatedBy(), creator)
		}
		used := base.Add(time.Hour)
		noErr(t, r.keys.MarkUsed(ctx, k.ID(), used))
		got, err = r.keys.Get(ctx, k.ID())
		noErr(t, err)
		if got.LastUsedAt() == nil || !got.LastUsedAt().Equal(used) {
			t.Fatalf("last used %v, want %v", got.LastUsedAt(), used)
		}
		if got.NeedsUse(used.Add(apikey.LastUsedEvery/2)) || !got.NeedsUse(used.Add(apikey.LastUsedEvery)) {
			t.Fatal("a key used just now asks to be marked again before a minute has passed, or not after")
		}
	})
}

// A capture's key read also reads its form (ports.ReadAhead) in the same round trip: the form
// repository then answers from it exactly as from its own read, once, and only for the key's own
// workspace; a form of another workspace is never handed over.
func TestKeyReadReadsTheRequestsFormAhead(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ws := mustWorkspace(t, r, base)
		other := mustWorkspace(t, r, base)
		f := mustForm(t, r, ws.ID(), base)
		foreign := mustForm(t, r, other.ID(), base)
		k, err := apikey.New(newID("key"), ws.ID(), "ci", apikey.ScopeAdmin, apikey.HashSecret("s"), audit.Actor{Type: audit.ActorUser, ID: "usr_1", Name: "Ada"}, base)
		noErr(t, err)
		noErr(t, r.keys.Create(context.Background(), k))
		want, err := r.forms.Get(context.Background(), ws.ID(), f.ID())
		noErr(t, err)

		ctx := ports.WithReadAhead(context.Background(), f.ID())
		got, err := r.keys.Get(ctx, k.ID())
		noErr(t, err)
		if got.ID() != k.ID() || got.WorkspaceID() != ws.ID() {
			t.Fatalf("key read ahead: got %s of %s", got.ID(), got.WorkspaceID())
		}
		if ports.ReadAheadFrom(ctx).Form == nil {
			t.Fatal("the key read left no form for the request")
		}
		fromKey, err := r.forms.Get(ctx, ws.ID(), f.ID())
		noErr(t, err)
		if !reflect.DeepEqual(fromKey, want) {
			t.Fatalf("form read ahead differs from its own read:\n%+v\n%+v", fromKey, want)
		}
		if ports.ReadAheadFrom(ctx).Form != nil {
			t.Fatal("the form read ahead was not used up")
		}

		ctx = ports.WithReadAhead(context.Background(), foreign.ID())
		_, err = r.keys.Get(ctx, k.ID())
		noErr(t, err)
		if ports.ReadAheadFrom(ctx).Form != nil {
			t.Fatal("another workspace's form was read with the key")
		}
		if _, err := r.forms.Get(ctx, ws.ID(), foreign.ID()); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("another workspace's form: %v, want not found", err)
		}
		for _, malformed := range []string{"frm_\x00", "frm_\xff"} { // PostgreSQL refuses such text: read the key alone
			if _, err := r.keys.Get(ports.WithReadAhead(context.Background(), malformed), k.ID()); err != nil {
				t.Fatalf("key read ahead of a malformed form ID %q: %v", malformed, err)
			}
		}
		if _, err := r.keys.Get(ports.WithReadAhead(context.Background(), "frm_missing"), "key_missing"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a missing key read ahead: %v, want not found", err)
		}
	})
}
