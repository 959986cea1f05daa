package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// acquireAsync starts Acquire and reports its release func (or error) on the channel.
func acquireAsync(ctx context.Context, l *persistence.Lease) <-chan func() {
	got := make(chan func(), 1)
	go func() {
		release, err := l.Acquire(ctx)
		if err != nil {
			close(got)
			return
		}
		got <- release
	}()
	return got
}

func wantBlocked(t *testing.T, got <-chan func(), d time.Duration) {
	t.Helper()
	select {
	case r, ok := <-got:
		if ok {
			r()
		}
		t.Fatal("second lease acquired while the first was held")
	case <-time.After(d):
	}
}

func wantAcquired(t *testing.T, got <-chan func(), d time.Duration) func() {
	t.Helper()
	select {
	case r, ok := <-got:
		if !ok {
			t.Fatal("acquire failed")
		}
		return r
	case <-time.After(d):
		t.Fatal("lease not acquired in time")
	}
	return nil
}

func TestLeaseSQLite(t *testing.T) {
	l := persistence.NewLease(persistencetest.SQLite(t, nil))
	ctx := context.Background()
	release, err := l.Acquire(ctx)
	noErr(t, err)
	second := acquireAsync(ctx, l)
	wantBlocked(t, second, 200*time.Millisecond)
	release()
	release() // idempotent
	wantAcquired(t, second, time.Second)()

	// Cancellation ends the wait.
	release, err = l.Acquire(ctx)
	noErr(t, err)
	defer release()
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with ended ctx: %v", err)
	}
}

// openPostgres opens (and migrates) another pool on the same database: another relay process.
func openPostgres(t *testing.T, url string) *persistence.DB {
	t.Helper()
	db, err := persistence.Open(context.Background(), persistence.Config{DatabaseURL: url})
	noErr(t, err)
	noErr(t, db.Migrate(context.Background()))
	return db
}

func TestLeasePostgres(t *testing.T) {
	url := persistencetest.PostgresURL(t)
	ctx := context.Background()
	dbA, dbB := openPostgres(t, url), openPostgres(t, url)
	t.Cleanup(func() { _ = dbB.Close() })
	a, b := persistence.NewLease(dbA), persistence.NewLease(dbB)

	releaseA, err := a.Acquire(ctx)
	noErr(t, err)
	second := acquireAsync(ctx, b)
	wantBlocked(t, second, 1200*time.Millisecond)
	releaseA()
	releaseA() // idempotent
	releaseB := wantAcquired(t, second, 3*time.Second)

	// Released on a connection that went back to nobody: A can wait again, and cancel.
	cctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer cancel()
	if _, err := a.Acquire(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire while held elsewhere: %v", err)
	}
	releaseB()

	// Process death: A holds the lease and its process goes away. Its pool is closed and
	// PostgreSQL ends its session (as when the process is killed and its sockets close); the
	// lock goes with the session and B takes over.
	_, err = a.Acquire(ctx)
	noErr(t, err)
	second = acquireAsync(ctx, b)
	wantBlocked(t, second, 700*time.Millisecond)
	_ = dbA.Close()
	_, err = dbB.SQL().ExecContext(ctx,
		"SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()"+
			" AND database = (SELECT oid FROM pg_database WHERE datname = current_database())") // only this test's database
	noErr(t, err)
	wantAcquired(t, second, 3*time.Second)()
}
