package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// TestRetentionPurgesExpiredFlashes: the retention pass deletes the one-time flashes expired at
// its time and keeps the others.
func TestRetentionPurgesExpiredFlashes(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		r := newRepos(db)
		flashes := persistence.NewFlashRepository(db)
		expired := ports.Flash{ID: "fls_expired", SessionID: "ses_1", Kind: "api_key", Sealed: []byte{1},
			CreatedAt: base.Add(-10 * time.Minute), ExpiresAt: base.Add(-5 * time.Minute)}
		live := ports.Flash{ID: "fls_live", SessionID: "ses_1", Kind: "api_key", Sealed: []byte{2},
			CreatedAt: base.Add(-time.Minute), ExpiresAt: base.Add(4 * time.Minute)}
		noErr(t, flashes.Put(ctx, expired))
		noErr(t, flashes.Put(ctx, live))
		if _, err := retentionAt(r, base).Handle(ctx, workspaceapp.RunRetention{}); err != nil {
			t.Fatal(err)
		}
		var n int
		noErr(t, db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM flashes WHERE id = 'fls_expired'").Scan(&n))
		if n != 0 {
			t.Fatal("the retention pass kept an expired flash")
		}
		// Take at a time before its expiry would have found it, had the purge left it.
		if _, err := flashes.Take(ctx, expired.ID, expired.SessionID, expired.Kind, base.Add(-6*time.Minute)); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("expired flash after the purge: %v", err)
		}
		if _, err := flashes.Take(ctx, live.ID, live.SessionID, live.Kind, base); err != nil {
			t.Fatalf("the retention pass took a live flash: %v", err)
		}
	})
}
