package persistence

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// The fair-claim scheduler: the delivery engine and the workflow run engine claim their due
// work here (DeliveryRepository.ClaimDue, RunRepository.ClaimDue), so one busy workspace or
// endpoint cannot starve the others.

// dueTable describes a table of scheduled work for claimDue.
type dueTable struct {
	name string
	// due is the condition on the table's alias t for unfinished work (its time is next_attempt_at).
	// It is written as the partial index on (group, next_attempt_at) has it, so the index serves it.
	due string
	// endpoint is the column naming an item's endpoint, or "" when items have none.
	endpoint string
}

// claimDue leases due rows of t for one engine, fairly: at most c.PerWorkspace rows per
// workspace and c.PerEndpoint per endpoint, counting c.InFlight, and workspaces taken in turn
// (the first due row of each workspace, then the second, …) up to c.Limit. The claimed rows'
// next attempt moves to c.Now+c.Lease; the commit does not wait for the disk. On PostgreSQL FOR UPDATE SKIP LOCKED lets concurrent
// engines claim disjoint sets; on SQLite the single write transaction does the same.
func claimDue[R any](ctx context.Context, db *DB, t dueTable, c ports.Claim) ([]R, error) {
	if c.Limit <= 0 {
		return nil, nil
	}
	nowMS, leaseMS := toMillis(c.Now), toMillis(c.Now.Add(c.Lease))
	fair, args := fairDueSQL(t, c, nowMS, db.dialect)
	stmt, err := db.claimStmt(ctx, fair)
	if err != nil {
		return nil, err
	}
	var rows []R
	// A claim need not wait for the disk (redoableTx): if a crash loses it, the rows are due
	// again, just as they would be once the lease ran out, and an attempt of a claimed row is
	// recorded by a durable commit that makes the claim durable too. A claim per freed slot is
	// then no fsync of its own.
	err = db.redoableTx(ctx, func(tx *gorm.DB) error {
		ids, err := claimIDs(ctx, tx, stmt, fair, args)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if db.dialect == DialectPostgres {
			// Another engine may have claimed some of them since: SKIP LOCKED passes over those it
			// still holds, and the due check over those it already leased.
			q := fmt.Sprintf(`UPDATE %[1]s SET next_attempt_at = ? WHERE id IN (
				SELECT t.id FROM %[1]s t WHERE t.id IN ? AND %[2]s AND t.next_attempt_at <= ? FOR UPDATE SKIP LOCKED) RETURNING *`,
				t.name, t.due)
			return tx.Raw(q, leaseMS, ids, nowMS).Scan(&rows).Error
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

// fairDueSQL selects the IDs claimDue takes. It walks the groups that have unfinished work
// (endpoints for deliveries, workspaces for runs) one index seek at a time, takes each group's
// first due rows within its room (its limit less what is in flight there; a group with no room
// is skipped), and ranks them within their workspace after what is in flight there. Rows within
// their workspace's share come first, ordered by that rank, so that every workspace with due
// work gets its first row before any gets a second. Then, up to c.Spare rows in all, rows over
// the share: those of endpoints whose limit in c.EndpointLimits is above the share of one
// endpoint (a row is over when the endpoint already has that share in flight or claimed),
// endpoints in turn. The cost follows the number of groups with unfinished work, never the
// length of a backlog.
//
// The counts and limits go in as JSON documents, so the text is the same for every claim of a
// table and is prepared once (see claimStmt): preparing the statement was a third of a claim's
// cost on SQLite.
func fairDueSQL(t dueTable, c ports.Claim, nowMS int64, dialect string) (string, []any) {
	perWorkspace := c.PerWorkspace
	if perWorkspace <= 0 {
		perWorkspace = c.Limit
	}
	// Items with an endpoint are walked per endpoint (the index the walk needs is on it); an
	// endpoint's first share counts toward its workspace's share, what it has beyond that
	// (an adaptive limit that grew) is over it.
	group, share, busy, limits := "workspace_id", perWorkspace, c.InFlight.Workspaces, map[string]int(nil)
	if t.endpoint != "" {
		group, share, busy, limits = t.endpoint, perWorkspace, c.InFlight.Endpoints, c.EndpointLimits
		if c.PerEndpoint > 0 {
			share = min(c.PerEndpoint, perWorkspace)
		}
	}
	due := func(alias string) string { return strings.ReplaceAll(t.due, "t.", alias+".") }
	var args []any
	var b strings.Builder
	b.WriteString("WITH RECURSIVE busy_ws(k, n) AS (")
	args = countRows(&b, args, c.InFlight.Workspaces, dialect)
	b.WriteString("), busy_grp(k, n) AS (")
	args = countRows(&b, args, busy, dialect)
	b.WriteString("), lim(k, n) AS (")
	args = countRows(&b, args, limits, dialect)
	// heads walks each group's due rows in (next_attempt_at, id) order, one seek per row, up to
	// the room: LIMIT and OFFSET cannot name an outer column on SQLite, so no OFFSET i.
	fmt.Fprintf(&b, `),
		grp(k) AS (
			SELECT MIN(t.%[1]s) FROM %[2]s t WHERE %[3]s
			UNION ALL
			SELECT (SELECT MIN(t.%[1]s) FROM %[2]s t WHERE %[3]s AND t.%[1]s > grp.k) FROM grp WHERE grp.k IS NOT NULL),
		room(k, busy, n) AS (
			SELECT grp.k, COALESCE(bg.n, 0), COALESCE(lim.n, ?) - COALESCE(bg.n, 0)
			FROM grp LEFT JOIN busy_grp bg ON bg.k = grp.k LEFT JOIN lim ON lim.k = grp.k WHERE grp.k IS NOT NULL),
		heads(k, i, busy, room, id) AS (
			SELECT room.k, 1, room.busy, room.n, (SELECT t.id FROM %[2]s t WHERE t.%[1]s = room.k AND %[3]s AND t.next_attempt_at <= ?
				ORDER BY t.next_attempt_at, t.id LIMIT 1)
			FROM room WHERE room.n > 0
			UNION ALL
			SELECT heads.k, heads.i + 1, heads.busy, heads.room, (
				SELECT u.id FROM %[2]s u, %[2]s p WHERE p.id = heads.id AND u.%[1]s = heads.k AND %[4]s AND u.next_attempt_at <= ?
					AND (u.next_attempt_at > p.next_attempt_at OR (u.next_attempt_at = p.next_attempt_at AND u.id > p.id))
				ORDER BY u.next_attempt_at, u.id LIMIT 1)
			FROM heads WHERE heads.id IS NOT NULL AND heads.i < heads.room),
		cand AS (
			SELECT t.id, t.workspace_id, t.next_attempt_at, heads.k AS grp, heads.i + heads.busy AS grp_rank
			FROM heads JOIN %[2]s t ON t.id = heads.id),
		ranked AS (
			SELECT cand.id, cand.grp, cand.grp_rank, cand.next_attempt_at,
				CASE WHEN cand.grp_rank <= ? THEN ROW_NUMBER() OVER (PARTITION BY cand.workspace_id, CASE WHEN cand.grp_rank <= ? THEN 1 ELSE 0 END
					ORDER BY cand.next_attempt_at, cand.id) + COALESCE(bw.n, 0) END AS ws_rank
			FROM cand LEFT JOIN busy_ws bw ON bw.k = cand.workspace_id),
		base AS (
			SELECT id, ws_rank, next_attempt_at FROM ranked WHERE ws_rank <= ?),
		over AS (
			SELECT r.id, r.grp_rank, r.next_attempt_at, ROW_NUMBER() OVER (ORDER BY r.grp_rank, r.next_attempt_at, r.id) AS n
			FROM ranked r WHERE r.ws_rank IS NULL AND NOT EXISTS (SELECT 1 FROM ranked x WHERE x.grp = r.grp AND x.ws_rank > ?)),
		picked(id, tier, o, next_attempt_at) AS (
			SELECT id, 0, ws_rank, next_attempt_at FROM base
			UNION ALL
			SELECT id, 1, grp_rank, next_attempt_at FROM over WHERE over.n + (SELECT COUNT(*) FROM base) <= ?)
		SELECT id FROM picked ORDER BY tier, o, next_attempt_at, id LIMIT ?`, group, t.name, due("t"), due("u"))
	args = append(args, share, nowMS, nowMS, share, share, perWorkspace, perWorkspace, max(c.Spare, 0), c.Limit)
	return b.String(), args
}

// countRows writes a row source of (k, n) pairs for the counts, typed alike on both dialects,
// from one JSON argument.
func countRows(b *strings.Builder, args []any, counts map[string]int, dialect string) []any {
	if dialect == DialectPostgres {
		b.WriteString("SELECT key, CAST(value AS INTEGER) FROM jsonb_each_text(CAST(? AS jsonb))")
	} else {
		b.WriteString("SELECT key, CAST(value AS INTEGER) FROM json_each(?)")
	}
	doc, _ := json.Marshal(counts) // a map of strings to ints always encodes; nil gives null
	if counts == nil {
		doc = []byte("{}")
	}
	return append(args, string(doc))
}

// claimStmt is the prepared statement of a claim's text, prepared once per DB (and by
// database/sql once per connection).
func (d *DB) claimStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := d.claimStmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := d.sqlDB.PrepareContext(ctx, d.rebind(query))
	if err != nil {
		return nil, unavailable(mapErr("prepare claim", err))
	}
	if prev, loaded := d.claimStmts.LoadOrStore(query, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// claimIDs runs the claim's prepared selection in the transaction.
func claimIDs(ctx context.Context, tx *gorm.DB, stmt *sql.Stmt, query string, args []any) ([]string, error) {
	sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx)
	if !ok {
		var ids []string
		err := tx.Raw(query, args...).Scan(&ids).Error
		return ids, err
	}
	rows, err := sqlTx.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
