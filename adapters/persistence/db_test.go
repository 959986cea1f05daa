package persistence_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

func TestOpenSQLiteSettings(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "data")
	db, err := persistence.Open(ctx, persistence.Config{DataDir: dir})
	noErr(t, err)
	defer db.Close()
	if db.Dialect() != persistence.DialectSQLite {
		t.Fatalf("dialect = %s", db.Dialect())
	}
	noErr(t, db.Ping(ctx))
	noErr(t, db.Migrate(ctx))
	noErr(t, db.Migrate(ctx)) // idempotent

	st, err := os.Stat(dir)
	noErr(t, err)
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode %v, want 0700", st.Mode().Perm())
	}
	st, err = os.Stat(filepath.Join(dir, "formward.db"))
	noErr(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("database file mode %v, want 0600", st.Mode().Perm())
	}

	// Pragmas are per connection: hold several connections at once and check each.
	conns := make([]interface{ Close() error }, 0, 4)
	for range 4 {
		c, err := db.SQL().Conn(ctx)
		noErr(t, err)
		conns = append(conns, c)
		var journal string
		var synchronous, foreignKeys, busy int
		noErr(t, c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal))
		noErr(t, c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous))
		noErr(t, c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&foreignKeys))
		noErr(t, c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy))
		if journal != "wal" || synchronous != 2 || foreignKeys != 1 || busy != 10000 {
			t.Fatalf("journal_mode=%s synchronous=%d foreign_keys=%d busy_timeout=%d", journal, synchronous, foreignKeys, busy)
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

func TestOpenPostgresSettings(t *testing.T) {
	db := persistencetest.Postgres(t)
	if db.Dialect() != persistence.DialectPostgres {
		t.Fatalf("dialect = %s", db.Dialect())
	}
	var sc string
	noErr(t, db.SQL().QueryRow("SHOW synchronous_commit").Scan(&sc))
	if sc != "on" {
		t.Fatalf("synchronous_commit = %s", sc)
	}
}

func TestOpenRejectsOtherURLs(t *testing.T) {
	_, err := persistence.Open(context.Background(), persistence.Config{DatabaseURL: "mysql://localhost/x"})
	if err == nil {
		t.Fatal("mysql URL accepted")
	}
}

// Two processes starting at once both migrate safely: one applies, the other waits and finds
// nothing to do.
func TestMigrateConcurrentlyOnPostgres(t *testing.T) {
	url := persistencetest.PostgresURL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := persistence.Open(ctx, persistence.Config{DatabaseURL: url})
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			errs[i] = db.Migrate(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		noErr(t, err)
	}
	db, err := persistence.Open(ctx, persistence.Config{DatabaseURL: url})
	noErr(t, err)
	defer db.Close()
	if n := count(t, db, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = 1"); n != 1 {
		t.Fatalf("migration 1 recorded %d times", n)
	}
}

// Commands started together on a fresh SQLite data dir each migrate it: the migrations run
// under a file lock in the data dir, so none sees half of them applied ("table workspaces
// already exists"). Each DB here is a process of its own: its own pool and write slot.
func TestMigrateConcurrentlyOnSQLite(t *testing.T) {
	ctx := context.Background()
	for round := range 5 {
		dir := filepath.Join(t.TempDir(), "data")
		errs := startTogether(4, func() error {
			db, err := persistence.Open(ctx, persistence.Config{DataDir: dir})
			if err != nil {
				return err
			}
			defer db.Close()
			return db.Migrate(ctx)
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, process %d: %v", round, i, err)
			}
		}
		db, err := persistence.Open(ctx, persistence.Config{DataDir: dir})
		noErr(t, err)
		if n := count(t, db, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = 1"); n != 1 {
			t.Fatalf("round %d: migration 1 recorded %d times", round, n)
		}
		noErr(t, db.Close())
	}
}

// Opening a fresh SQLite file switches it to WAL, which two connections doing it at once fail
// with "database is locked" whatever the busy timeout: processes opening one data dir take
// turns while they set the database up.
func TestOpenConcurrentlyOnAFreshSQLiteFile(t *testing.T) {
	ctx := context.Background()
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), "data")
		errs := startTogether(6, func() error {
			db, err := persistence.Open(ctx, persistence.Config{DataDir: dir})
			if err != nil {
				return err
			}
			return db.Close()
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, process %d: %v", round, i, err)
			}
		}
	}
}

// The serve lock of a data dir is exclusive and names its holder; it is free again once
// released (or once its process ended, which the system does).
func TestLockServe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	unlock, err := persistence.LockServe(dir)
	noErr(t, err)
	_, err = persistence.LockServe(dir)
	var inUse *persistence.DataDirInUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() || inUse.Dir != dir {
		t.Fatalf("second lock: %v, want the data dir in use by PID %d", err, os.Getpid())
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("PID %d", os.Getpid())) || !strings.Contains(msg, dir) {
		t.Fatalf("message does not name the PID and the data dir: %s", msg)
	}
	// Management commands open the database next to the server.
	db, err := persistence.Open(context.Background(), persistence.Config{DataDir: dir})
	noErr(t, err)
	noErr(t, db.Migrate(context.Background()))
	noErr(t, db.Close())
	unlock()
	unlock, err = persistence.LockServe(dir)
	noErr(t, err)
	unlock()
}

// startTogether runs n copies of open at the same moment, as n processes started together
// would, and returns each one's error.
func startTogether(n int, open func() error) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range errs {
		wg.Go(func() {
			<-start
			errs[i] = open()
		})
	}
	close(start)
	wg.Wait()
	return errs
}
