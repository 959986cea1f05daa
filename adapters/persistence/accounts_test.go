package persistence_test

import (
	"context"
	"fmt"
	"github.com/formward/formward/domain/audit"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

func TestWorkspaceRepository(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		_, err := r.workspaces.Oldest(ctx)
		wantErr(t, err, domain.ErrNotFound)
		_, err = r.workspaces.Get(ctx, "ws_missing")
		wantErr(t, err, domain.ErrNotFound)

		second := mustWorkspace(t, r, base.Add(time.Hour))
		first := mustWorkspace(t, r, base.Add(123456*time.Nanosecond)) // sub-millisecond part is dropped
		got, err := r.workspaces.Get(ctx, first.ID())
		noErr(t, err)
		if got.ID() != first.ID() || got.Name() != "Acme" || got.Plan() != workspace.PlanBusiness || !got.CreatedAt().Equal(base) {
			t.Fatalf("got %+v", got)
		}
		if got.CreatedAt().Location() != time.UTC {
			t.Fatalf("created_at not UTC: %v", got.CreatedAt())
		}
		wantErr(t, r.workspaces.Create(ctx, first), domain.ErrConflict)

		oldest, err := r.workspaces.Oldest(ctx)
		noErr(t, err)
		if oldest.ID() != first.ID() {
			t.Fatalf("oldest = %s, want %s", oldest.ID(), first.ID())
		}
		all, err := r.workspaces.List(ctx)
		noErr(t, err)
		if len(all) != 2 || all[0].ID() != first.ID() || all[1].ID() != second.ID() {
			t.Fatalf("list = %v", all)
		}
	})
}

func TestAPIKeyRepository(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w1, w2 := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		k1, err := apikey.New(newID("key"), w1.ID(), "ci", apikey.ScopeAdmin, apikey.HashSecret("s1"), audit.System, base)
		noErr(t, err)
		k2, err := apikey.New(newID("key"), w2.ID(), "reader", apikey.ScopeReadOnly, apikey.HashSecret("s2"), audit.System, base.Add(time.Second))
		noErr(t, err)
		noErr(t, r.keys.Create(ctx, k1))
		noErr(t, r.keys.Create(ctx, k2))
		wantErr(t, r.keys.Create(ctx, k1), domain.ErrConflict)
		orphan, _ := apikey.New(newID("key"), "ws_missing", "x", apikey.ScopeAdmin, apikey.HashSecret("s3"), audit.System, base)
		wantErr(t, r.keys.Create(ctx, orphan), domain.ErrNotFound)

		got, err := r.keys.Get(ctx, k1.ID())
		noErr(t, err)
		if got.WorkspaceID() != w1.ID() || got.Name() != "ci" || got.Scope() != apikey.ScopeAdmin || !got.Matches("s1") || !got.Active() || !got.CreatedAt().Equal(base) {
			t.Fatalf("got %+v", got)
		}
		_, err = r.keys.Get(ctx, "key_missing")
		wantErr(t, err, domain.ErrNotFound)

		list, err := r.keys.List(ctx, w1.ID())
		noErr(t, err)
		if len(list) != 1 || list[0].ID() != k1.ID() {
			t.Fatalf("list w1 = %v", list)
		}
		list, err = r.keys.List(ctx, "")
		noErr(t, err)
		if len(list) != 2 || list[0].ID() != k1.ID() || list[1].ID() != k2.ID() {
			t.Fatalf("list all = %v", list)
		}

		revokedAt := base.Add(time.Hour)
		noErr(t, r.keys.Revoke(ctx, "", k1.ID(), revokedAt))
		noErr(t, r.keys.Revoke(ctx, "", k1.ID(), revokedAt.Add(time.Hour))) // keeps the first time
		got, err = r.keys.Get(ctx, k1.ID())
		noErr(t, err)
		if got.Active() || !got.RevokedAt().Equal(revokedAt) {
			t.Fatalf("revoked_at = %v, want %v", got.RevokedAt(), revokedAt)
		}
		wantErr(t, r.keys.Revoke(ctx, "", "key_missing", revokedAt), domain.ErrNotFound)
	})
}

func TestDataKeyRepository(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		_, err := r.dataKeys.Current(ctx, "ws_a")
		wantErr(t, err, domain.ErrNotFound)
		_, err = r.dataKeys.Get(ctx, "dk_missing")
		wantErr(t, err, domain.ErrNotFound)

		k := ports.WrappedKey{ID: newID("dk"), WorkspaceID: "ws_a", MasterKeyID: "mk1", Wrapped: []byte{1, 2, 3, 0}, CreatedAt: base}
		got, err := r.dataKeys.Insert(ctx, k)
		noErr(t, err)
		if got.ID != k.ID || got.MasterKeyID != "mk1" || string(got.Wrapped) != string(k.Wrapped) || !got.CreatedAt.Equal(base) {
			t.Fatalf("insert returned %+v", got)
		}
		// A later insert for the same workspace lost the race: it gets the existing key.
		loser := ports.WrappedKey{ID: newID("dk"), WorkspaceID: "ws_a", MasterKeyID: "mk1", Wrapped: []byte{9}, CreatedAt: base.Add(time.Second)}
		got, err = r.dataKeys.Insert(ctx, loser)
		noErr(t, err)
		if got.ID != k.ID {
			t.Fatalf("second insert returned %s, want the existing %s", got.ID, k.ID)
		}
		_, err = r.dataKeys.Get(ctx, loser.ID)
		wantErr(t, err, domain.ErrNotFound)

		// Racing first inserts for another workspace all end up with one key.
		var wg sync.WaitGroup
		ids := make([]string, 8)
		errs := make([]error, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := r.dataKeys.Insert(ctx, ports.WrappedKey{ID: newID("dk"), WorkspaceID: "ws_b", MasterKeyID: "mk1", Wrapped: []byte{byte(i)}, CreatedAt: base})
				ids[i], errs[i] = got.ID, err
			}()
		}
		wg.Wait()
		for i := range ids {
			noErr(t, errs[i])
			if ids[i] != ids[0] {
				t.Fatalf("racing inserts returned %v", ids)
			}
		}
		cur, err := r.dataKeys.Current(ctx, "ws_b")
		noErr(t, err)
		if cur.ID != ids[0] {
			t.Fatalf("current = %s, want %s", cur.ID, ids[0])
		}

		all, err := r.dataKeys.All(ctx)
		noErr(t, err)
		if len(all) != 2 {
			t.Fatalf("all = %d keys, want 2", len(all))
		}
		noErr(t, r.dataKeys.Rewrap(ctx, k.ID, "mk2", []byte{7, 7}))
		got, err = r.dataKeys.Get(ctx, k.ID)
		noErr(t, err)
		if got.MasterKeyID != "mk2" || string(got.Wrapped) != string([]byte{7, 7}) || got.WorkspaceID != "ws_a" {
			t.Fatalf("after rewrap %+v", got)
		}
		wantErr(t, r.dataKeys.Rewrap(ctx, "dk_missing", "mk2", []byte{1}), domain.ErrNotFound)
	})
}

// The start-up check reads one data key per master key in use, whatever the number of
// workspaces: none on a fresh database.
func TestDataKeysOnePerMasterKey(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		got, err := r.dataKeys.OnePerMasterKey(ctx)
		noErr(t, err)
		if len(got) != 0 {
			t.Fatalf("fresh database: %d data keys, want none", len(got))
		}
		first := map[string]string{}
		for i, mk := range []string{"mk_b", "mk_a", "mk_b", "mk_a", "mk_b"} {
			k := ports.WrappedKey{ID: newID("dk"), WorkspaceID: fmt.Sprintf("ws_%d", i), MasterKeyID: mk, Wrapped: []byte{byte(i)}, CreatedAt: base}
			_, err := r.dataKeys.Insert(ctx, k)
			noErr(t, err)
			if first[mk] == "" {
				first[mk] = k.ID
			}
		}
		got, err = r.dataKeys.OnePerMasterKey(ctx)
		noErr(t, err)
		if len(got) != 2 || got[0].MasterKeyID != "mk_a" || got[1].MasterKeyID != "mk_b" {
			t.Fatalf("one per master key = %+v, want one of mk_a and one of mk_b", got)
		}
		for _, k := range got {
			if k.ID != first[k.MasterKeyID] || len(k.Wrapped) != 1 || k.WorkspaceID == "" {
				t.Fatalf("data key of %s = %+v, want the whole row of %s", k.MasterKeyID, k, first[k.MasterKeyID])
			}
		}
	})
}
