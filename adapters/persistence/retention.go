package persistence

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// RetentionStore deletes what plans and pending deletions no longer keep. Every deletion is a
// short transaction over at most a batch of rows chosen beforehand by a plain read, so the
// capture path's group commits queue behind it for milliseconds at most, and a SQLite write
// lock is never held while rows are searched for.
type RetentionStore struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.RetentionStore = (*RetentionStore)(nil)

// NewRetentionStore returns the store; cipher opens the submissions it hands out (their file
// answers name the files to delete with them).
func NewRetentionStore(db *DB, cipher ports.Cipher) *RetentionStore {
	return &RetentionStore{db: db, cipher: cipher}
}

// FormIDs returns the IDs of every form of the workspace, oldest first.
func (s *RetentionStore) FormIDs(ctx context.Context, workspaceID string) ([]string, error) {
	var ids []string
	err := s.db.read(ctx).Raw("SELECT id FROM forms WHERE workspace_id = ? ORDER BY created_at, id", workspaceID).Scan(&ids).Error
	if err != nil {
		return nil, mapErr("list form ids", err)
	}
	return ids, nil
}

// Expired returns up to limit of the form's submissions that x expires, oldest first. The
// count rule keeps the x.Keep most recent by (submitted_at, id): captures running meanwhile
// only add newer submissions, so what it returns stays outside the kept ones.
func (s *RetentionStore) Expired(ctx context.Context, workspaceID, formID string, x ports.Expiry, limit int) ([]*submission.Submission, error) {
	var rows []submissionRow
	if err := s.expired(ctx, workspaceID, formID, x, limit, "id, workspace_id, form_id, submitted_at, updated_at, sealed", &rows); err != nil {
		return nil, err
	}
	return openRows(ctx, s.cipher, rows)
}

// ExpiredRefs is Expired reading only the IDs and times.
func (s *RetentionStore) ExpiredRefs(ctx context.Context, workspaceID, formID string, x ports.Expiry, limit int) ([]ports.SubmissionRef, error) {
	var rows []struct {
		ID          string `gorm:"column:id"`
		SubmittedAt int64  `gorm:"column:submitted_at"`
	}
	if err := s.expired(ctx, workspaceID, formID, x, limit, "id, submitted_at", &rows); err != nil {
		return nil, err
	}
	out := make([]ports.SubmissionRef, len(rows))
	for i, r := range rows {
		out[i] = ports.SubmissionRef{WorkspaceID: workspaceID, FormID: formID, ID: r.ID, SubmittedAt: fromMillis(r.SubmittedAt)}
	}
	return out, nil
}

func (s *RetentionStore) expired(ctx context.Context, workspaceID, formID string, x ports.Expiry, limit int, columns string, dst any) error {
	if limit <= 0 || (x.Before.IsZero() && x.Keep <= 0) {
		return nil
	}
	var conds []string
	var args []any
	if !x.Before.IsZero() {
		conds = append(conds, "submitted_at < ?")
		args = append(args, toMillis(x.Before))
	}
	if x.Keep > 0 {
		var edge []struct {
			SubmittedAt int64  `gorm:"column:submitted_at"`
			ID          string `gorm:"column:id"`
		}
		err := s.db.read(ctx).Raw("SELECT submitted_at, id FROM submissions WHERE form_id = ? AND workspace_id = ? "+
			"ORDER BY submitted_at DESC, id DESC LIMIT 1 OFFSET ?", formID, workspaceID, x.Keep-1).Scan(&edge).Error
		if err != nil {
			return mapErr("find kept submissions", err)
		}
		if len(edge) == 1 {
			conds = append(conds, "(submitted_at, id) < (?, ?)")
			args = append(args, edge[0].SubmittedAt, edge[0].ID)
		}
	}
	if len(conds) == 0 {
		return nil
	}
	where := conds[0]
	if len(conds) == 2 {
		where = "(" + conds[0] + " OR " + conds[1] + ")"
	}
	q := "SELECT " + columns + " FROM submissions WHERE form_id = ? AND workspace_id = ? AND " + where + " ORDER BY submitted_at, id LIMIT ?"
	if err := s.db.read(ctx).Raw(q, append(append([]any{formID, workspaceID}, args...), limit)...).Scan(dst).Error; err != nil {
		return mapErr("list expired submissions", err)
	}
	return nil
}

func openRows(ctx context.Context, c ports.Cipher, rows []submissionRow) ([]*submission.Submission, error) {
	out := make([]*submission.Submission, 0, len(rows))
	for _, row := range rows {
		plain, err := c.Open(ctx, row.WorkspaceID, row.Sealed, submissionAAD(row.ID))
		if err != nil {
			return nil, fmt.Errorf("open submission %s: %w", row.ID, err)
		}
		sub, err := decodeSubmission(row, plain)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, nil
}

// CaptureWrites counts this process's group commits of captures. On SQLite, whose one writer
// every capture of the deployment goes through (serve runs alone there), that is every
// capture; on PostgreSQL other processes capture too, so ok is false.
func (s *RetentionStore) CaptureWrites() (n uint64, ok bool) {
	return s.db.groupCommits.Load(), s.db.dialect == DialectSQLite
}

// DeleteSubmissions deletes the submissions named in refs (each under its workspace and form),
// their workflow runs (which hold copies of their answers), their email index and
// one-per-email keys, and the stored responses of the requests that created them (which hold
// their answers too); it adjusts the forms' counts and writes the tombstones of the deleted
// submissions (so a backup restore does not bring them back) and the audit events, all in one
// transaction (see the port for when its commit waits for the disk).
func (s *RetentionStore) DeleteSubmissions(ctx context.Context, refs []ports.SubmissionRef, events ports.DeletionAudit) (ports.SubmissionDeletion, error) {
	type group struct{ workspaceID, formID string }
	var groups []group // in the order of refs: a retention batch is one form, so one group
	byGroup := map[group][]string{}
	for _, r := range refs {
		g := group{r.WorkspaceID, r.FormID}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], r.ID)
	}
	var deleted int64
	// A batch without audit events is redone by the next pass if a crash loses it, so its
	// commit need not wait for the disk; the one with the events (a pass's or an erasure's
	// last) waits, and makes the earlier ones durable with it (the log is written in order).
	run := s.db.redoableTx
	if events != nil {
		run = s.db.tx
	}
	var began time.Time // when the transaction had the writer (fn may run again after a retry)
	err := run(ctx, func(tx *gorm.DB) error {
		if began.IsZero() {
			began = time.Now()
		}
		deleted = 0
		counts := map[string]int64{}
		for _, g := range groups {
			ids := byGroup[g]
			list := jsonIDs(ids)
			if err := deleteDependents(tx, "runs", ids, list, "AND workspace_id = ?", g.workspaceID); err != nil {
				return mapErr("delete runs of submissions", err)
			}
			// The statement returns no rows: reading each deleted row back through the driver
			// cost a quarter of the statement. The form in the condition makes the count of
			// deleted rows the form's; which ones went is known without asking when all did.
			res := tx.Exec(deleteSubmissionsSQL(tx), list, g.workspaceID, g.formID)
			if res.Error != nil {
				return mapErr("delete submissions", res.Error)
			}
			gone, goneList, err := deletedOf(tx, ids, list, res.RowsAffected)
			if err != nil {
				return err
			}
			// What the foreign keys cascade to, which a redoable transaction on SQLite does
			// not enforce (see DB.redoableTx); elsewhere the cascade has already done it.
			for _, table := range []string{"submission_email_index", "form_email_keys"} {
				if err := deleteDependents(tx, table, gone, goneList, ""); err != nil {
					return mapErr("delete "+table+" of submissions", err)
				}
			}
			if err := forgetResponses(tx, g.workspaceID, gone, goneList); err != nil {
				return err
			}
			if err := forgetEvents(tx, g.workspaceID, gone, goneList, time.Now()); err != nil {
				return err
			}
			if err := writeTombstoneList(tx, ports.TombstoneSubmission, g.workspaceID, gone); err != nil {
				return err
			}
			counts[g.formID] -= res.RowsAffected
			deleted += res.RowsAffected
		}
		if err := addCounts(tx, 0, counts); err != nil {
			return mapErr("count deleted submissions", err)
		}
		if events == nil {
			return nil
		}
		evs, err := events(deleted)
		if err != nil {
			return err
		}
		return writeAudit(tx, evs)
	})
	if err != nil {
		return ports.SubmissionDeletion{}, err
	}
	return ports.SubmissionDeletion{Deleted: deleted, Held: time.Since(began)}, nil
}

// deleteSubmissionsSQL deletes the submissions of one form of a workspace named by a list of
// IDs (see idList). SQLite's planner, given the form, would walk the form's time index from end
// to end; the unary plus keeps it on the ID index.
func deleteSubmissionsSQL(tx *gorm.DB) string {
	form := "+form_id = ?"
	if tx.Dialector.Name() == DialectPostgres {
		form = "form_id = ?"
	}
	return "DELETE FROM submissions WHERE id IN (" + idList(tx) + ") AND workspace_id = ? AND " + form
}

// deletedOf returns which of ids (list is their jsonIDs) a deletion of n rows took, and their
// jsonIDs: all of them when n says so (nearly always); otherwise those no longer in the table
// (another request may have deleted some first, whose tombstone it wrote: a second one is
// harmless; an ID of another workspace or form is still there, and is left out).
func deletedOf(tx *gorm.DB, ids []string, list string, n int64) ([]string, string, error) {
	if n == int64(len(ids)) {
		return ids, list, nil
	}
	var still []string
	if err := tx.Raw("SELECT id FROM submissions WHERE id IN ("+idList(tx)+")", list).Scan(&still).Error; err != nil {
		return nil, "", mapErr("find deleted submissions", err)
	}
	there := make(map[string]bool, len(still))
	for _, id := range still {
		there[id] = true
	}
	gone := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return there[id] })
	return gone, jsonIDs(gone), nil
}

// deleteDependents deletes the rows of table whose submission_id is one of ids (list is their
// jsonIDs), with the further condition cond (its arguments args). Most batches have no such
// rows at all (runs, further email answers and one-per-email keys are kept for some forms
// only), yet looking each ID up in the three tables took a third of a batch's hold on the
// writer; so one probe of the table's submission_id index, over the range the IDs span, first
// says whether any row can match. (On SQLite, whose text comparison is the bytes' order,
// as Go's is; PostgreSQL's depends on the database's collation, and its look-ups cost less.)
func deleteDependents(tx *gorm.DB, table string, ids []string, list, cond string, args ...any) error {
	if len(ids) == 0 {
		return nil
	}
	if tx.Dialector.Name() == DialectSQLite {
		var found []int
		err := tx.Raw("SELECT 1 FROM "+table+" WHERE submission_id BETWEEN ? AND ? LIMIT 1", slices.Min(ids), slices.Max(ids)).Scan(&found).Error
		if err != nil || len(found) == 0 {
			return err
		}
	}
	return tx.Exec("DELETE FROM "+table+" WHERE submission_id IN ("+idList(tx)+") "+cond, append([]any{list}, args...)...).Error
}

// PurgeExpiredLogs deletes up to limit webhook deliveries of the form created before the time.
func (s *RetentionStore) PurgeExpiredLogs(ctx context.Context, workspaceID, formID string, before time.Time, limit int) (int64, error) {
	var ids []string
	err := s.db.read(ctx).Raw("SELECT id FROM deliveries WHERE form_id = ? AND workspace_id = ? AND created_at < ? LIMIT ?",
		formID, workspaceID, toMillis(before), limit).Scan(&ids).Error
	if err != nil {
		return 0, mapErr("list expired deliveries", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	var n int64
	err = s.db.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("DELETE FROM deliveries WHERE id IN ?", ids)
		n = res.RowsAffected
		return mapErr("delete expired deliveries", res.Error)
	})
	return n, err
}

// DeleteDeliveriesOf reads the form's deliveries a page at a time (oldest first, through the
// (form_id, created_at) index), opens each body (or, for a delivery of a stored event, reads
// its event's submission_id) and deletes those about the submissions.
func (s *RetentionStore) DeleteDeliveriesOf(ctx context.Context, workspaceID, formID string, submissionIDs []string) (int64, error) {
	wanted := make(map[string]bool, len(submissionIDs))
	for _, id := range submissionIDs {
		wanted[id] = true
	}
	const page = 500
	var deleted int64
	var afterAt int64 = -1
	afterID := ""
	for {
		var rows []struct {
			ID           string  `gorm:"column:id"`
			CreatedAt    int64   `gorm:"column:created_at"`
			Body         []byte  `gorm:"column:body"`
			SubmissionID *string `gorm:"column:submission_id"`
		}
		// A delivery of a stored event holds no body: its event's row in the outbox names the
		// submission (it keeps submission_id when the submission goes; a purged row leaves
		// the delivery nothing of the submission but the event's ID).
		err := s.db.read(ctx).Raw("SELECT d.id, d.created_at, d.body, o.submission_id FROM deliveries d LEFT JOIN outbox o ON o.id = d.event_id AND length(d.body) = 0 "+
			"WHERE d.form_id = ? AND d.workspace_id = ? AND (d.created_at, d.id) > (?, ?) ORDER BY d.created_at, d.id LIMIT ?",
			formID, workspaceID, afterAt, afterID, page).Scan(&rows).Error
		if err != nil {
			return deleted, mapErr("read deliveries", err)
		}
		var doomed []string
		for _, row := range rows {
			if len(row.Body) == 0 {
				if row.SubmissionID != nil && wanted[*row.SubmissionID] {
					doomed = append(doomed, row.ID)
				}
				continue
			}
			plain, err := s.cipher.Open(ctx, workspaceID, row.Body, deliveryAAD(row.ID))
			if err != nil {
				return deleted, fmt.Errorf("open body of delivery %s: %w", row.ID, err)
			}
			var body struct {
				Data struct {
					SubmissionID string `json:"submission_id"`
				} `json:"data"`
			}
			if jsoncodec.Unmarshal(plain, &body) == nil && wanted[body.Data.SubmissionID] {
				doomed = append(doomed, row.ID)
			}
		}
		if len(doomed) > 0 {
			err := s.db.tx(ctx, func(tx *gorm.DB) error {
				res := tx.Exec("DELETE FROM deliveries WHERE id IN ? AND workspace_id = ?", doomed, workspaceID)
				deleted += res.RowsAffected
				return mapErr("delete deliveries", res.Error)
			})
			if err != nil {
				return deleted, err
			}
		}
		if len(rows) < page {
			return deleted, nil
		}
		afterAt, afterID = rows[len(rows)-1].CreatedAt, rows[len(rows)-1].ID
	}
}

// purgeStep is one kind of row of a workspace: how to find a batch of it and how to delete
// that batch by the values found.
type purgeStep struct {
	find    string // selects one key column; args: workspace ID, limit
	delete  string // deletes by "IN ?" over the found keys, and the workspace ID
	numeric bool   // the key is an integer (the outbox's seq)
	count   func(*ports.WorkspacePurge, int64)
}

func (p purgeStep) keys(ctx context.Context, db *DB, workspaceID string, limit int) ([]any, error) {
	q := db.read(ctx).Raw(p.find, workspaceID, limit)
	var out []any
	if p.numeric {
		var ks []int64
		if err := q.Scan(&ks).Error; err != nil {
			return nil, err
		}
		for _, k := range ks {
			out = append(out, k)
		}
		return out, nil
	}
	var ks []string
	if err := q.Scan(&ks).Error; err != nil {
		return nil, err
	}
	for _, k := range ks {
		out = append(out, k)
	}
	return out, nil
}

var purgeSteps = []purgeStep{
	{"SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE w.workspace_id = ? LIMIT ?",
		"DELETE FROM deliveries WHERE id IN ? AND workspace_id = ?", false, func(p *ports.WorkspacePurge, n int64) { p.Deliveries += n }},
	{"SELECT id FROM runs WHERE workspace_id = ? LIMIT ?",
		"DELETE FROM runs WHERE id IN ? AND workspace_id = ?", false, func(p *ports.WorkspacePurge, n int64) { p.Runs += n }},
	{"SELECT seq FROM outbox WHERE workspace_id = ? LIMIT ?",
		"DELETE FROM outbox WHERE seq IN ? AND workspace_id = ?", true, func(p *ports.WorkspacePurge, n int64) { p.Events += n }},
	// The keys of requests that created submissions stay, their responses deleted with the
	// submissions (DeleteSubmissions, and the forms' last transaction below).
	{"SELECT key FROM idempotency_keys WHERE workspace_id = ? AND submission_id IS NULL LIMIT ?",
		"DELETE FROM idempotency_keys WHERE key IN ? AND workspace_id = ? AND submission_id IS NULL", false, func(*ports.WorkspacePurge, int64) {}},
	{"SELECT id FROM webhooks WHERE workspace_id = ? LIMIT ?",
		"DELETE FROM webhooks WHERE id IN ? AND workspace_id = ?", false, func(p *ports.WorkspacePurge, n int64) { p.Webhooks += n }},
	{"SELECT id FROM workflows WHERE workspace_id = ? LIMIT ?",
		"DELETE FROM workflows WHERE id IN ? AND workspace_id = ?", false, func(p *ports.WorkspacePurge, n int64) { p.Workflows += n }},
}

// PurgeWorkspaceData deletes the workspace's remaining data in batches (see the port); the
// forms go last, in the transaction that writes the tombstones of the forms and of the
// workspace, and the audit events. Submissions still present
// (captured while the purge ran) go with their forms.
func (s *RetentionStore) PurgeWorkspaceData(ctx context.Context, workspaceID string, limit int,
	events func(ports.WorkspacePurge) ([]audit.Event, error)) (ports.WorkspacePurge, error) {
	var done ports.WorkspacePurge
	for _, step := range purgeSteps {
		for {
			keys, err := step.keys(ctx, s.db, workspaceID, limit)
			if err != nil {
				return done, mapErr("find workspace data", err)
			}
			if len(keys) == 0 {
				break
			}
			var n int64
			err = s.db.tx(ctx, func(tx *gorm.DB) error {
				res := tx.Exec(step.delete, keys, workspaceID)
				n = res.RowsAffected
				return mapErr("delete workspace data", res.Error)
			})
			if err != nil {
				return done, err
			}
			step.count(&done, n)
			if len(keys) < limit {
				break
			}
		}
	}
	err := s.db.tx(ctx, func(tx *gorm.DB) error {
		var forms []string
		if err := tx.Raw("SELECT id FROM forms WHERE workspace_id = ?", workspaceID).Scan(&forms).Error; err != nil {
			return mapErr("find workspace forms", err)
		}
		total := done
		if len(forms) > 0 {
			ts := make([]ports.Tombstone, len(forms))
			for i, id := range forms {
				// Submissions captured while the purge ran go with their forms.
				if err := writeSubmissionTombstones(tx, workspaceID, id, time.Now()); err != nil {
					return err
				}
				ts[i] = ports.Tombstone{Kind: ports.TombstoneForm, ID: id, WorkspaceID: workspaceID}
			}
			if err := writeTombstones(tx, ts); err != nil {
				return err
			}
			for _, q := range []string{
				"DELETE FROM submissions WHERE workspace_id = ? AND form_id IN ?",
				"DELETE FROM webhooks WHERE workspace_id = ? AND form_id IN ?",
				"DELETE FROM workflows WHERE workspace_id = ? AND form_id IN ?",
				"DELETE FROM drafts WHERE workspace_id = ? AND form_id IN ?",
			} {
				if err := tx.Exec(q, workspaceID, forms).Error; err != nil {
					return mapErr("delete workspace forms", err)
				}
			}
			if err := tx.Exec("DELETE FROM form_counters WHERE form_id IN ?", forms).Error; err != nil {
				return mapErr("delete form counters", err)
			}
			if err := forgetOrphanedResponses(tx, workspaceID); err != nil {
				return err
			}
			res := tx.Exec("DELETE FROM forms WHERE workspace_id = ? AND id IN ?", workspaceID, forms)
			if res.Error != nil {
				return mapErr("delete workspace forms", res.Error)
			}
			total.Forms += res.RowsAffected
		}
		if total.Any() {
			// A restore re-applies it: the workspace's data is deleted again, its row stays.
			if err := writeTombstones(tx, []ports.Tombstone{{Kind: ports.TombstoneWorkspace, ID: workspaceID, WorkspaceID: workspaceID}}); err != nil {
				return err
			}
		}
		if events == nil {
			done = total
			return nil
		}
		evs, err := events(total)
		if err != nil {
			return err
		}
		if err := writeAudit(tx, evs); err != nil {
			return err
		}
		done = total
		return nil
	})
	return done, err
}
