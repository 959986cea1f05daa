package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/backup"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

// TestRestoreBringsBackEverythingButTheDeleted backs up, deletes in every way a deletion
// happens (the API use cases, a whole form, a retention-style deletion and a workspace's data
// recorded through the tombstone API), restores, and checks that none of the deleted comes
// back while everything else does.
func TestRestoreBringsBackEverythingButTheDeleted(t *testing.T) {
	dialects(t, func(t *testing.T, cfg persistence.Config) {
		ctx := context.Background()
		a := openApp(t, cfg)
		ws, ws2 := a.workspace(t), a.workspace(t)
		f1, f2, f3 := a.form(t, ws), a.form(t, ws), a.form(t, ws2)
		var s1, s2, s3 []string
		for i := range 6 {
			s1 = append(s1, a.mustSubmit(t, f1, label(i)))
		}
		for i := range 3 {
			s2 = append(s2, a.mustSubmit(t, f2, label(i)))
		}
		for i := range 2 {
			s3 = append(s3, a.mustSubmit(t, f3, label(i)))
		}
		b, _, _ := localBackups(t, cfg, system.Clock{})
		m, err := b.Create(ctx, a.db)
		noErr(t, err)
		if m.Tables["submissions"] != 11 || m.Tables["forms"] != 3 || m.Database != map[bool]string{true: "sqlite", false: "postgres"}[cfg.DatabaseURL == ""] {
			t.Fatalf("manifest %+v", m)
		}
		_, err = b.Verify(ctx, m.ID)
		noErr(t, err)

		// Deleted through the API use cases, then copied to the log.
		noErr(t, a.deleteSub.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws)), capture.DeleteSubmission{FormID: f1.ID(), ID: s1[0]}))
		noErr(t, a.deleteSub.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws)), capture.DeleteSubmission{FormID: f1.ID(), ID: s1[1]}))
		n, err := b.ShipTombstones(ctx, a.db)
		noErr(t, err)
		if n != 2 {
			t.Fatalf("shipped %d tombstones", n)
		}
		// A whole form, and a retention-style deletion and a workspace's data, recorded through
		// the tombstone API: these stay in the database until the restore copies them.
		noErr(t, a.deleteForm.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws)), forms.DeleteForm{ID: f2.ID()}))
		_, err = a.db.SQL().ExecContext(ctx, sqlText(cfg, "DELETE FROM submissions WHERE id = ?"), s1[2])
		noErr(t, err)
		_, err = a.db.SQL().ExecContext(ctx, sqlText(cfg, "DELETE FROM forms WHERE workspace_id = ?"), ws2)
		noErr(t, err)
		noErr(t, persistence.NewTombstoneRepository(a.db).Record(ctx, []ports.Tombstone{
			{Kind: ports.TombstoneSubmission, ID: s1[2], WorkspaceID: ws},
			{Kind: ports.TombstoneWorkspace, ID: ws2, WorkspaceID: ws2},
		}))
		after := a.mustSubmit(t, f1, "after the backup")
		a.close(t)

		res, err := b.Restore(ctx, m.ID)
		noErr(t, err)
		if len(res.Warnings) != 0 {
			t.Fatalf("warnings: %v", res.Warnings)
		}
		if res.TombstonesShipped != 6 {
			t.Fatalf("shipped before restore: %d, want 6 (3 submissions and the form, retention, workspace)", res.TombstonesShipped)
		}
		if want := (ports.TombstoneCounts{Submissions: 6, Forms: 1, Workspaces: 1}); res.Reapplied != want {
			t.Fatalf("re-applied %+v, want %+v", res.Reapplied, want)
		}

		a = openApp(t, cfg)
		defer a.close(t)
		for _, id := range []string{s1[0], s1[1], s1[2], after} {
			if a.hasSubmission(t, ws, f1.ID(), id) {
				t.Errorf("submission %s is back", id)
			}
		}
		for _, id := range s1[3:] {
			if !a.hasSubmission(t, ws, f1.ID(), id) {
				t.Errorf("submission %s was lost", id)
			}
		}
		if a.hasForm(t, ws, f2.ID()) || a.hasForm(t, ws2, f3.ID()) {
			t.Error("a deleted form is back")
		}
		for _, id := range s2 {
			if a.hasSubmission(t, ws, f2.ID(), id) {
				t.Errorf("submission %s of the deleted form is back", id)
			}
		}
		for _, id := range s3 {
			if a.hasSubmission(t, ws2, f3.ID(), id) {
				t.Errorf("submission %s of the deleted workspace is back", id)
			}
		}
		if !a.hasForm(t, ws, f1.ID()) {
			t.Error("form 1 was lost")
		}
		counts, err := a.forms.SubmissionCounts(ctx, ws, []string{f1.ID()})
		noErr(t, err)
		if counts[f1.ID()] != 3 {
			t.Errorf("form 1 counts %d submissions, want 3", counts[f1.ID()])
		}
		// The restored database still takes captures.
		a.mustSubmit(t, f1, "after the restore")
	})
}

func sqlText(cfg persistence.Config, q string) string {
	if cfg.DatabaseURL == "" {
		return q
	}
	return strings.Replace(q, "?", "$1", 1)
}

func TestVerifyRefusesACorruptBackup(t *testing.T) {
	dialects(t, func(t *testing.T, cfg persistence.Config) {
		ctx := context.Background()
		a := openApp(t, cfg)
		f := a.form(t, a.workspace(t))
		kept := a.mustSubmit(t, f, "kept")
		b, dir, _ := localBackups(t, cfg, system.Clock{})
		m, err := b.Create(ctx, a.db)
		noErr(t, err)
		_, err = b.Verify(ctx, m.ID)
		noErr(t, err)

		blob := filepath.Join(dir.Root(), m.ID+".backup")
		good, err := os.ReadFile(blob)
		noErr(t, err)
		if strings.Contains(string(good), "CREATE TABLE") || strings.Contains(string(good), "submissions") {
			t.Fatal("the backup is readable without the key")
		}
		// One flipped byte.
		bad := append([]byte(nil), good...)
		bad[len(bad)/2] ^= 0x01
		noErr(t, os.WriteFile(blob, bad, 0o600))
		_, err = b.Verify(ctx, m.ID)
		if !errors.Is(err, backup.ErrCorrupt) || !strings.Contains(err.Error(), "does not decrypt") {
			t.Fatalf("verify of a flipped byte: %v", err)
		}
		// A restore refuses it too, and leaves the database alone.
		a.close(t)
		_, err = b.Restore(ctx, m.ID)
		if !errors.Is(err, backup.ErrCorrupt) {
			t.Fatalf("restore of a flipped byte: %v", err)
		}
		a = openApp(t, cfg)
		defer a.close(t)
		if !a.hasSubmission(t, f.WorkspaceID(), f.ID(), kept) {
			t.Fatal("a refused restore changed the database")
		}
		// Cut short.
		noErr(t, os.WriteFile(blob, good[:len(good)-100], 0o600))
		if _, err = b.Verify(ctx, m.ID); !errors.Is(err, backup.ErrCorrupt) {
			t.Fatalf("verify of a truncated backup: %v", err)
		}
		// A manifest that does not describe the backup.
		noErr(t, os.WriteFile(blob, good, 0o600))
		mpath := filepath.Join(dir.Root(), m.ID+".manifest.json")
		man, err := os.ReadFile(mpath)
		noErr(t, err)
		noErr(t, os.WriteFile(mpath, []byte(strings.Replace(string(man), `"submissions": 1`, `"submissions": 2`, 1)), 0o600))
		if _, err = b.Verify(ctx, m.ID); !errors.Is(err, backup.ErrCorrupt) || !strings.Contains(err.Error(), "submissions") {
			t.Fatalf("verify against a wrong row count: %v", err)
		}
		noErr(t, os.WriteFile(mpath, man, 0o600))
		_, err = b.Verify(ctx, m.ID)
		noErr(t, err)
	})
}

func TestBackupWhileCapturing(t *testing.T) {
	dialects(t, func(t *testing.T, cfg persistence.Config) {
		ctx := context.Background()
		a := openApp(t, cfg)
		defer a.close(t)
		f := a.form(t, a.workspace(t))
		for i := range 200 {
			a.mustSubmit(t, f, label(i))
		}
		b, _, _ := localBackups(t, cfg, system.Clock{})
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var captured, failed atomic.Int64
		var firstErr atomic.Value
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := a.submit(ctx, f, "during"); err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
					} else {
						captured.Add(1)
					}
				}
			}()
		}
		// The backup starts once captures are flowing.
		testkit.Eventually(t, 0, func() bool { return captured.Load()+failed.Load() > 0 }, "the first capture")
		m, err := b.Create(ctx, a.db)
		close(stop)
		wg.Wait()
		noErr(t, err)
		if failed.Load() != 0 {
			t.Fatalf("%d captures failed during the backup: %v", failed.Load(), firstErr.Load())
		}
		if captured.Load() == 0 {
			t.Fatal("no capture ran")
		}
		total := 200 + captured.Load()
		if n := m.Tables["submissions"]; n < 200 || n > total {
			t.Fatalf("backup holds %d submissions; %d before, %d after", n, 200, total)
		}
		_, err = b.Verify(ctx, m.ID)
		noErr(t, err)
	})
}

func TestPruneKeepsThirtyDays(t *testing.T) {
	ctx := context.Background()
	cfg := persistence.Config{DataDir: t.TempDir()}
	a := openApp(t, cfg)
	defer a.close(t)
	f := a.form(t, a.workspace(t))
	a.mustSubmit(t, f, "x")
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	b, dir, log := localBackups(t, cfg, clock)
	if b.Retention() != 30*24*time.Hour {
		t.Fatalf("default retention %s", b.Retention())
	}
	var ids []string
	for _, d := range []int{0, 10, 25} {
		clock.Set(t0.Add(time.Duration(d) * 24 * time.Hour))
		m, err := b.Create(ctx, a.db)
		noErr(t, err)
		ids = append(ids, m.ID)
		noErr(t, log.Append(ctx, []ports.Tombstone{{Kind: ports.TombstoneSubmission, ID: "sub_" + m.ID, WorkspaceID: "wsp_x", DeletedAt: clock.Now()}}))
	}
	// An upload that never got its manifest.
	noErr(t, dir.Put(ctx, "bkp_20251201T000000Z_00000000000000aa.backup", strings.NewReader("x"), 1))

	clock.Set(t0.Add(35 * 24 * time.Hour))
	deleted, err := b.Prune(ctx)
	noErr(t, err)
	if len(deleted) != 2 || deleted[1] != ids[0] {
		t.Fatalf("pruned %v, want the incomplete upload and %s", deleted, ids[0])
	}
	list, err := b.List(ctx)
	noErr(t, err)
	if len(list) != 2 || list[0].ID != ids[2] || list[1].ID != ids[1] {
		t.Fatalf("left %v", list)
	}
	for _, m := range list {
		if age := clock.Now().Sub(m.CreatedAt); age > 30*24*time.Hour {
			t.Fatalf("backup %s is %s old", m.ID, age)
		}
	}
	// The tombstones older than every backup left are gone; the others stay.
	ts, err := log.Since(ctx, time.Time{})
	noErr(t, err)
	if len(ts) != 2 || ts[0].ID != "sub_"+ids[1] {
		t.Fatalf("tombstones left %+v", ts)
	}
	// Nothing is older than 30 days at 30 days and a minute after the second backup.
	clock.Set(t0.Add(40*24*time.Hour + time.Minute))
	deleted, err = b.Prune(ctx)
	noErr(t, err)
	if len(deleted) != 1 || deleted[0] != ids[1] {
		t.Fatalf("pruned %v", deleted)
	}

	for _, r := range []time.Duration{31 * 24 * time.Hour, -time.Hour} {
		_, err := backup.New(backup.Config{Store: dir, Tombstones: log, Keyring: crypto.NewKeyring(crypto.GenerateMasterKey()), Clock: clock,
			Retention: r, Database: cfg})
		if err == nil {
			t.Fatalf("retention %s accepted", r)
		}
	}
}

func TestBackupsNeedTheirMasterKey(t *testing.T) {
	ctx := context.Background()
	cfg := persistence.Config{DataDir: t.TempDir()}
	a := openApp(t, cfg)
	defer a.close(t)
	a.mustSubmit(t, a.form(t, a.workspace(t)), "x")
	old := crypto.GenerateMasterKey()
	dir, err := backup.NewDir(t.TempDir())
	noErr(t, err)
	log, err := backup.NewLocalTombstones(dir.Root(), system.Clock{})
	noErr(t, err)
	m, err := newBackups(t, cfg, dir, log, system.Clock{}, crypto.NewKeyring(old)).Create(ctx, a.db)
	noErr(t, err)
	// After a master key rotation the previous key still opens it; without it, nothing does.
	rotated := newBackups(t, cfg, dir, log, system.Clock{}, crypto.NewKeyring(crypto.GenerateMasterKey(), old))
	_, err = rotated.Verify(ctx, m.ID)
	noErr(t, err)
	other := newBackups(t, cfg, dir, log, system.Clock{}, crypto.NewKeyring(crypto.GenerateMasterKey()))
	if _, err := other.Verify(ctx, m.ID); err == nil || !strings.Contains(err.Error(), old.ID()) {
		t.Fatalf("verify without the key: %v", err)
	}
}

func TestSQLiteRestoreRefusesADatabaseInUse(t *testing.T) {
	ctx := context.Background()
	cfg := persistence.Config{DataDir: t.TempDir()}
	a := openApp(t, cfg)
	f := a.form(t, a.workspace(t))
	b, _, _ := localBackups(t, cfg, system.Clock{})
	m, err := b.Create(ctx, a.db)
	noErr(t, err)
	later := a.mustSubmit(t, f, "after the backup")
	if _, err := b.Restore(ctx, m.ID); !errors.Is(err, backup.ErrInUse) {
		t.Fatalf("restore while the database is open: %v", err)
	}
	if !a.hasSubmission(t, f.WorkspaceID(), f.ID(), later) {
		t.Fatal("a refused restore changed the database")
	}
	a.close(t)
	_, err = b.Restore(ctx, m.ID)
	noErr(t, err)
}
