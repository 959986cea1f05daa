package persistence_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
)

// writeWorkspace stores one new workspace and returns the error.
func writeWorkspace(t *testing.T, db *persistence.DB) error {
	t.Helper()
	w, err := workspace.New(newID("ws"), "Acme", workspace.PlanBusiness, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return persistence.NewWorkspaceRepository(db).Create(context.Background(), w)
}

// A PostgreSQL that does not take writes (here a read-only session, as on a standby or a
// database set read-only when its disk filled) gives domain.ErrUnavailable, and so does the
// readiness probe; a writable one passes it.
func TestReadOnlyPostgresIsUnavailable(t *testing.T) {
	ctx := context.Background()
	url := persistencetest.PostgresURL(t)
	rw, err := persistence.Open(ctx, persistence.Config{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if err := rw.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	noErr(t, rw.ProbeWrite(ctx))
	noErr(t, writeWorkspace(t, rw))

	ro, err := persistence.Open(ctx, persistence.Config{DatabaseURL: url + "&options=-cdefault_transaction_read_only%3Don"})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := writeWorkspace(t, ro); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("write to a read-only database: %v, want ErrUnavailable", err)
	}
	if !ro.WritesFailing() || rw.WritesFailing() {
		t.Fatalf("WritesFailing: read-only %v, writable %v", ro.WritesFailing(), rw.WritesFailing())
	}
	if err := ro.ProbeWrite(ctx); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("probe of a read-only database: %v, want ErrUnavailable", err)
	}
	// A constraint violation is still a conflict, not an outage.
	w, _ := workspace.New(newID("ws"), "Acme", workspace.PlanBusiness, time.Now())
	repo := persistence.NewWorkspaceRepository(rw)
	noErr(t, repo.Create(ctx, w))
	if err := repo.Create(ctx, w); errors.Is(err, domain.ErrUnavailable) || !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("duplicate workspace: %v, want ErrConflict only", err)
	}
}

// A full disk under SQLite gives domain.ErrUnavailable on writes and on the readiness probe,
// and both succeed again once space is freed. Needs root for the small tmpfs.
func TestFullDiskSQLiteIsUnavailable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs and fill it")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	ctx := context.Background()
	db, err := persistence.Open(ctx, persistence.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	noErr(t, writeWorkspace(t, db))

	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for block := make([]byte, 64<<10); ; {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	_ = f.Close()
	// The first writes may still fit where the write-ahead log already had its blocks (it
	// starts over once checkpointed); the first that needs space must fail, and as unavailable.
	for i := 0; ; i++ {
		err := writeWorkspace(t, db)
		if errors.Is(err, domain.ErrUnavailable) {
			break
		}
		if err != nil || i == 1000 {
			t.Fatalf("write %d on a full disk: %v, want ErrUnavailable", i, err)
		}
	}
	if !db.WritesFailing() {
		t.Fatal("WritesFailing is false after a failed write")
	}
	if err := db.ProbeWrite(ctx); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("probe on a full disk: %v, want ErrUnavailable", err)
	}
	noErr(t, os.Remove(filler))
	noErr(t, db.ProbeWrite(ctx))
	if db.WritesFailing() {
		t.Fatal("WritesFailing is still true after a successful probe")
	}
	noErr(t, writeWorkspace(t, db))
}
