package persistence

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/ports"
)

// Group commit: every capture is one INSERT of a submission, one of an outbox row and one
// counter increment, and the cost of a capture is dominated by the commit's fsync. Callers seal
// their rows in parallel, then queue them; each committer takes everything queued (up to
// GroupCommitMax) and writes it in one transaction, so one fsync acknowledges many captures.
// On PostgreSQL several committers keep commits overlapping; each increments its own counter
// shard, so they never wait on each other's counter rows.

// commitTimeout bounds one capture transaction; waiters get its error.
const commitTimeout = 30 * time.Second

// pendingAdd is one sealed submission and its sealed event, waiting for a committer. token,
// when set, is a render-token nonce spent in the same transaction; limit (above 0) is the
// form's max_submissions and emailKey its one-per-email key, both checked in the transaction.
// refused is set by writeAdds when one of them turned the item away, and the item was then
// left out of the batch.
type pendingAdd struct {
	ctx      context.Context
	sub      submissionRow
	event    sealedEvent
	emails   [][]byte // blind index of the email answers, computed by the caller
	token    *spentToken
	limit    int64
	emailKey string
	refused  error
	done     chan error
}

// spentToken is a nonce for used_form_tokens; expiresAt in Unix milliseconds.
type spentToken struct {
	nonce     string
	expiresAt int64
}

// outcome is what a committed item's caller is told.
func (p *pendingAdd) outcome() error { return p.refused }

// enqueue hands p to the committers and waits for its commit.
func (d *DB) enqueue(ctx context.Context, p *pendingAdd) (err error) {
	ctx, span := startCommitWait(ctx)
	defer func() { tracing.End(span, err) }()
	p.ctx = ctx
	d.closeMu.RLock()
	if d.closed {
		d.closeMu.RUnlock()
		return ErrClosed
	}
	select {
	case d.adds <- p:
	case <-ctx.Done():
		d.closeMu.RUnlock()
		return ctx.Err()
	}
	d.closeMu.RUnlock()
	// Once queued the outcome is decided by the committer (bounded by commitTimeout);
	// waiting for it keeps the answer truthful: nil means durably stored.
	return <-p.done
}

// commitLoop is one committer; shard is its form_counters shard. It ends when the queue is
// closed and drained.
func (d *DB) commitLoop(shard int) {
	defer d.committers.Done()
	batch := make([]*pendingAdd, 0, d.groupMax)
	for first := range d.adds {
		batch = append(batch[:0], first)
	fill:
		for len(batch) < d.groupMax {
			select {
			case p, ok := <-d.adds:
				if !ok {
					break fill
				}
				batch = append(batch, p)
			default:
				break fill
			}
		}
		d.commitBatch(shard, batch)
	}
}

func (d *DB) commitBatch(shard int, batch []*pendingAdd) {
	// Requests that gave up before their turn are answered without writing.
	live := batch[:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.done <- err
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	d.observeBatch(len(live))
	d.groupCommits.Add(1)
	span := startCommitBatch(shard, live)
	defer span.End()
	err := d.writeAdds(shard, live)
	if err == nil {
		d.committed.put(live)
		for _, p := range live {
			p.done <- p.outcome()
		}
		return
	}
	if len(live) == 1 {
		live[0].done <- mapErr("add submission", err)
		return
	}
	// One bad item (a form deleted meanwhile, a reused ID) fails the whole batch; retry each
	// alone so only the bad one fails.
	for _, p := range live {
		if err := d.writeAdds(shard, []*pendingAdd{p}); err != nil {
			p.done <- mapErr("add submission", err)
			continue
		}
		d.committed.put([]*pendingAdd{p})
		p.done <- p.outcome()
	}
}

// writeAdds writes the submissions, their events and one counter increment per form in one
// transaction. Items carrying a render token first spend its nonce there; an item whose nonce
// was already spent (before, or by an earlier item of the batch) is marked replayed and left
// out, without failing the others.
func (d *DB) writeAdds(shard int, batch []*pendingAdd) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if d.dialect == DialectPostgres && plainAdds(batch) {
		return d.writeAddsAtOnce(ctx, shard, batch)
	}
	return d.tx(ctx, func(tx *gorm.DB) error {
		for _, p := range batch {
			p.refused = nil // the transaction may run again
		}
		batch, err := spendTokens(tx, batch)
		if err != nil {
			return fmt.Errorf("spend form tokens: %w", err)
		}
		if batch, err = d.guardClosing(tx, batch); err != nil {
			return fmt.Errorf("closing rules: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		w := addsOf(shard, batch)
		if err := tx.Exec(w.submissions, w.submissionArgs...).Error; err != nil {
			return fmt.Errorf("insert submissions: %w", err)
		}
		if err := writeEmailIndex(tx, w.index, nil); err != nil {
			return fmt.Errorf("insert submission email index: %w", err)
		}
		if err := tx.Exec(w.events, w.eventArgs...).Error; err != nil {
			return fmt.Errorf("insert submission events: %w", err)
		}
		if err := tx.Exec(w.counts, w.countArgs...).Error; err != nil {
			return fmt.Errorf("count submissions: %w", err)
		}
		return nil
	})
}

// plainAdds is true when no item of the batch needs a check in the transaction (a render token,
// a one-per-email key, a submission limit) nor more than one email index row.
func plainAdds(batch []*pendingAdd) bool {
	for _, p := range batch {
		if p.token != nil || p.emailKey != "" || p.limit > 0 || len(p.emails) > 1 {
			return false
		}
	}
	return true
}

// writeAddsAtOnce writes a plain batch on PostgreSQL as one statement, its own transaction:
// the submissions and their events in data-modifying WITH clauses of the counters' upsert.
// One round trip instead of five (BEGIN, three statements, COMMIT) per group commit; the
// statement commits as a whole or not at all, as the transaction did.
func (d *DB) writeAddsAtOnce(ctx context.Context, shard int, batch []*pendingAdd) error {
	for _, p := range batch {
		p.refused = nil
	}
	w := addsOf(shard, batch)
	// The counters' rows are locked only after their forms' rows (FOR KEY SHARE, as the
	// submissions' foreign key check takes them), the order of the transaction this replaces:
	// a form's deletion, which locks the form and then its counters, never deadlocks with it.
	forms := make([]string, 0, 4)
	for i := 0; i < len(w.countArgs); i += 3 {
		forms = append(forms, w.countArgs[i].(string))
	}
	var sb strings.Builder
	sb.WriteString("WITH s AS (" + w.submissions + "), e AS (" + w.events + ")" +
		" INSERT INTO form_counters (form_id, shard, n) SELECT v.form_id, v.shard, v.n FROM (VALUES ")
	for i := range forms {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?::text,?::int,?::bigint)")
	}
	sb.WriteString(") v(form_id, shard, n) JOIN (SELECT id FROM forms WHERE id IN ? ORDER BY id FOR KEY SHARE) f ON f.id = v.form_id" +
		" ON CONFLICT (form_id, shard) DO UPDATE SET n = form_counters.n + excluded.n")
	args := make([]any, 0, len(w.submissionArgs)+len(w.eventArgs)+len(w.countArgs)+1)
	args = append(append(append(args, w.submissionArgs...), w.eventArgs...), w.countArgs...)
	args = append(args, forms)
	return d.write(ctx, func(db *gorm.DB) error { return db.Exec(sb.String(), args...).Error })
}

// adds is a batch's statements: the submissions' insert, their events' insert and the
// counters' upsert, each with its arguments, and the email index rows.
type adds struct {
	submissions, events, counts          string
	submissionArgs, eventArgs, countArgs []any
	index                                []emailIndexRow
}

func addsOf(shard int, batch []*pendingAdd) adds {
	var sb strings.Builder
	sb.WriteString("INSERT INTO submissions (id, workspace_id, form_id, submitted_at, updated_at, sealed, email_hash, form_version) VALUES ")
	args := make([]any, 0, len(batch)*8)
	events := make([]sealedEvent, 0, len(batch))
	counts := make(map[string]int64)
	var index []emailIndexRow
	for i, p := range batch {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?,?,?,?,?,?,?)")
		s := p.sub
		args = append(args, s.ID, s.WorkspaceID, s.FormID, s.SubmittedAt, s.UpdatedAt, s.Sealed, emailHashColumn(p.emails), s.FormVersion)
		events = append(events, p.event)
		counts[s.FormID]++
		index = append(index, indexRows(s.ID, p.emails)...)
	}
	w := adds{submissions: sb.String(), submissionArgs: args, index: index}
	w.events, w.eventArgs = eventsInsert(events)
	w.counts, w.countArgs = countsUpsert(shard, counts)
	return w
}

// spendTokens inserts the batch's token nonces and returns the items to store: those without
// a token and those whose nonce this insert claimed. The others are marked replayed. It also
// purges a few expired nonces (by the submissions' own clock), so the table stays the size of
// one token lifetime.
func spendTokens(tx *gorm.DB, batch []*pendingAdd) ([]*pendingAdd, error) {
	var now int64
	nonces := make([]string, 0, len(batch))
	first := make(map[string]*pendingAdd, len(batch))
	var sb strings.Builder
	args := make([]any, 0, len(batch)*2)
	for _, p := range batch {
		if p.token == nil {
			continue
		}
		now = max(now, p.sub.SubmittedAt)
		if _, dup := first[p.token.nonce]; dup {
			continue
		}
		first[p.token.nonce] = p
		if len(nonces) > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?)")
		args = append(args, p.token.nonce, p.token.expiresAt)
		nonces = append(nonces, p.token.nonce)
	}
	if len(nonces) == 0 {
		return batch, nil
	}
	if err := tx.Exec(`DELETE FROM used_form_tokens WHERE nonce IN (SELECT nonce FROM used_form_tokens WHERE expires_at < ? LIMIT 100)`, now).Error; err != nil {
		return nil, err
	}
	var claimed []string
	q := "INSERT INTO used_form_tokens (nonce, expires_at) VALUES " + sb.String() + " ON CONFLICT (nonce) DO NOTHING RETURNING nonce"
	if err := tx.Raw(q, args...).Scan(&claimed).Error; err != nil {
		return nil, err
	}
	won := make(map[*pendingAdd]bool, len(claimed))
	for _, n := range claimed {
		won[first[n]] = true
	}
	keep := make([]*pendingAdd, 0, len(batch))
	for _, p := range batch {
		if p.token != nil && !won[p] {
			p.refused = ports.ErrTokenUsed
			continue
		}
		keep = append(keep, p)
	}
	return keep, nil
}

// countsUpsert adds to the forms' counter rows of one shard with one upsert.
func countsUpsert(shard int, counts map[string]int64) (string, []any) {
	forms := make([]string, 0, len(counts))
	for id := range counts {
		forms = append(forms, id)
	}
	slices.Sort(forms) // a stable lock order
	var sb strings.Builder
	sb.WriteString("INSERT INTO form_counters (form_id, shard, n) VALUES ")
	args := make([]any, 0, len(forms)*3)
	for i, id := range forms {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?,?)")
		args = append(args, id, shard, counts[id])
	}
	sb.WriteString(" ON CONFLICT (form_id, shard) DO UPDATE SET n = form_counters.n + excluded.n")
	return sb.String(), args
}

// addCounts adds to the forms' counter rows of one shard with one upsert.
func addCounts(tx *gorm.DB, shard int, counts map[string]int64) error {
	if len(counts) == 0 {
		return nil
	}
	q, args := countsUpsert(shard, counts)
	return tx.Exec(q, args...).Error
}
