package persistence

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// SQLite's write-ahead log is copied into the database file by checkpoints. Left to itself,
// SQLite runs one inside the commit that takes the log past 1,000 pages: that commit (a group
// of captures waiting for their answer, or a retention batch) then also copies the pages and
// waits for the database file to reach the disk, while holding the one writer everybody else
// waits for. A third of what a retention batch held the writer for was such checkpoints.
//
// Here no connection checkpoints on commit (wal_autocheckpoint = 0, set as each connection
// opens); a background loop does it instead, beside the writers, since a PASSIVE checkpoint
// takes no writer lock. A checkpoint running beside writers may never see the log entirely
// copied, though, and SQLite only starts the log over from its beginning after a complete
// one: when the log passes checkpointRestartPages, the loop runs one checkpoint inside the
// write slot (by then most pages are copied, so it is short) and the next writer restarts the
// log. The log therefore stays about as small as with SQLite's own checkpoints.

// sqliteDriver is the name of the go-sqlite3 driver whose connections do not checkpoint on
// commit.
const sqliteDriver = "sqlite3_formward"

// checkpointGap is the least time between two background checkpoints.
const checkpointGap = 250 * time.Millisecond

// checkpointRestartPages is the log size (pages of 4 KiB) past which a checkpoint waits for
// the write slot, so that it completes and the log can start over.
const checkpointRestartPages = 4000

// checkpointTail is how many pages at most a checkpoint inside the write slot should find to
// copy; checkpointTries bounds the checkpoints beside the writers that try to get there.
const (
	checkpointTail  = 1000
	checkpointTries = 4
)

var registerDriver sync.Once

func registerSQLiteDriver() {
	registerDriver.Do(func() {
		sql.Register(sqliteDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			_, err := c.Exec("PRAGMA wal_autocheckpoint = 0", nil)
			return err
		}})
	})
}

// checkpointer runs the background checkpoints of one DB.
type checkpointer struct {
	wrote chan struct{} // a write committed since the last checkpoint (capacity 1)
	stop  chan struct{}
	done  chan struct{}
}

func newCheckpointer() *checkpointer {
	return &checkpointer{wrote: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// noteWrite wakes the loop after a write; it never blocks.
func (c *checkpointer) noteWrite() {
	select {
	case c.wrote <- struct{}{}:
	default:
	}
}

// close stops the loop and waits for it.
func (c *checkpointer) close() {
	close(c.stop)
	<-c.done
}

// loop checkpoints after writes, at most once per checkpointGap, until close; a last
// checkpoint is left to SQLite, which makes one when the last connection closes.
func (c *checkpointer) loop(d *DB) {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.wrote:
		}
		d.checkpointPass()
		// A failed checkpoint (the disk, a lock held by another process) is retried after the
		// next write; the log keeps everything meanwhile.
		t := time.NewTimer(checkpointGap)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// checkpointPass copies the log into the database file beside the writers and, when the log
// has grown past checkpointRestartPages, lets it start over: a checkpoint reports the log's
// size when it began, and what writers added while it ran is copied by the next one; once a
// pass finds only a little more than the last (at most checkpointTail pages), the last pages
// are copied inside the write slot, which no writer then adds to, and the next writer starts
// the log over.
func (d *DB) checkpointPass() {
	log, err := d.checkpoint(false)
	for i := 0; err == nil && log >= checkpointRestartPages; i++ {
		var next int
		if next, err = d.checkpoint(false); err != nil {
			return
		}
		if next-log <= checkpointTail || i == checkpointTries {
			_, _ = d.checkpoint(true)
			return
		}
		log = next
	}
}

// checkpoint runs one PASSIVE checkpoint, inside the write slot when exclusive, and returns
// the log's size in pages when it began (all of which it copied, unless err). Its statement is
// not tied to a cancellable context: the go-sqlite3 driver would run it on a goroutine of its
// own, and it always ends (PASSIVE waits for no lock).
func (d *DB) checkpoint(exclusive bool) (log int, err error) {
	ctx := context.Background()
	if exclusive {
		release, err := d.acquireWrite(ctx)
		if err != nil {
			return 0, err
		}
		defer release()
	}
	var busy, copied int
	if err := d.sqlDB.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		return 0, err
	}
	if busy != 0 || copied < log {
		return log, fmt.Errorf("checkpoint copied %d of %d pages", copied, log)
	}
	return log, nil
}
