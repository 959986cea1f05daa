// Package persistence is the gorm adapter that stores Formward's aggregates in SQLite (the
// embedded default) or PostgreSQL (scaled out), with one set of repositories and the same
// semantics on both: times are unix milliseconds UTC, submitted content is sealed with the
// workspace's data key, and submissions are captured through group commit.
package persistence

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/migrations"
)

// Dialect names.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// ErrClosed is returned by SubmissionRepository.Add after Close.
var ErrClosed = errors.New("persistence: database is closed")

// Config selects and tunes the database.
type Config struct {
	// DatabaseURL is a postgres:// or postgresql:// URL; empty means SQLite under DataDir.
	DatabaseURL string
	// DataDir holds formward.db when DatabaseURL is empty (default "data", created with mode 0700).
	DataDir string
	// MaxConns bounds the connection pool (default 16 on PostgreSQL, max(8, GOMAXPROCS) on SQLite).
	MaxConns int
	// GroupCommitMax is the most submissions written in one capture transaction (default 128).
	GroupCommitMax int
	// Committers is the number of capture transactions in flight on PostgreSQL (default 4);
	// SQLite has one writer, so always one.
	Committers int
}

// DB is an open database with its group committers.
type DB struct {
	gorm    *gorm.DB
	sqlDB   *sql.DB
	dialect string
	dataDir string // absolute; SQLite only

	// writeSlot serialises writers inside this process on SQLite, which has one writer at a
	// time anyway: waiting here is cheaper than sleeping in SQLite's busy handler. nil on PostgreSQL.
	writeSlot chan struct{}
	// writer is SQLite's one write connection (a pool of one): every write transaction runs on
	// it, so each statement is prepared once and kept, where a write on any of the read pool's
	// connections prepared the group commit's multi-row INSERTs again per connection (5% of
	// the server's CPU under make bench). nil on PostgreSQL, whose writes use the pool.
	writer    *gorm.DB
	writerSQL *sql.DB

	hotStmts   hotStatements
	committed  committedEvents // the committer's events for this process's relay (handoff.go)
	claimStmts sync.Map        // a claim's SQL text → its *sql.Stmt; see claimStmt
	fields     fieldsCache
	forms      formRows // SQLite: forms rows read, valid while form_epoch is unchanged (formcache.go)

	groupMax   int
	adds       chan *pendingAdd
	closeMu    sync.RWMutex
	closed     bool
	committers sync.WaitGroup

	writesFailing atomic.Bool // the last write met a storage failure; see unavailable.go

	batchObserver atomic.Pointer[func(size int)] // see ObserveGroupCommits
	groupCommits  atomic.Uint64                  // group commits of captures so far; see CaptureWrites

	tombstoned chan struct{} // see TombstonesRecorded

	checkpoints *checkpointer // SQLite's background checkpoints (see checkpoint.go); nil on PostgreSQL
}

// gormConfig is a new gorm configuration (gorm.Open keeps and fills the one it is given).
func gormConfig() *gorm.Config {
	return &gorm.Config{
		Logger:                 logger.Discard, // never log SQL: values may be secret
		SkipDefaultTransaction: true,
	}
}

// Open connects, configures durability and starts the group committers. It does not migrate.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	gcfg := gormConfig()
	var (
		dialector gorm.Dialector
		dialect   string
		dataDir   string
		maxConns  = cfg.MaxConns
	)
	switch {
	case strings.HasPrefix(cfg.DatabaseURL, "postgres://"), strings.HasPrefix(cfg.DatabaseURL, "postgresql://"):
		dsn, err := postgresDSN(cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		dialect = DialectPostgres
		// pgx caches prepared statements per connection itself; gorm's cache would only add a layer.
		dialector = postgres.New(postgres.Config{DSN: dsn})
		if maxConns <= 0 {
			maxConns = 16
		}
	case cfg.DatabaseURL == "":
		var err error
		if dataDir, err = absDataDir(cfg.DataDir); err != nil {
			return nil, err
		}
		dsn, err := sqliteDSN(dataDir)
		if err != nil {
			return nil, err
		}
		// Until the first connection is up (the ping below): see lockSetup.
		unlock, err := lockSetup(ctx, dataDir)
		if err != nil {
			return nil, fmt.Errorf("open sqlite database: %w", err)
		}
		defer unlock()
		dialect = DialectSQLite
		registerSQLiteDriver()
		dialector = sqlite.New(sqlite.Config{DriverName: sqliteDriver, DSN: dsn})
		gcfg.PrepareStmt = true
		if maxConns <= 0 {
			maxConns = max(8, runtime.GOMAXPROCS(0))
		}
	default:
		return nil, errors.New("persistence: database url must start with postgres:// or postgresql://")
	}

	g, err := gorm.Open(dialector, gcfg)
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	if err := markUnavailable(g); err != nil {
		return nil, err
	}
	sqlDB, err := g.DB()
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("connect to %s database: %w", dialect, err)
	}

	d := &DB{gorm: g, sqlDB: sqlDB, dialect: dialect, dataDir: dataDir, groupMax: cfg.GroupCommitMax, tombstoned: make(chan struct{}, 1)}
	if dialect == DialectSQLite {
		if d.writer, d.writerSQL, err = openWriter(ctx, dialector); err != nil {
			_ = sqlDB.Close()
			return nil, err
		}
	}
	if d.groupMax <= 0 {
		d.groupMax = 128
	}
	committers := 1
	if dialect == DialectSQLite {
		d.writeSlot = make(chan struct{}, 1)
		d.checkpoints = newCheckpointer()
		go d.checkpoints.loop(d)
	} else {
		committers = cfg.Committers
		if committers <= 0 {
			committers = 4
		}
	}
	d.adds = make(chan *pendingAdd, d.groupMax*committers*2)
	for shard := range committers {
		d.committers.Add(1)
		go d.commitLoop(shard)
	}
	return d, nil
}

// postgresDSN forces synchronous_commit=on, so an acknowledged commit is on disk.
func postgresDSN(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("persistence: database url is not a valid URL")
	}
	q := u.Query()
	q.Set("synchronous_commit", "on")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// sqliteDSN creates the data dir (0700) and the database file (0600) and returns a DSN with
// WAL, synchronous=FULL (every acknowledged commit survives power loss), foreign keys, a busy
// timeout, and BEGIN IMMEDIATE so write transactions take the lock up front.
func sqliteDSN(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, SQLiteFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("create database file: %w", err)
	}
	_ = f.Close()
	escaped := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	return "file:" + escaped +
		"?_busy_timeout=10000" +
		"&_journal_mode=WAL" +
		"&_synchronous=FULL" +
		"&_foreign_keys=on" +
		"&_txlock=immediate", nil
}

// Dialect returns "sqlite" or "postgres".
func (d *DB) Dialect() string { return d.dialect }

// SQL returns the underlying pool, for health checks and tests.
func (d *DB) SQL() *sql.DB { return d.sqlDB }

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.sqlDB.PingContext(ctx) }

// Close waits for the committers to write everything already queued, then closes the pool.
func (d *DB) Close() error {
	d.closeMu.Lock()
	if d.closed {
		d.closeMu.Unlock()
		return nil
	}
	d.closed = true
	close(d.adds)
	d.closeMu.Unlock()
	d.committers.Wait()
	if d.checkpoints != nil {
		d.checkpoints.close()
	}
	d.closeHot()
	d.claimStmts.Range(func(k, st any) bool {
		_ = st.(*sql.Stmt).Close()
		d.claimStmts.Delete(k)
		return true
	})
	if d.writerSQL != nil {
		_ = d.writerSQL.Close()
	}
	return d.sqlDB.Close()
}

// openWriter opens SQLite's write connection: a second pool, of one connection, on the same
// file with the same settings.
func openWriter(ctx context.Context, dialector gorm.Dialector) (*gorm.DB, *sql.DB, error) {
	wcfg := gormConfig()
	wcfg.PrepareStmt = true
	w, err := gorm.Open(dialector, wcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open sqlite write connection: %w", err)
	}
	if err := markUnavailable(w); err != nil {
		return nil, nil, err
	}
	wsql, err := w.DB()
	if err != nil {
		return nil, nil, fmt.Errorf("open sqlite write connection: %w", err)
	}
	wsql.SetMaxOpenConns(1)
	wsql.SetMaxIdleConns(1)
	if err := wsql.PingContext(ctx); err != nil {
		_ = wsql.Close()
		return nil, nil, fmt.Errorf("connect to sqlite database: %w", err)
	}
	return w, wsql, nil
}

// writeDB is where writes run: SQLite's write connection, or PostgreSQL's pool.
func (d *DB) writeDB() *gorm.DB {
	if d.writer != nil {
		return d.writer
	}
	return d.gorm
}

// Migrate applies the embedded migrations of the dialect. Concurrent starts are safe: one
// process migrates, the others wait and find nothing to do. The lock is a session advisory
// lock on PostgreSQL, and a file lock in the data dir on SQLite.
func (d *DB) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations.FS, d.dialect)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	var opts []goose.ProviderOption
	gooseDialect := goose.DialectSQLite3
	if d.dialect == DialectPostgres {
		gooseDialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 600))
		if err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	} else {
		unlock, err := lockSetup(ctx, d.dataDir)
		if err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		defer unlock()
		release, err := d.acquireWrite(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	// The provider is not closed: Close would close our pool.
	p, err := goose.NewProvider(gooseDialect, d.sqlDB, sub, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// acquireWrite takes this process's write slot on SQLite; a no-op on PostgreSQL.
func (d *DB) acquireWrite(ctx context.Context) (release func(), err error) {
	if d.writeSlot == nil {
		return func() {}, nil
	}
	select {
	case d.writeSlot <- struct{}{}:
		return func() {
			<-d.writeSlot
			d.checkpoints.noteWrite()
		}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// write runs one or more statements outside a transaction, as a writer.
func (d *DB) write(ctx context.Context, fn func(db *gorm.DB) error) error {
	release, err := d.acquireWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	return d.noteWrite(unavailable(fn(d.writeDB().WithContext(ctx))))
}

// insert stores row in a write of its own; a duplicate key gives domain.ErrConflict and a
// reference to a missing row domain.ErrNotFound (see mapErr), both as what.
func (d *DB) insert(ctx context.Context, what string, row any) error {
	return d.write(ctx, func(db *gorm.DB) error {
		return mapErr(what, db.Create(row).Error)
	})
}

// insertWithAudit inserts row with the audit events: in one transaction when there are events,
// as insert does otherwise.
func (d *DB) insertWithAudit(ctx context.Context, what string, row any, events []audit.Event) error {
	if len(events) == 0 {
		return d.insert(ctx, what, row)
	}
	return d.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(row).Error; err != nil {
			return mapErr(what, err)
		}
		return writeAudit(tx, events)
	})
}

// deleteWithAudit runs one DELETE of a single row of the workspace (domain.ErrNotFound when it
// removes none) and writes the audit events, in one transaction.
func (d *DB) deleteWithAudit(ctx context.Context, what, query, workspaceID, id string, events []audit.Event) error {
	return d.tx(ctx, func(tx *gorm.DB) error {
		if err := changedRow(what, tx.Exec(query, workspaceID, id)); err != nil {
			return err
		}
		return writeAudit(tx, events)
	})
}

// execCount runs one statement in a write of its own and returns how many rows it changed; a
// failure is mapped as what (see mapErr).
func (d *DB) execCount(ctx context.Context, what, query string, args ...any) (int64, error) {
	var n int64
	err := d.write(ctx, func(db *gorm.DB) error {
		res := db.Exec(query, args...)
		n = res.RowsAffected
		return mapErr(what, res.Error)
	})
	return n, err
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE on SQLite).
func (d *DB) tx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	release, err := d.acquireWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	return d.inTx(ctx, d.writeDB(), fn)
}

func (d *DB) inTx(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) error {
	wrote := new(atomic.Bool)
	err := d.noteWrite(unavailable(db.WithContext(context.WithValue(ctx, tombstonesWritten{}, wrote)).Transaction(fn)))
	if err == nil && wrote.Load() {
		d.noteTombstones()
	}
	return err
}

// redoableTx is tx for work that nobody waits on and that is simply done again if a crash
// loses it (the retention job's deletions: the next pass finds the same expired rows). Its
// commit does not wait for the disk: synchronous=NORMAL on SQLite's connection for the
// transaction, synchronous_commit off on PostgreSQL. Both logs are written in order, so the
// next durable commit (any capture) makes it durable too, and a crash can lose it only with
// nothing acknowledged after it; the tombstones it writes go or stay with it. The capture
// path's commits keep waiting for the disk.
//
// On SQLite the connection also leaves foreign keys unenforced for the transaction: running
// a cascade's program once per deleted row was half of what a retention batch cost, so fn
// deletes the dependent rows itself, one statement per table for the whole batch. Once the
// write slot is taken, the transaction's statements no longer follow ctx's cancellation: the
// go-sqlite3 driver runs every statement, and every row it returns, of a cancellable context
// on a goroutine of its own, and while the capture path kept both cores busy a trace showed
// the batch's 37,000 such goroutines in 3 s waiting about 300 ms to be scheduled, all while
// holding the writer. A batch is bounded (milliseconds of work) and a cancelled ctx is
// checked before it starts.
func (d *DB) redoableTx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	if d.dialect == DialectPostgres {
		return d.tx(ctx, func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL synchronous_commit = off").Error; err != nil {
				return mapErr("relax commit", err)
			}
			return fn(tx)
		})
	}
	return d.gorm.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		defer func() {
			if conn.Exec("PRAGMA synchronous = FULL").Error != nil || conn.Exec("PRAGMA foreign_keys = ON").Error != nil {
				// Never hand a relaxed connection back to the pool: close it instead.
				if c, ok := conn.Statement.ConnPool.(*sql.Conn); ok {
					_ = c.Raw(func(any) error { return driver.ErrBadConn })
				}
			}
		}()
		if err := conn.Exec("PRAGMA synchronous = NORMAL").Error; err != nil {
			return unavailable(mapErr("relax commit", err))
		}
		if err := conn.Exec("PRAGMA foreign_keys = OFF").Error; err != nil {
			return unavailable(mapErr("relax foreign keys", err))
		}
		// The write slot only now: setting the connection up, and back, needs no writer.
		release, err := d.acquireWrite(ctx)
		if err != nil {
			return err
		}
		defer release()
		if err := ctx.Err(); err != nil {
			return err
		}
		return d.inTx(context.WithoutCancel(ctx), conn, fn)
	})
}

// read returns a session for queries.
func (d *DB) read(ctx context.Context) *gorm.DB { return d.gorm.WithContext(ctx) }
