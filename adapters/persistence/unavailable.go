package persistence

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"github.com/formward/formward/domain"
)

// unavailable marks err as domain.ErrUnavailable when it says the database cannot take writes
// right now (disk full, read-only, I/O error, server unreachable or shutting down), so the
// caller answers "try again shortly" instead of a bare failure. Other errors come back as they
// were. The driver error stays reachable with errors.As.
func unavailable(err error) error {
	if err == nil || errors.Is(err, domain.ErrUnavailable) || !storageDown(err) {
		return err
	}
	return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
}

// storageDown recognises the driver errors that mean the storage itself is failing.
func storageDown(err error) bool {
	var sqErr sqlite3.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code {
		case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrReadonly, sqlite3.ErrCantOpen, sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
			return true
		}
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			strings.HasPrefix(pgErr.Code, "53"),                                 // insufficient resources: disk full, out of memory, too many connections
			strings.HasPrefix(pgErr.Code, "58"),                                 // system error: I/O error
			pgErr.Code == "25006",                                               // read-only SQL transaction (a standby, or a read-only database)
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutting down, starting up
			return true
		}
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller gave up; that says nothing about the storage
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EIO), errors.Is(err, syscall.EDQUOT):
		return true
	}
	return false
}

// noteWrite remembers whether the last write met a storage failure (a success clears it), so
// readiness sees a failure whichever adapter met it first, and passes err through.
func (d *DB) noteWrite(err error) error {
	switch {
	case err == nil:
		d.writesFailing.Store(false)
	case errors.Is(err, domain.ErrUnavailable):
		d.writesFailing.Store(true)
	}
	return err
}

// WritesFailing reports whether the last write met a storage failure and none succeeded since.
func (d *DB) WritesFailing() bool { return d.writesFailing.Load() }

// markUnavailable runs after every gorm statement, so a storage failure is ErrUnavailable
// whichever repository met it.
func markUnavailable(g *gorm.DB) error {
	mark := func(db *gorm.DB) {
		if db.Error != nil {
			db.Error = unavailable(db.Error)
		}
	}
	cb := g.Callback()
	for _, err := range []error{
		cb.Create().After("*").Register("formward:unavailable", mark),
		cb.Query().After("*").Register("formward:unavailable", mark),
		cb.Update().After("*").Register("formward:unavailable", mark),
		cb.Delete().After("*").Register("formward:unavailable", mark),
		cb.Row().After("*").Register("formward:unavailable", mark),
		cb.Raw().After("*").Register("formward:unavailable", mark),
	} {
		if err != nil {
			return fmt.Errorf("register storage error callback: %w", err)
		}
	}
	return nil
}

// ProbeWrite makes one small write (the migration table's latest row rewritten unchanged) so
// readiness can tell when the database takes writes again after a failure. SQLite may fit such
// a write into space its journal already holds, so there the probe also writes and syncs a
// 64 KiB file beside the database: a full disk fails it.
func (d *DB) ProbeWrite(ctx context.Context) error {
	err := d.tx(ctx, func(tx *gorm.DB) error {
		return tx.Exec("UPDATE goose_db_version SET tstamp = tstamp WHERE id = (SELECT MAX(id) FROM goose_db_version)").Error
	})
	if err == nil && d.dialect == DialectSQLite {
		err = d.probeDisk(ctx)
	}
	if err != nil {
		return d.noteWrite(fmt.Errorf("probe write: %w", unavailableOrDown(err)))
	}
	return nil
}

func (d *DB) probeDisk(ctx context.Context) error {
	var file string
	if err := d.sqlDB.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		return fmt.Errorf("locate the database file: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(file), ".probe-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, err = f.Write(make([]byte, 64<<10))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unavailableOrDown is unavailable for the probe: any failure of the probe write means the
// database does not take writes.
func unavailableOrDown(err error) error {
	if errors.Is(err, domain.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
}
