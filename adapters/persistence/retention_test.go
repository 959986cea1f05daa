package persistence_test

import (
	"context"
	"testing"

	"github.com/formward/formward/adapters/persistence"
)

// The retention job paces itself by CaptureWrites: on SQLite every capture's group commit moves
// it; on PostgreSQL, where other processes capture too, it says it cannot tell.
func TestCaptureWritesMoveWithCaptures(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		store := persistence.NewRetentionStore(r.db, r.cipher)
		before, ok := store.CaptureWrites()
		if want := r.db.Dialect() == persistence.DialectSQLite; ok != want {
			t.Fatalf("ok = %v, want %v", ok, want)
		}
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		s, e := buildSubmission(t, f, base, subOpts{})
		if err := r.submissions.Add(context.Background(), s, e); err != nil {
			t.Fatal(err)
		}
		if after, _ := store.CaptureWrites(); after == before {
			t.Fatalf("CaptureWrites stayed at %d after a capture", after)
		}
	})
}
