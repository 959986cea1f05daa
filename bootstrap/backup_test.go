package bootstrap

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/backup"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
)

func TestBackupCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if code, _, stderr := run(t, "keys", "create", "--init", "--name", "ci", "--scope", "admin", "--data-dir", dir, "--log-level", "error"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	code, stdout, stderr := run(t, "backup", "create", "--data-dir", dir, "--log-level", "error")
	if code != 0 {
		t.Fatalf("backup create: exit %d\n%s", code, stderr)
	}
	var m backup.Manifest
	if err := json.Unmarshal([]byte(stdout), &m); err != nil || !strings.HasPrefix(m.ID, "bkp_") || m.Tables["api_keys"] != 1 || m.Database != "sqlite" {
		t.Fatalf("backup create printed %s (%v)", stdout, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "backups", m.ID+".backup")); err != nil {
		t.Fatalf("backup not in <data dir>/backups: %v", err)
	}

	code, stdout, _ = run(t, "backup", "list", "--json", "--data-dir", dir, "--log-level", "error")
	if code != 0 || !strings.Contains(stdout, m.ID) {
		t.Fatalf("backup list: exit %d\n%s", code, stdout)
	}
	code, stdout, stderr = run(t, "backup", "verify", m.ID, "--data-dir", dir, "--log-level", "error")
	if code != 0 || !strings.Contains(stdout, "verified") {
		t.Fatalf("backup verify: exit %d\n%s%s", code, stdout, stderr)
	}

	// A key made after the backup is gone after the restore.
	if code, _, stderr := run(t, "keys", "create", "--name", "later", "--scope", "admin", "--data-dir", dir, "--log-level", "error"); code != 0 {
		t.Fatal(stderr)
	}
	code, _, stderr = run(t, "backup", "restore", m.ID, "--data-dir", dir, "--log-level", "error")
	if code == 0 || !strings.Contains(stderr, "--yes") {
		t.Fatalf("restore without --yes: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = run(t, "backup", "restore", m.ID, "--yes", "--data-dir", dir, "--log-level", "error")
	if code != 0 || !strings.Contains(stdout, `"restored": "`+m.ID+`"`) || !strings.Contains(stdout, `"submissions_deleted": 0`) {
		t.Fatalf("restore --yes: exit %d\n%s%s", code, stdout, stderr)
	}
	_, stdout, _ = run(t, "keys", "list", "--data-dir", dir, "--log-level", "error")
	if strings.Contains(stdout, "later") || !strings.Contains(stdout, "ci") {
		t.Fatalf("keys after restore:\n%s", stdout)
	}

	code, stdout, _ = run(t, "backup", "prune", "--data-dir", dir, "--log-level", "error")
	if code != 0 || !strings.Contains(stdout, `"deleted": []`) {
		t.Fatalf("prune: exit %d\n%s", code, stdout)
	}

	// One flipped byte: verify refuses it and says why.
	blob := filepath.Join(dir, "backups", m.ID+".backup")
	b, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(blob, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "backup", "verify", m.ID, "--data-dir", dir, "--log-level", "error")
	if code == 0 || !strings.Contains(stderr, "backup is corrupt") {
		t.Fatalf("verify of a corrupt backup: exit %d\n%s", code, stderr)
	}

	// A retention above 30 days is refused at start.
	code, _, stderr = run(t, "serve", "--backup-retention", "721h", "--data-dir", dir, "--log-level", "error")
	if code == 0 || !strings.Contains(stderr, "FORMWARD_BACKUP_RETENTION") {
		t.Fatalf("serve with a 721h retention: exit %d\n%s", code, stderr)
	}
}

// The scheduler takes a backup at once when there is none, and none while the newest is
// younger than the interval.
func TestScheduledBackups(t *testing.T) {
	dataDir := t.TempDir()
	db := persistencetest.SQLite(t, nil)
	cfg := Config{StorageConfig: StorageConfig{DataDir: dataDir}, BackupConfig: BackupConfig{BackupRetention: backup.MaxRetention}}
	rt := &Runtime{DB: db, Clock: system.Clock{}, Log: zap.NewNop(), Keyring: crypto.NewKeyring(crypto.GenerateMasterKey())}
	b, err := newBackups(context.Background(), cfg, rt.Keyring, rt.Clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { scheduleBackups(ctx, b, rt, time.Hour, zap.NewNop()); close(done) }()
	var n int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := b.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n = len(list); n > 0 {
			break
		}
	}
	cancel()
	<-done
	if n != 1 {
		t.Fatalf("%d backups after the first start", n)
	}
	// A restart finds a fresh backup and waits.
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() { scheduleBackups(ctx, b, rt, time.Hour, zap.NewNop()); close(done) }()
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-done
	if list, _ := b.List(context.Background()); len(list) != 1 {
		t.Fatalf("%d backups after a restart within the interval", len(list))
	}
}
