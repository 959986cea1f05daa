package persistence_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestOutboxBacklogAndGroupCommitObserver(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		var mu sync.Mutex
		observed := 0
		r.db.ObserveGroupCommits(func(size int) {
			mu.Lock()
			observed += size
			mu.Unlock()
		})
		defer r.db.ObserveGroupCommits(nil)

		ws := mustWorkspace(t, r, base)
		f := mustForm(t, r, ws.ID(), base)
		mustAdd(t, r, f, base.Add(time.Minute), subOpts{})
		mustAdd(t, r, f, base.Add(2*time.Minute), subOpts{})
		mu.Lock()
		if observed != 2 {
			t.Fatalf("group commits observed %d submissions, want 2", observed)
		}
		mu.Unlock()

		all, err := r.outbox.Pending(ctx, 0, 1000)
		noErr(t, err)
		pending, oldest, err := r.db.OutboxBacklog(ctx)
		noErr(t, err)
		if pending != int64(len(all)) || len(all) < 2 {
			t.Fatalf("backlog %d, outbox has %d pending", pending, len(all))
		}
		if !oldest.Equal(all[0].Event.OccurredAt) {
			t.Fatalf("oldest pending %v, want %v", oldest, all[0].Event.OccurredAt)
		}

		// Once the oldest are published, the age follows the next one.
		seqs := make([]int64, 0, len(all))
		for _, rec := range all[:len(all)-1] {
			seqs = append(seqs, rec.Seq)
		}
		noErr(t, r.outbox.MarkPublished(ctx, seqs, base.Add(time.Hour)))
		pending, oldest, err = r.db.OutboxBacklog(ctx)
		noErr(t, err)
		if pending != 1 || !oldest.Equal(all[len(all)-1].Event.OccurredAt) {
			t.Fatalf("after publishing all but one: %d pending, oldest %v", pending, oldest)
		}
		noErr(t, r.outbox.MarkPublished(ctx, []int64{all[len(all)-1].Seq}, base.Add(time.Hour)))
		pending, oldest, err = r.db.OutboxBacklog(ctx)
		noErr(t, err)
		if pending != 0 || !oldest.IsZero() {
			t.Fatalf("all published: %d pending, oldest %v", pending, oldest)
		}
	})
}
