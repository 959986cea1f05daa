package persistence

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"
	"time"

	"github.com/formward/formward/ports"
)

// relayLockKey is the PostgreSQL advisory lock key of the relay lease (an arbitrary constant,
// "formward" in ASCII, so it is recognisable in pg_locks).
const relayLockKey int64 = 0x666f726d77617264

// backupLockKey is the advisory lock key of the backup lease ("formback").
const backupLockKey int64 = 0x666f726d6261636b

// Lease is the relay lease: only its holder publishes the outbox, so several relay processes
// never interleave the events of one form.
//
// On PostgreSQL it is a session-level advisory lock (pg_advisory_lock) held on a connection
// taken out of the pool for as long as the lease is held. If the process dies, its connection
// closes and PostgreSQL releases the lock, so a standby relay takes over without any expiry to
// wait for or clock to trust. Acquire polls pg_try_advisory_lock rather than blocking in
// pg_advisory_lock, so that cancelling ctx stops the wait.
//
// On SQLite it is an in-process mutex: an embedded SQLite database belongs to one process, so
// there is no other process to exclude. Use one Lease per process.
type Lease struct {
	db    *DB
	key   int64
	retry time.Duration
	local chan struct{} // SQLite: the mutex, held while the channel is full
}

var _ ports.Lease = (*Lease)(nil)

// NewLease returns the relay lease of the database.
func NewLease(db *DB) *Lease {
	return &Lease{db: db, key: relayLockKey, retry: 500 * time.Millisecond, local: make(chan struct{}, 1)}
}

// retentionLockKey is the advisory lock key of the retention lease ("formrete").
const retentionLockKey int64 = 0x666f726d72657465

// NewRetentionLease returns the lease under which one process at a time runs the retention
// job; it is independent of the relay and backup leases.
func NewRetentionLease(db *DB) *Lease {
	return &Lease{db: db, key: retentionLockKey, retry: 500 * time.Millisecond, local: make(chan struct{}, 1)}
}

// NewBackupLease returns the lease under which one process at a time takes and prunes
// backups; it is independent of the relay lease.
func NewBackupLease(db *DB) *Lease {
	return &Lease{db: db, key: backupLockKey, retry: 500 * time.Millisecond, local: make(chan struct{}, 1)}
}

// Acquire blocks until this process holds the lease, or ctx ends.
func (l *Lease) Acquire(ctx context.Context) (func(), error) {
	if l.db.Dialect() != DialectPostgres {
		select {
		case l.local <- struct{}{}:
			var once sync.Once
			return func() { once.Do(func() { <-l.local }) }, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return l.acquirePostgres(ctx)
}

func (l *Lease) acquirePostgres(ctx context.Context) (func(), error) {
	for {
		conn, err := l.db.SQL().Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("relay lease: %w", err)
		}
		held, err := l.tryLock(ctx, conn)
		if err != nil {
			discard(conn)
			return nil, err
		}
		if held {
			var once sync.Once
			return func() { once.Do(func() { l.unlock(conn) }) }, nil
		}
		// Give the connection back while waiting, so a waiting relay does not pin one.
		_ = conn.Close()
		t := time.NewTimer(l.retry)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

func (l *Lease) tryLock(ctx context.Context, conn *sql.Conn) (bool, error) {
	var held bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", l.key).Scan(&held); err != nil {
		return false, fmt.Errorf("relay lease: %w", err)
	}
	return held, nil
}

// unlock releases the advisory lock and closes the connection for good: a session-level lock
// must never travel back into the pool on a connection that another caller would then hold.
func (l *Lease) unlock(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", l.key)
	discard(conn)
}

// discard closes the connection's physical session instead of returning it to the pool.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
