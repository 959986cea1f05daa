package filelock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence/filelock"
)

func TestTryLockIsExclusiveUntilUnlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, err := filelock.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Write([]byte("1234\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := filelock.TryLock(path); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("second TryLock: %v, want ErrLocked", err)
	}
	// The content stays readable by those who find it locked.
	if b, err := os.ReadFile(path); err != nil || string(b) != "1234\n" {
		t.Fatalf("content = %q, %v", b, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("lock file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	second, err := filelock.TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after Unlock: %v", err)
	}
	if err := second.Write([]byte("5")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "5" {
		t.Fatalf("Write left %q, want the old content replaced", b)
	}
	second.Unlock()
}

func TestLockGetsTheLockOnceFree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	held, err := filelock.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := filelock.Lock(context.Background(), path)
		if err == nil {
			defer l.Unlock()
		}
		got <- err
	}()
	held.Unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("Lock after the holder unlocked: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Lock still waiting 30s after the holder unlocked")
	}
}

func TestLockEndsWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	held, err := filelock.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := filelock.Lock(ctx, path)
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with an ended context: %v", err)
	}
	// The abandoned wait gives the lock back once it gets it.
	held.Unlock()
	l, err := filelock.Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
}
