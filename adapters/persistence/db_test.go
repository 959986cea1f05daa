package persistence_test

import (
	"context"
	"os"
	"path/filepath"
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
