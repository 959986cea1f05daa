package persistence

import (
	"context"
	"testing"

	"gorm.io/gorm"
)

// A redoable transaction relaxes only its own connection, and only while it runs: every
// connection of the pool commits with synchronous=FULL (2) and enforces foreign keys
// afterwards, as captures and every other deletion must.
func TestRedoableTxRelaxesOnlyItsOwnCommit(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Config{DataDir: t.TempDir(), MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var inside, fkInside int
	err = db.redoableTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Raw("PRAGMA synchronous").Scan(&inside).Error; err != nil {
			return err
		}
		if err := tx.Raw("PRAGMA foreign_keys").Scan(&fkInside).Error; err != nil {
			return err
		}
		return tx.Exec("INSERT INTO tombstones (kind, ids, workspace_id, deleted_at) VALUES ('submission', '[\"sub_x\"]', 'wsp_x', 1)").Error
	})
	if err != nil {
		t.Fatal(err)
	}
	if inside != 1 || fkInside != 0 {
		t.Errorf("inside the transaction: synchronous = %d, foreign_keys = %d, want 1 (NORMAL) and 0", inside, fkInside)
	}
	var n int64
	if err := db.read(ctx).Raw("SELECT COUNT(*) FROM tombstones").Scan(&n).Error; err != nil || n != 1 {
		t.Fatalf("the transaction's row: %d, %v", n, err)
	}
	// Hold every connection of the pool at once: each must be back to FULL.
	done := make(chan struct{})
	defer close(done)
	for range 4 {
		got := make(chan int, 1)
		go func() {
			_ = db.gorm.WithContext(ctx).Connection(func(c *gorm.DB) error {
				var v, fk int
				_ = c.Raw("PRAGMA synchronous").Scan(&v).Error
				_ = c.Raw("PRAGMA foreign_keys").Scan(&fk).Error
				got <- v*10 + fk
				<-done
				return nil
			})
		}()
		if v := <-got; v != 21 {
			t.Errorf("a pooled connection has synchronous = %d and foreign_keys = %d, want 2 (FULL) and 1", v/10, v%10)
		}
	}
}
