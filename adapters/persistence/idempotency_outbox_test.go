package persistence_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

func TestIdempotencyStore(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		fp, otherFP := []byte("fingerprint-1"), []byte("fingerprint-2")
		now := base

		got, err := r.idem.Reserve(ctx, "ws_a", "api", "k1", fp, now)
		noErr(t, err)
		if got != nil {
			t.Fatalf("first reserve returned %+v", got)
		}
		// In progress: same or other body → conflict.
		_, err = r.idem.Reserve(ctx, "ws_a", "api", "k1", fp, now.Add(time.Second))
		wantErr(t, err, ports.ErrIdempotencyKeyReused)
		_, err = r.idem.Reserve(ctx, "ws_a", "api", "k1", otherFP, now.Add(time.Second))
		wantErr(t, err, ports.ErrIdempotencyKeyReused)
		// The key is per workspace and scope.
		got, err = r.idem.Reserve(ctx, "ws_b", "api", "k1", otherFP, now)
		noErr(t, err)
		if got != nil {
			t.Fatal("key shared across workspaces")
		}
		got, err = r.idem.Reserve(ctx, "ws_a", "public", "k1", otherFP, now)
		noErr(t, err)
		if got != nil {
			t.Fatal("key shared across scopes")
		}

		body := []byte(`{"id":"sub_1","data":{"name":"Ada"}}`)
		noErr(t, r.idem.Complete(ctx, "ws_a", "api", "k1", ports.StoredResponse{Status: 201, Body: body}))
		got, err = r.idem.Reserve(ctx, "ws_a", "api", "k1", fp, now.Add(time.Hour))
		noErr(t, err)
		if got == nil || got.Status != 201 || string(got.Body) != string(body) {
			t.Fatalf("replay = %+v", got)
		}
		_, err = r.idem.Reserve(ctx, "ws_a", "api", "k1", otherFP, now.Add(time.Hour))
		wantErr(t, err, ports.ErrIdempotencyKeyReused)
		wantErr(t, r.idem.Complete(ctx, "ws_a", "api", "never-reserved", ports.StoredResponse{Status: 201}), domain.ErrNotFound)

		// Releasing a completed key keeps it; releasing one in progress frees it.
		noErr(t, r.idem.Release(ctx, "ws_a", "api", "k1"))
		got, err = r.idem.Reserve(ctx, "ws_a", "api", "k1", fp, now.Add(time.Hour))
		noErr(t, err)
		if got == nil {
			t.Fatal("release dropped a completed response")
		}
		noErr(t, r.idem.Release(ctx, "ws_b", "api", "k1"))
		got, err = r.idem.Reserve(ctx, "ws_b", "api", "k1", fp, now.Add(time.Minute))
		noErr(t, err)
		if got != nil {
			t.Fatal("released key still held")
		}
		noErr(t, r.idem.Release(ctx, "ws_b", "api", "unknown")) // harmless

		// After 24 hours the key counts as absent and is replaced, whatever the body.
		got, err = r.idem.Reserve(ctx, "ws_a", "api", "k1", otherFP, now.Add(24*time.Hour))
		noErr(t, err)
		if got != nil {
			t.Fatalf("expired key replayed %+v", got)
		}
		_, err = r.idem.Reserve(ctx, "ws_a", "api", "k1", otherFP, now.Add(24*time.Hour+time.Second))
		wantErr(t, err, ports.ErrIdempotencyKeyReused) // the replacement is in progress

		// An empty body round-trips.
		_, err = r.idem.Reserve(ctx, "ws_a", "api", "k2", fp, now)
		noErr(t, err)
		noErr(t, r.idem.Complete(ctx, "ws_a", "api", "k2", ports.StoredResponse{Status: 204}))
		got, err = r.idem.Reserve(ctx, "ws_a", "api", "k2", fp, now)
		noErr(t, err)
		if got == nil || got.Status != 204 || len(got.Body) != 0 {
			t.Fatalf("204 replay = %+v", got)
		}

		// Purge removes entries created before the time.
		noErr(t, r.idem.Purge(ctx, now.Add(time.Hour)))
		if n := count(t, r.db, "SELECT COUNT(*) FROM idempotency_keys"); n != 1 {
			t.Fatalf("after purge %d rows, want 1 (the replaced k1)", n)
		}

		// Racing reservations: exactly one owner.
		var wg sync.WaitGroup
		owners := make(chan struct{}, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := r.idem.Reserve(ctx, "ws_c", "api", "race", fp, now)
				if err == nil && got == nil {
					owners <- struct{}{}
				} else if err != nil && !errors.Is(err, ports.ErrIdempotencyKeyReused) {
					t.Errorf("reserve: %v", err)
				}
			}()
		}
		wg.Wait()
		if len(owners) != 1 {
			t.Fatalf("%d owners, want 1", len(owners))
		}
	})
}

func TestOutbox(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		var want []string
		for i := range 5 {
			s, e := buildSubmission(t, f, base.Add(time.Duration(i)*time.Second), subOpts{})
			noErr(t, r.submissions.Add(ctx, s, e))
			want = append(want, e.ID)
		}
		all, err := r.outbox.Pending(ctx, 0, 100)
		noErr(t, err)
		var got []string
		for _, rec := range all {
			got = append(got, rec.Event.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pending order %v, want %v", got, want)
		}
		page, err := r.outbox.Pending(ctx, all[1].Seq, 2)
		noErr(t, err)
		if len(page) != 2 || page[0].Seq != all[2].Seq || page[1].Seq != all[3].Seq {
			t.Fatalf("after seq: %+v", page)
		}
		empty, err := r.outbox.Pending(ctx, 0, 0)
		noErr(t, err)
		if len(empty) != 0 {
			t.Fatal("limit 0 returned rows")
		}

		pubAt := base.Add(time.Hour)
		noErr(t, r.outbox.MarkPublished(ctx, []int64{all[0].Seq, all[2].Seq}, pubAt))
		noErr(t, r.outbox.MarkPublished(ctx, []int64{all[0].Seq}, pubAt.Add(time.Hour))) // keeps the first time
		noErr(t, r.outbox.MarkPublished(ctx, nil, pubAt))
		rest, err := r.outbox.Pending(ctx, 0, 100)
		noErr(t, err)
		if len(rest) != 3 || rest[0].Seq != all[1].Seq || rest[1].Seq != all[3].Seq || rest[2].Seq != all[4].Seq {
			t.Fatalf("pending after mark: %+v", rest)
		}

		n, err := r.outbox.PurgePublished(ctx, pubAt) // exclusive: published exactly at pubAt stays
		noErr(t, err)
		if n != 0 {
			t.Fatalf("purged %d, want 0", n)
		}
		n, err = r.outbox.PurgePublished(ctx, pubAt.Add(time.Millisecond))
		noErr(t, err)
		if n != 2 {
			t.Fatalf("purged %d, want 2", n)
		}
		if c := count(t, r.db, "SELECT COUNT(*) FROM outbox"); c != 3 {
			t.Fatalf("outbox rows = %d, want 3", c)
		}
		// Seqs are never reused, even after the newest rows were purged, so a relay's position
		// stays meaningful.
		noErr(t, r.outbox.MarkPublished(ctx, []int64{all[1].Seq, all[3].Seq, all[4].Seq}, pubAt))
		n, err = r.outbox.PurgePublished(ctx, pubAt.Add(time.Millisecond))
		noErr(t, err)
		if n != 3 || count(t, r.db, "SELECT COUNT(*) FROM outbox") != 0 {
			t.Fatalf("purged %d, outbox not empty", n)
		}
		s, e := buildSubmission(t, f, base, subOpts{})
		noErr(t, r.submissions.Add(ctx, s, e))
		latest, err := r.outbox.Pending(ctx, 0, 10)
		noErr(t, err)
		if len(latest) != 1 || latest[0].Event.ID != e.ID || latest[0].Seq <= all[4].Seq {
			t.Fatalf("new event after purge: %+v (last seq before: %d)", latest, all[4].Seq)
		}
	})
}
