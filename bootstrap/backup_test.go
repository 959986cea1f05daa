package bootstrap

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/formward/formward/adapters/backup"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/persistence"
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

// fixedClock is a clock the test sets.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

// fakeWaits stands in for the scheduler's timer: each wait is reported on asked, and returns
// what the test sends on release (true: the time passed), or false when the context ends.
type fakeWaits struct {
	asked   chan time.Duration
	release chan bool
}

func newFakeWaits() fakeWaits {
	return fakeWaits{asked: make(chan time.Duration), release: make(chan bool)}
}

func (f fakeWaits) wait(ctx context.Context, d time.Duration) bool {
	select {
	case f.asked <- d:
	case <-ctx.Done():
		return false
	}
	select {
	case ok := <-f.release:
		return ok
	case <-ctx.Done():
		return false
	}
}

// next returns the wait the scheduler asks for next.
func (f fakeWaits) next(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-f.asked:
		return d
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduler asked for no wait within 30s")
		return 0
	}
}

// runSchedule runs s in the background; the returned stop ends it and waits for it.
func runSchedule(s backupSchedule) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.run(ctx); close(done) }()
	return func() {
		cancel()
		<-done
	}
}

// The scheduler takes a backup at once when there is none, then waits the interval; after a
// restart it waits what is left of the interval since the newest backup.
func TestScheduledBackups(t *testing.T) {
	db := persistencetest.SQLite(t, nil)
	clock := &fixedClock{now: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)}
	cfg := Config{StorageConfig: StorageConfig{DataDir: t.TempDir()}, BackupConfig: BackupConfig{BackupRetention: backup.MaxRetention}}
	b, err := newBackups(context.Background(), cfg, crypto.NewKeyring(crypto.GenerateMasterKey()), clock)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	waits := newFakeWaits()
	sched := backupSchedule{backups: b, db: db, lease: persistence.NewBackupLease(db), clock: clock, interval: time.Hour,
		log: zap.NewNop(), observe: m.ObserveBackup, wait: waits.wait}

	stop := runSchedule(sched)
	if d := waits.next(t); d != 0 {
		t.Fatalf("first wait without any backup = %s, want 0", d)
	}
	waits.release <- true
	if d := waits.next(t); d != time.Hour {
		t.Fatalf("wait after a backup = %s, want the interval", d)
	}
	stop()
	list, err := b.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("%d backups after the first start (%v), want 1", len(list), err)
	}
	if ok, failed := backupCounts(t, m); ok != 1 || failed != 0 {
		t.Fatalf("formward_backups_total ok=%v error=%v, want 1 and 0", ok, failed)
	}

	// A restart 20 minutes later finds the fresh backup and waits the 40 minutes left.
	clock.now = clock.now.Add(20 * time.Minute)
	stop = runSchedule(sched)
	if d := waits.next(t); d != 40*time.Minute {
		t.Fatalf("wait after a restart within the interval = %s, want 40m", d)
	}
	stop()
	if list, _ := b.List(context.Background()); len(list) != 1 {
		t.Fatalf("%d backups after a restart within the interval", len(list))
	}
}

func backupCounts(t *testing.T, m *metrics.Metrics) (ok, failed float64) {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "formward_backups_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == metrics.OutcomeBackupOK {
					ok = s.GetCounter().GetValue()
				}
				if l.GetName() == "outcome" && l.GetValue() == metrics.OutcomeBackupError {
					failed = s.GetCounter().GetValue()
				}
			}
		}
		return ok, failed
	}
	t.Fatal("formward_backups_total is not registered")
	return 0, 0
}

// postgresRuntime is serve's runtime as far as backups need it, on a fresh PostgreSQL database.
func postgresRuntime(t *testing.T) (Config, *Runtime) {
	t.Helper()
	url := persistencetest.PostgresURL(t)
	ctx := context.Background()
	db, err := persistence.Open(ctx, persistence.Config{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := Config{StorageConfig: StorageConfig{DataDir: t.TempDir(), DatabaseURL: url},
		BackupConfig: BackupConfig{BackupRetention: backup.MaxRetention, PGDump: "/nonexistent/pg_dump", PGRestore: "/nonexistent/pg_restore"}}
	rt := &Runtime{DB: db, Clock: system.Clock{}, Log: zap.NewNop(), Keyring: crypto.NewKeyring(crypto.GenerateMasterKey()), Metrics: metrics.New()}
	return cfg, rt
}

// serve on PostgreSQL starts without the PostgreSQL client tools (the distroless image has
// none): they are looked up when a backup runs, never at start.
func TestServeStartsWithoutPostgresClientTools(t *testing.T) {
	cfg, rt := postgresRuntime(t)
	for _, interval := range []time.Duration{0, 24 * time.Hour} {
		cfg.BackupInterval = interval
		stop, err := startBackups(context.Background(), cfg, rt)
		if err != nil {
			t.Fatalf("backups with interval %s and no pg_dump: %v", interval, err)
		}
		stop()
	}
	// A backup asked for by hand says which tool is missing and which setting names it.
	b, err := newBackups(context.Background(), cfg, rt.Keyring, rt.Clock)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Create(context.Background(), rt.DB)
	if err == nil || !strings.Contains(err.Error(), "pg_dump not found") || !strings.Contains(err.Error(), "FORMWARD_PG_DUMP") {
		t.Fatalf("backup without pg_dump: %v, want the missing tool and FORMWARD_PG_DUMP named", err)
	}
}

// A scheduled backup that cannot run (no pg_dump) is logged with the reason, counted as
// formward_backups_total{outcome="error"} and retried after min(interval, 10m).
func TestScheduledBackupWithoutPgDumpIsCountedAndRetried(t *testing.T) {
	cfg, rt := postgresRuntime(t)
	b, err := newBackups(context.Background(), cfg, rt.Keyring, rt.Clock)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.ErrorLevel)
	waits := newFakeWaits()
	sched := backupSchedule{backups: b, db: rt.DB, lease: persistence.NewBackupLease(rt.DB), clock: rt.Clock, interval: 24 * time.Hour,
		log: zap.New(core), observe: rt.Metrics.ObserveBackup, wait: waits.wait}
	stop := runSchedule(sched)
	defer stop()
	if d := waits.next(t); d != 0 {
		t.Fatalf("first wait = %s, want 0", d)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		waits.release <- true
		if d := waits.next(t); d != backupRetryMax {
			t.Fatalf("wait after failed attempt %d = %s, want %s", attempt, d, backupRetryMax)
		}
		if ok, failed := backupCounts(t, rt.Metrics); ok != 0 || failed != float64(attempt) {
			t.Fatalf("after %d failed attempts: formward_backups_total ok=%v error=%v", attempt, ok, failed)
		}
	}
	entries := logs.FilterMessage("scheduled backup failed").All()
	if len(entries) != 2 {
		t.Fatalf("%d failures logged, want 2", len(entries))
	}
	if reason := entries[0].ContextMap()["error"]; !strings.Contains(fmt.Sprint(reason), "FORMWARD_PG_DUMP") {
		t.Fatalf("logged reason %q does not name FORMWARD_PG_DUMP", reason)
	}
}

// The rotation of docs/configuration.md keeps the old master key in
// FORMWARD_PREVIOUS_MASTER_KEYS for as long as backups are kept: a backup taken before the
// rotation is restored with the new key and the old one among the previous keys, and what it
// holds reads again; with the new key alone the restore is refused, naming the old key's ID.
func TestRestoreAfterMasterKeyRotation(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			oldKey, newKey := crypto.GenerateMasterKey(), crypto.GenerateMasterKey()
			where := []string{"--data-dir", filepath.Join(t.TempDir(), "data"), "--log-level", "error"}
			if dialect == "postgres" {
				where = append(where, "--database-url", persistencetest.PostgresURL(t))
			}
			cmd := func(args ...string) (int, string, string) {
				t.Helper()
				return run(t, append(args, where...)...)
			}
			if code, _, stderr := cmd("keys", "create", "--init", "--name", "ci", "--scope", "admin", "--master-key", oldKey.Base64()); code != 0 {
				t.Fatalf("init: %s", stderr)
			}
			// One workspace data key, wrapped under the old master key, and a value sealed with it.
			open := func(keys ...string) (*Runtime, func()) {
				t.Helper()
				args := append([]string{"--master-key", keys[0]}, where...)
				if len(keys) > 1 {
					args = append(args, "--previous-master-keys", keys[1])
				}
				rt, cleanup, err := newRuntime(ctx, testConfig(t, args...), zap.NewNop())
				if err != nil {
					t.Fatal(err)
				}
				return rt, cleanup
			}
			rt, cleanup := open(oldKey.Base64())
			ws, err := rt.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sealed, err := crypto.NewCipher(rt.Keyring, rt.DataKeys, system.NewIDs(), rt.Clock).Seal(ctx, ws.ID(), []byte("before the rotation"), nil)
			cleanup()
			if err != nil {
				t.Fatal(err)
			}

			code, stdout, stderr := cmd("backup", "create", "--master-key", oldKey.Base64())
			if code != 0 {
				t.Fatalf("backup create: %s", stderr)
			}
			var m backup.Manifest
			if err := json.Unmarshal([]byte(stdout), &m); err != nil || m.MasterKeyID != oldKey.ID() {
				t.Fatalf("backup create printed %s (%v)", stdout, err)
			}
			code, stdout, stderr = cmd("keys", "rotate-master", "--master-key", newKey.Base64(), "--previous-master-keys", oldKey.Base64())
			if code != 0 || !strings.Contains(stdout, "re-wrapped 1 data keys") {
				t.Fatalf("rotate-master: exit %d\n%s%s", code, stdout, stderr)
			}

			code, _, stderr = cmd("backup", "restore", m.ID, "--yes", "--master-key", newKey.Base64())
			if code == 0 || !strings.Contains(stderr, oldKey.ID()) {
				t.Fatalf("restore with the new key alone: exit %d, want a refusal naming key %s\n%s", code, oldKey.ID(), stderr)
			}
			code, stdout, stderr = cmd("backup", "restore", m.ID, "--yes", "--master-key", newKey.Base64(), "--previous-master-keys", oldKey.Base64())
			if code != 0 || !strings.Contains(stdout, `"restored": "`+m.ID+`"`) {
				t.Fatalf("restore with the old key among the previous ones: exit %d\n%s%s", code, stdout, stderr)
			}

			// The restored data key is wrapped under the old key again: it opens with both keys.
			rt, cleanup = open(newKey.Base64(), oldKey.Base64())
			defer cleanup()
			plain, err := crypto.NewCipher(rt.Keyring, rt.DataKeys, system.NewIDs(), rt.Clock).Open(ctx, ws.ID(), sealed, nil)
			if err != nil || string(plain) != "before the rotation" {
				t.Fatalf("after the restore: %q, %v", plain, err)
			}
		})
	}
}
