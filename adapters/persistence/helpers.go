package persistence

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/ports"
)

// Row lock strengths on PostgreSQL. NO KEY UPDATE serialises updates of a row without blocking
// inserts elsewhere whose foreign key check takes FOR KEY SHARE on it.
const (
	lockUpdate      = "UPDATE"
	lockNoKeyUpdate = "NO KEY UPDATE"
)

// lockedUpdate is the shape of every Update: in one write transaction it loads the row of R
// matching where, locked against concurrent updates (FOR <strength> on PostgreSQL; on SQLite
// the write transaction, BEGIN IMMEDIATE, already serialises writers), and hands it to apply,
// which changes the aggregate and writes it with tx. A missing row gives domain.ErrNotFound
// (as "load <what>"); an error from apply rolls everything back and is returned as is.
func lockedUpdate[R any](ctx context.Context, db *DB, strength, what string, apply func(tx *gorm.DB, row R) error, where string, args ...any) error {
	return db.tx(ctx, func(tx *gorm.DB) error {
		q := tx.Where(where, args...)
		if db.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: strength})
		}
		var row R
		if err := q.Take(&row).Error; err != nil {
			return mapErr("load "+what, err)
		}
		return apply(tx, row)
	})
}

// newestFirst reads one page of rows of q in keyset order: newest first by (timeColumn, id),
// strictly after page.After, at most page.Limit (callers ask for one more than they show, to
// know whether a next page exists).
func newestFirst[R any](q *gorm.DB, page ports.Page, timeColumn, what string) ([]R, error) {
	if page.Limit <= 0 {
		return nil, nil
	}
	if page.After != nil {
		q = q.Where("("+timeColumn+", id) < (?, ?)", toMillis(page.After.CreatedAt), page.After.ID)
	}
	var rows []R
	if err := q.Order(timeColumn + " DESC, id DESC").Limit(page.Limit).Find(&rows).Error; err != nil {
		return nil, mapErr("list "+what, err)
	}
	return rows, nil
}

// dueTable describes a table of scheduled work for claimDue.
type dueTable struct {
	name string
	// due is the condition on the table's alias t for unfinished work (its time is next_attempt_at).
	due string
	// endpoint is the column naming an item's endpoint, or "" when items have none.
	endpoint string
}

// claimDue leases due rows of t for one engine, fairly: at most c.PerWorkspace rows per
// workspace and c.PerEndpoint per endpoint, counting c.InFlight, and workspaces taken in turn
// (the first due row of each workspace, then the second, …) up to c.Limit. The claimed rows'
// next attempt moves to c.Now+c.Lease. On PostgreSQL FOR UPDATE SKIP LOCKED lets concurrent
// engines claim disjoint sets; on SQLite the single write transaction does the same.
func claimDue[R any](ctx context.Context, db *DB, t dueTable, c ports.Claim) ([]R, error) {
	if c.Limit <= 0 {
		return nil, nil
	}
	nowMS, leaseMS := toMillis(c.Now), toMillis(c.Now.Add(c.Lease))
	fair, args := fairDueSQL(t, c, nowMS)
	var rows []R
	err := db.tx(ctx, func(tx *gorm.DB) error {
		if db.dialect == DialectPostgres {
			q := fmt.Sprintf(`UPDATE %[1]s SET next_attempt_at = ? WHERE id IN (
				SELECT t.id FROM %[1]s t WHERE t.id IN (%[2]s) AND %[3]s AND t.next_attempt_at <= ? FOR UPDATE SKIP LOCKED) RETURNING *`,
				t.name, fair, t.due)
			return tx.Raw(q, append(append([]any{leaseMS}, args...), nowMS)...).Scan(&rows).Error
		}
		var ids []string
		if err := tx.Raw(fair, args...).Scan(&ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Exec("UPDATE "+t.name+" SET next_attempt_at = ? WHERE id IN ?", leaseMS, ids).Error; err != nil {
			return err
		}
		return tx.Table(t.name).Where("id IN ?", ids).Find(&rows).Error
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// fairDueSQL selects the IDs claimDue takes: rows ranked within their endpoint and within their
// workspace (after what is in flight), kept while both ranks are within the shares, and ordered
// by workspace rank so that every workspace with due work gets its first row before any gets a second.
func fairDueSQL(t dueTable, c ports.Claim, nowMS int64) (string, []any) {
	perWorkspace := c.PerWorkspace
	if perWorkspace <= 0 {
		perWorkspace = c.Limit
	}
	var args []any
	var b strings.Builder
	b.WriteString("WITH busy_ws(k, n) AS (")
	args = busyRows(&b, args, c.InFlight.Workspaces)
	b.WriteString("), ")
	if t.endpoint != "" && c.PerEndpoint > 0 {
		b.WriteString("busy_ep(k, n) AS (")
		args = busyRows(&b, args, c.InFlight.Endpoints)
		fmt.Fprintf(&b, `), due AS (SELECT t.id, t.workspace_id, t.next_attempt_at,
			ROW_NUMBER() OVER (PARTITION BY t.%[1]s ORDER BY t.next_attempt_at, t.id) + COALESCE(be.n, 0) AS ep_rank
			FROM %[2]s t LEFT JOIN busy_ep be ON be.k = t.%[1]s WHERE %[3]s AND t.next_attempt_at <= ?), `, t.endpoint, t.name, t.due)
		args = append(args, nowMS, c.PerEndpoint)
	} else {
		fmt.Fprintf(&b, `due AS (SELECT t.id, t.workspace_id, t.next_attempt_at, 0 AS ep_rank
			FROM %s t WHERE %s AND t.next_attempt_at <= ?), `, t.name, t.due)
		args = append(args, nowMS, 0)
	}
	b.WriteString(`ranked AS (SELECT due.id, due.next_attempt_at,
		ROW_NUMBER() OVER (PARTITION BY due.workspace_id ORDER BY due.next_attempt_at, due.id) + COALESCE(bw.n, 0) AS ws_rank
		FROM due LEFT JOIN busy_ws bw ON bw.k = due.workspace_id WHERE due.ep_rank <= ?)
		SELECT id FROM ranked WHERE ws_rank <= ? ORDER BY ws_rank, next_attempt_at, id LIMIT ?`)
	args = append(args, perWorkspace, c.Limit)
	return b.String(), args
}

// busyRows writes a row source of (k, n) pairs for the counts, typed alike on both dialects.
func busyRows(b *strings.Builder, args []any, counts map[string]int) []any {
	if len(counts) == 0 {
		b.WriteString("SELECT CAST(NULL AS TEXT), CAST(0 AS INTEGER) WHERE 1 = 0")
		return args
	}
	first := true
	for k, n := range counts {
		if !first {
			b.WriteString(" UNION ALL ")
		}
		first = false
		b.WriteString("SELECT CAST(? AS TEXT), CAST(? AS INTEGER)")
		args = append(args, k, n)
	}
	return args
}
