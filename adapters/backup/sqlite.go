package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// sqliteFile is the embedded database: one file under the data dir.
type sqliteFile struct{ path string }

func (sqliteFile) kind() string   { return "sqlite" }
func (sqliteFile) format() string { return "sqlite-database-file" }

// snapshot copies the live database into path with SQLite's online backup API. The source
// connection holds one read transaction for the whole copy, so the copy is the database as of
// one commit even though it is made in steps (a step inside a read transaction that is already
// open never restarts), while writers go on: in WAL mode readers and the writer proceed
// together. Between steps the copy pauses as long as the step took, so it never takes more than
// half of the disk from the captures. The copy is written without fsync (it is a temporary
// file, read once), then switched to rollback journaling so the file is complete on its own.
func (s sqliteFile) snapshot(ctx context.Context, src *sql.DB, path string) (map[string]int64, error) {
	srcConn, err := src.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite backup: %w", err)
	}
	defer func() { _ = srcConn.Close() }()
	dst, err := openSQLite(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dst.Close() }()
	dstConn, err := dst.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite backup: %w", err)
	}
	if _, err := dstConn.ExecContext(ctx, "PRAGMA synchronous=OFF"); err != nil {
		return nil, fmt.Errorf("sqlite backup: %w", err)
	}
	// The read transaction that pins the snapshot.
	if _, err := srcConn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return nil, fmt.Errorf("sqlite backup: %w", err)
	}
	defer func() { _, _ = srcConn.ExecContext(context.Background(), "ROLLBACK") }()
	var tables int
	if err := srcConn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil {
		return nil, fmt.Errorf("sqlite backup: %w", err)
	}
	err = dstConn.Raw(func(d any) error {
		return srcConn.Raw(func(s any) error {
			dc, ok1 := d.(*sqlite3.SQLiteConn)
			sc, ok2 := s.(*sqlite3.SQLiteConn)
			if !ok1 || !ok2 {
				return errors.New("not a go-sqlite3 connection")
			}
			return copyDatabase(ctx, dc, sc)
		})
	})
	if err == nil {
		_, err = dstConn.ExecContext(ctx, "PRAGMA journal_mode=DELETE")
	}
	_ = dstConn.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite backup: %w", err)
	}
	return sqliteCounts(ctx, dst)
}

// stepPages is how many pages one backup step copies (4 MiB with the default page size).
const stepPages = 1024

// copyDatabase copies in steps, pausing after each as long as it took.
func copyDatabase(ctx context.Context, dst, src *sqlite3.SQLiteConn) error {
	bk, err := dst.Backup("main", src, "main")
	if err != nil {
		return err
	}
	for {
		t0 := time.Now()
		done, err := bk.Step(stepPages)
		if err != nil {
			_ = bk.Finish()
			return err
		}
		if done {
			return bk.Finish()
		}
		select {
		case <-ctx.Done():
			_ = bk.Finish()
			return ctx.Err()
		case <-time.After(pause * time.Since(t0)):
		}
	}
}

func openSQLite(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", "file:"+filepath.ToSlash(path)+"?_busy_timeout=10000")
	if err != nil {
		return nil, fmt.Errorf("sqlite open copy: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// sqliteCounts counts the rows of every table.
func sqliteCounts(ctx context.Context, db *sql.DB) (map[string]int64, error) {
	return countTables(ctx, db, "sqlite", "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
}

// querier is what countTables reads through: a database or a transaction on its snapshot.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// countTables lists the tables that list names (one column, the table name) and counts the
// rows of each; a failure while listing fails the whole count, so a manifest never holds a
// partial list of tables.
func countTables(ctx context.Context, q querier, engine, list string) (map[string]int64, error) {
	rows, err := q.QueryContext(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("%s backup: list tables: %w", engine, err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("%s backup: list tables: %w", engine, err)
		}
		tables = append(tables, name)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s backup: list tables: %w", engine, err)
	}
	counts := make(map[string]int64, len(tables))
	for _, t := range tables {
		var n int64
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM "`+t+`"`).Scan(&n); err != nil {
			return nil, fmt.Errorf("%s backup: count %s: %w", engine, t, err)
		}
		counts[t] = n
	}
	return counts, nil
}

// check opens the decrypted copy: PRAGMA integrity_check must say ok and every table of the
// manifest must hold its row count.
func (s sqliteFile) check(ctx context.Context, path string, m Manifest) error {
	db, err := openSQLite(path)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	var res string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("sqlite integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("sqlite integrity check: %s", res)
	}
	counts, err := sqliteCounts(ctx, db)
	if err != nil {
		return err
	}
	return compareCounts(m.Tables, counts)
}

// ErrInUse means another connection has the SQLite database open: a server still runs.
var ErrInUse = errors.New("the database is in use: stop every formward process using it (serve) before restoring")

// checkUnused takes, and gives back, an exclusive lock on the database: it fails while any
// other connection (of any process) has the database open, even idle, as a running server has.
func (s sqliteFile) checkUnused(ctx context.Context) error {
	if _, err := os.Stat(s.path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.ToSlash(s.path)+"?_busy_timeout=1000&_locking_mode=EXCLUSIVE")
	if err != nil {
		return fmt.Errorf("sqlite restore: %w", err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	busy := func(err error) error {
		var se sqlite3.Error
		if errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
			return fmt.Errorf("%w (%s)", ErrInUse, s.path)
		}
		return fmt.Errorf("sqlite restore: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return busy(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		return busy(err)
	}
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	return err
}

// restore puts the verified copy in place of the database file. The server must be stopped:
// the old WAL and shared-memory files are removed first (they belong to the old file), then
// the copy is renamed over the database, and the directory fsync'd.
func (s sqliteFile) restore(_ context.Context, path string) error {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(s.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sqlite restore: %w", err)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("sqlite restore: %w", err)
	}
	if err := os.Rename(path, s.path); err != nil {
		return fmt.Errorf("sqlite restore: %w", err)
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("sqlite restore: %w", err)
	}
	return nil
}

// workDir is the data dir, so the restored copy is renamed within one file system.
func (s sqliteFile) workDir() string { return filepath.Dir(s.path) }

func compareCounts(want, got map[string]int64) error {
	for table, n := range want {
		g, ok := got[table]
		if !ok {
			return fmt.Errorf("%w: table %s is missing", ErrCorrupt, table)
		}
		if g != n {
			return fmt.Errorf("%w: table %s holds %d rows, the manifest says %d", ErrCorrupt, table, g, n)
		}
	}
	return nil
}
