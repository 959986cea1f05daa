package persistence

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/test/testkit"
)

// No connection checkpoints inside its commits; the background loop keeps the log copied into
// the database file and small, even while writes never stop (the log can only start over
// after a complete checkpoint, which the loop then makes inside the write slot).
func TestCheckpointsRunBesideTheWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, Config{DataDir: dir, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	// Every connection of the pool, held at once.
	release := make(chan struct{})
	got := make(chan int, 4)
	for range 4 {
		go func() {
			_ = db.gorm.WithContext(ctx).Connection(func(c *gorm.DB) error {
				var v int
				if err := c.Raw("PRAGMA wal_autocheckpoint").Scan(&v).Error; err != nil {
					v = -1
				}
				got <- v
				<-release
				return nil
			})
		}()
	}
	for range 4 {
		if v := <-got; v != 0 {
			t.Errorf("a connection's wal_autocheckpoint = %d, want 0 (no checkpoint inside a commit)", v)
		}
	}
	close(release)

	if err := db.write(ctx, func(g *gorm.DB) error { return g.Exec("CREATE TABLE filler (b BLOB NOT NULL)").Error }); err != nil {
		t.Fatal(err)
	}
	// 80 MiB through the log in transactions of 64 KiB, about 25 MiB/s (a busy server writes a
	// good deal less): with no checkpoint at all the log would hold all of it.
	const txs, rowsPerTx, rowBytes = 1280, 4, 16 << 10
	walPath := filepath.Join(dir, "formward.db-wal")
	var largestWAL int64
	for i := range txs {
		err := db.redoableTx(ctx, func(tx *gorm.DB) error {
			for range rowsPerTx {
				if err := tx.Exec("INSERT INTO filler (b) VALUES (randomblob(?))", rowBytes).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		if fi, err := os.Stat(walPath); err == nil {
			largestWAL = max(largestWAL, fi.Size())
		}
		time.Sleep(2500 * time.Microsecond) // paces the writes (about 25 MiB/s): the load, not a wait for anything
	}
	total := int64(txs * rowsPerTx * rowBytes)
	// The log starts over after a complete checkpoint; a few restart thresholds of slack cover
	// the writes made while a checkpoint runs.
	if limit := int64(3 * checkpointRestartPages * 4096); largestWAL > limit {
		t.Errorf("the log grew to %d bytes (of %d written), want at most %d: it does not start over", largestWAL, total, limit)
	}
	// And what was written reaches the database file without any explicit checkpoint.
	var size int64
	if !testkit.Wait(10*time.Second, func() bool {
		fi, err := os.Stat(filepath.Join(dir, "formward.db"))
		if err != nil {
			t.Fatal(err)
		}
		size = fi.Size()
		db.checkpoints.noteWrite()
		return size >= total
	}) {
		t.Fatalf("the database file holds %d bytes of the %d written: the log was not checkpointed", size, total)
	}
}
