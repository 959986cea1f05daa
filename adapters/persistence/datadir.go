package persistence

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/formward/formward/adapters/persistence/filelock"
)

// SQLiteFile is the name of the embedded database inside the data dir.
const SQLiteFile = "formward.db"

// Lock files in the data dir (embedded mode). They are never deleted: a lock belongs to an
// open file, and the system releases it when its process ends, however it ends.
const (
	// ServeLockFile is held by the one `formward serve` of a SQLite data dir; it holds its PID.
	ServeLockFile = "serve.lock"
	// setupLockFile is held while a process opens the SQLite database and while it migrates it.
	setupLockFile = "setup.lock"
)

// DataDirInUseError means another `formward serve` holds the data dir.
type DataDirInUseError struct {
	Dir string
	// PID is the holder's process ID as it wrote it, 0 when unknown.
	PID int
}

func (e *DataDirInUseError) Error() string {
	holder := "another formward serve"
	if e.PID > 0 {
		holder += " (PID " + strconv.Itoa(e.PID) + ")"
	}
	return fmt.Sprintf("data dir %s is in use by %s: one SQLite data dir has one server; stop that one, or give this one another data dir", e.Dir, holder)
}

// LockServe takes the serve lock of a SQLite data dir (creating the dir with mode 0700) and
// writes this process's PID into it, or fails at once with *DataDirInUseError when another
// serve holds it. Two servers on one SQLite file would each run the event pipeline and the
// scheduled jobs. Management commands do not take it: they share the database with the
// server as SQLite allows. release gives the lock back.
func LockServe(dataDir string) (release func(), err error) {
	dir, err := absDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, ServeLockFile)
	l, err := filelock.TryLock(path)
	if errors.Is(err, filelock.ErrLocked) {
		return nil, &DataDirInUseError{Dir: dir, PID: holderPID(path)}
	}
	if err != nil {
		return nil, err
	}
	if err := l.Write([]byte(strconv.Itoa(os.Getpid()) + "\n")); err != nil {
		l.Unlock()
		return nil, err
	}
	return func() { _ = l.Unlock() }, nil
}

// holderPID reads the PID the holder of a serve lock wrote. A holder writes it just after it
// took the lock, so an empty file is read again for a moment.
func holderPID(path string) int {
	for range 20 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			pid, _ := strconv.Atoi(s)
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// lockSetup waits for the setup lock of a SQLite data dir. Processes started together take
// turns with it at the two steps they cannot take at once: the first connection, which
// switches a new database file to WAL (two switches at once fail with "database is locked",
// whatever the busy timeout), and the migrations (run at once, each would see the other's half
// applied).
func lockSetup(ctx context.Context, dir string) (release func(), err error) {
	l, err := filelock.Lock(ctx, filepath.Join(dir, setupLockFile))
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", setupLockFile, err)
	}
	return func() { _ = l.Unlock() }, nil
}

// absDataDir is the data dir as an absolute path ("data" when empty).
func absDataDir(dataDir string) (string, error) {
	if dataDir == "" {
		dataDir = "data"
	}
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	return dir, nil
}
