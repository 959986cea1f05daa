// Package filelock takes exclusive locks on files between processes: advisory locks held by an
// open file (flock on Unix, LockFileEx on Windows) that the system releases when the file is
// closed or the process ends, however it ends, so a crash never leaves a stale lock behind.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// ErrLocked means another open file holds the lock: another process, or another Lock of this
// one (locks belong to open files, not to processes).
var ErrLocked = errors.New("filelock: locked by another process")

// File is an open lock file whose lock is held until Unlock.
type File struct{ f *os.File }

// TryLock opens path (creating it with mode 0600) and takes its lock, or returns ErrLocked at
// once when it is held.
func TryLock(path string) (*File, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	if err := lock(f, false); err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f}, nil
}

// Lock opens path (creating it with mode 0600) and takes its lock, waiting while another holds
// it, until ctx ends.
func Lock(ctx context.Context, path string) (*File, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	locked := make(chan error, 1)
	go func() { locked <- lock(f, true) }()
	select {
	case err := <-locked:
		if err != nil {
			f.Close()
			return nil, err
		}
		return &File{f: f}, nil
	case <-ctx.Done():
		// The wait cannot be interrupted: give the lock back as soon as it comes.
		go func() {
			<-locked
			f.Close()
		}()
		return nil, ctx.Err()
	}
}

func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("filelock: open %s: %w", path, err)
	}
	return f, nil
}

// Write replaces the file's content, e.g. with the PID of the holder, for whoever finds it
// locked. The lock does not cover the content: readers need no lock.
func (l *File) Write(content []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("filelock: %w", err)
	}
	if _, err := l.f.WriteAt(content, 0); err != nil {
		return fmt.Errorf("filelock: %w", err)
	}
	return nil
}

// Unlock releases the lock and closes the file.
func (l *File) Unlock() error {
	return l.f.Close()
}
