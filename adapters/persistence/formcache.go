package persistence

import (
	"context"
	"sync"
)

// formRows keeps the forms rows this process read on SQLite, tagged with the form_epoch count
// read just before them (migration 00239: triggers bump it on every insert, update and delete
// of a forms row, in any process). A kept row is used only while the count is still the one it
// was read under, so no write of any form, by this process or another, is ever missed; reading
// the count first makes a row read after a later write look older than it is (read again),
// never newer.
//
// Measured (make bench-public, SQLite, CPU profile of serve): reading the form on each view was
// 14% of the page's CPU (the row's query and its copy out of SQLite); reading the one-integer
// count instead costs a fraction of it (docs/performance.md, run 25).
type formRows struct {
	mu    sync.RWMutex
	epoch int64
	rows  map[string]formRow
}

const maxKeptForms = 10000

func (c *formRows) get(id string, epoch int64) (formRow, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.epoch != epoch {
		return formRow{}, false
	}
	r, ok := c.rows[id]
	return r, ok
}

func (c *formRows) put(r formRow, epoch int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case epoch < c.epoch:
		return // read under an older count: already stale
	case epoch > c.epoch || c.rows == nil || len(c.rows) >= maxKeptForms:
		c.rows = make(map[string]formRow)
		c.epoch = epoch
	}
	c.rows[r.ID] = r
}

// formEpoch reads the forms' write count (SQLite only; ok is false on PostgreSQL).
func (d *DB) formEpoch(ctx context.Context, h *preparedHot) (epoch int64, ok bool, err error) {
	if h.formEpoch == nil {
		return 0, false, nil
	}
	if err := h.formEpoch.QueryRowContext(ctx).Scan(&epoch); err != nil {
		return 0, false, mapErr("read form epoch", err)
	}
	return epoch, true, nil
}
