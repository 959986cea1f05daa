package backup_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/backup"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/objectstore/miniotest"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

// TestS3Backups keeps backups and the tombstone log under backups/ in a real MinIO bucket.
func TestS3Backups(t *testing.T) {
	s3 := miniotest.Bucket(t, "formward-backups")
	ctx := context.Background()
	cfg := persistence.Config{DataDir: t.TempDir()}
	a := openApp(t, cfg)
	ws := a.workspace(t)
	f := a.form(t, ws)
	gone, kept := a.mustSubmit(t, f, "gone"), a.mustSubmit(t, f, "kept")

	store := backup.NewBucket(s3)
	log := backup.NewStoreTombstones(store, system.Clock{})
	b := newBackups(t, cfg, store, log, system.Clock{}, crypto.NewKeyring(crypto.GenerateMasterKey()))
	m, err := b.Create(ctx, a.db)
	noErr(t, err)
	objs, err := listKeys(ctx, s3, "backups/")
	noErr(t, err)
	if len(objs) != 2 || objs[0] != "backups/"+m.ID+".backup" || objs[1] != "backups/"+m.ID+".manifest.json" {
		t.Fatalf("bucket holds %+v", objs)
	}
	list, err := b.List(ctx)
	noErr(t, err)
	if len(list) != 1 || list[0].ID != m.ID {
		t.Fatalf("list %+v", list)
	}
	_, err = b.Verify(ctx, m.ID)
	noErr(t, err)

	noErr(t, a.deleteSub.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws)), capture.DeleteSubmission{FormID: f.ID(), ID: gone}))
	n, err := b.ShipTombstones(ctx, a.db)
	noErr(t, err)
	if n != 1 {
		t.Fatalf("shipped %d", n)
	}
	objs, err = listKeys(ctx, s3, "backups/tombstones/")
	noErr(t, err)
	if len(objs) != 1 {
		t.Fatalf("tombstone objects %+v", objs)
	}
	a.close(t)

	res, err := b.Restore(ctx, m.ID)
	noErr(t, err)
	if res.Reapplied.Submissions != 1 {
		t.Fatalf("restore %+v", res)
	}
	a = openApp(t, cfg)
	defer a.close(t)
	if a.hasSubmission(t, ws, f.ID(), gone) || !a.hasSubmission(t, ws, f.ID(), kept) {
		t.Fatal("restore from S3 brought the deleted back or lost the kept")
	}

	// A flipped byte in the bucket is refused.
	rc, info, err := s3.Get(ctx, "backups/"+m.ID+".backup")
	noErr(t, err)
	var buf bytes.Buffer
	_, err = buf.ReadFrom(rc)
	_ = rc.Close()
	noErr(t, err)
	blob := buf.Bytes()
	blob[len(blob)/3] ^= 0x80
	noErr(t, s3.Put(ctx, "backups/"+m.ID+".backup", bytes.NewReader(blob), info.Size, "application/octet-stream"))
	if _, err := b.Verify(ctx, m.ID); !errors.Is(err, backup.ErrCorrupt) {
		t.Fatalf("verify of a flipped byte in S3: %v", err)
	}
}

func TestTombstoneLogs(t *testing.T) {
	day := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: day}
	local, err := backup.NewLocalTombstones(t.TempDir(), clock)
	noErr(t, err)
	dir, err := backup.NewDir(t.TempDir())
	noErr(t, err)
	logs := map[string]ports.Tombstones{"local": local, "store": backup.NewStoreTombstones(dir, clock)}
	for name, log := range logs {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock.Set(day)
			for d := range 5 {
				clock.Set(day.Add(time.Duration(d) * 24 * time.Hour))
				noErr(t, log.Append(ctx, []ports.Tombstone{
					{Kind: ports.TombstoneSubmission, ID: "sub_a" + label(d), WorkspaceID: "wsp_1", DeletedAt: clock.Now().Add(-time.Minute)},
					{Kind: ports.TombstoneForm, ID: "frm_b" + label(d), WorkspaceID: "wsp_1", DeletedAt: clock.Now()},
				}))
			}
			all, err := log.Since(ctx, time.Time{})
			noErr(t, err)
			if len(all) != 10 || all[0].ID != "sub_a"+label(0) || all[9].Kind != ports.TombstoneForm {
				t.Fatalf("all: %+v", all)
			}
			since, err := log.Since(ctx, day.Add(3*24*time.Hour))
			noErr(t, err)
			if len(since) != 3 || since[0].ID != "frm_b"+label(3) {
				t.Fatalf("since day 3: %+v", since)
			}
			noErr(t, log.Prune(ctx, day.Add(24*time.Hour+2*time.Hour)))
			left, err := log.Since(ctx, time.Time{})
			noErr(t, err)
			if len(left) != 8 || left[0].ID != "sub_a"+label(1) {
				t.Fatalf("after prune: %+v", left)
			}
		})
	}

	t.Run("a torn last line is skipped", func(t *testing.T) {
		root := t.TempDir()
		log, err := backup.NewLocalTombstones(root, clock)
		noErr(t, err)
		ctx := context.Background()
		noErr(t, log.Append(ctx, []ports.Tombstone{{Kind: ports.TombstoneSubmission, ID: "sub_1", WorkspaceID: "w", DeletedAt: clock.Now()}}))
		p := filepath.Join(root, "tombstones", clock.Now().Format("2006-01-02")+".jsonl")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		noErr(t, err)
		_, err = f.WriteString(`{"kind":"submission","id":"sub_2","works`)
		noErr(t, err)
		noErr(t, f.Close())
		ts, err := log.Since(ctx, time.Time{})
		noErr(t, err)
		if len(ts) != 1 || ts[0].ID != "sub_1" {
			t.Fatalf("%+v", ts)
		}
		st, err := os.Stat(p)
		noErr(t, err)
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v", st.Mode())
		}
		b, err := os.ReadFile(p)
		noErr(t, err)
		if strings.Contains(string(b), "respondent") {
			t.Fatal("content in the log")
		}
	})
}

// A deletion's commit wakes the shipper: the tombstone reaches the log without waiting for
// the (here hour-long) tick.
func TestShipperCopiesEachDeletionAtOnce(t *testing.T) {
	ctx := context.Background()
	cfg := persistence.Config{DataDir: t.TempDir()}
	a := openApp(t, cfg)
	defer a.close(t)
	ws := a.workspace(t)
	f := a.form(t, ws)
	first, second := a.mustSubmit(t, f, "x"), a.mustSubmit(t, f, "y")
	b, _, log := localBackups(t, cfg, system.Clock{})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		b.Shipper(a.db).Run(rctx, time.Hour, a.db.TombstonesRecorded(), func(err error) { t.Error(err) })
		close(done)
	}()
	defer func() { cancel(); <-done }()
	// The first deletion may go with the first pass, which runs at once; once it is in the log that
	// pass is over, so the second deletion can only go by the wake-up its commit sends.
	for i, id := range []string{first, second} {
		noErr(t, a.deleteSub.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws)), capture.DeleteSubmission{FormID: f.ID(), ID: id}))
		// In the log, and then no longer in the database.
		var ts []ports.Tombstone
		var pending []ports.PendingTombstone
		if !testkit.Wait(30*time.Second, func() bool {
			var err error
			ts, err = log.Since(ctx, time.Time{})
			noErr(t, err)
			pending, err = persistence.NewTombstoneRepository(a.db).Pending(ctx, 10)
			noErr(t, err)
			return len(ts) == i+1 && ts[i].ID == id && ts[i].Kind == ports.TombstoneSubmission && ts[i].WorkspaceID == ws && len(pending) == 0
		}) {
			t.Fatalf("tombstone %d did not reach the log: log %+v, database %+v", i+1, ts, pending)
		}
	}
}

// listKeys returns the keys under prefix, in key order.
func listKeys(ctx context.Context, s3 *objectstore.S3, prefix string) ([]string, error) {
	var keys []string
	err := s3.List(ctx, prefix, func(key string) error {
		keys = append(keys, key)
		return nil
	})
	sort.Strings(keys)
	return keys, err
}
