package workspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// DefaultRetentionBatch is how many submissions the retention job deletes per transaction.
const DefaultRetentionBatch = 1000

// RunRetention is one pass of the retention job over every workspace.
type RunRetention struct {
	// Rest paces the pass: after a deletion transaction during which captures were written
	// (or since the last rest), the next one waits Rest times as long as the last held the
	// writer, leaving the database to the capture path; with no capture about, it goes on at
	// full speed.
	// Serve paces it; 0 always runs at full speed, as `formward retention run` does.
	Rest float64
	// Batch is how many submissions one deletion transaction takes (0: the handler's own,
	// DefaultRetentionBatch). Smaller batches hold the database for less at a time.
	Batch int
}

// RetentionResult counts what one pass deleted.
type RetentionResult struct {
	SubmissionsDeleted int64 `json:"submissions_deleted"`
	FilesDeleted       int64 `json:"files_deleted"`
	WorkspacesDeleted  int64 `json:"workspaces_deleted"`
	DraftsDeleted      int64 `json:"drafts_deleted"`
}

// RunRetentionHandler applies each workspace's plan (Free: the 100 most recent submissions of
// each form; Starter: 12 months; Growth: 24 months; Business: everything) and its pending
// deletions: a cancelled workspace's data once its 90 days are over, what a downgrade stopped
// keeping once its 90 days are over. Files go with their submissions, before them, so a failed
// pass leaves the submission to delete again. It also forgets audit events older than 400 days,
// expired sessions and one-time flashes, and Idempotency-Keys older than their window (with
// their stored responses).
// Run it in one process at a time (the lease); it is safe to repeat.
type RunRetentionHandler struct {
	workspaces ports.WorkspaceRepository
	forms      ports.FormRepository
	store      ports.RetentionStore
	files      ports.ObjectStore
	audit      ports.AuditLog
	sessions   ports.SessionRepository
	throttle   ports.SignInThrottle
	// idempotency holds the API's Idempotency-Keys; nil leaves them.
	idempotency ports.IdempotencyStore
	// flashes are the dashboard's one-time flashes; nil leaves them.
	flashes ports.FlashRepository
	// drafts are respondents' saved progress; nil leaves them.
	drafts ports.DraftRepository
	ids    ports.IDs
	clock  ports.Clock
	batch  int
}

// WithDrafts returns the handler deleting expired drafts too.
func (h RunRetentionHandler) WithDrafts(drafts ports.DraftRepository) RunRetentionHandler {
	h.drafts = drafts
	return h
}

// NewRunRetentionHandler makes the command; files may be nil when no object store is
// configured, batch 0 means DefaultRetentionBatch.
func NewRunRetentionHandler(workspaces ports.WorkspaceRepository, forms ports.FormRepository, store ports.RetentionStore,
	files ports.ObjectStore, auditLog ports.AuditLog, sessions ports.SessionRepository, throttle ports.SignInThrottle,
	idempotency ports.IdempotencyStore, flashes ports.FlashRepository, ids ports.IDs, clock ports.Clock, batch int) RunRetentionHandler {
	if batch <= 0 {
		batch = DefaultRetentionBatch
	}
	return RunRetentionHandler{workspaces: workspaces, forms: forms, store: store, files: files, audit: auditLog, sessions: sessions,
		throttle: throttle, idempotency: idempotency, flashes: flashes, ids: ids, clock: clock, batch: batch}
}

// Handle runs one pass. Each workspace it deleted something of gets one retention.deleted
// audit event with the counts, written in the transaction of the last deletion.
func (h RunRetentionHandler) Handle(ctx context.Context, cmd RunRetention) (RetentionResult, error) {
	if cmd.Batch > 0 {
		h.batch = cmd.Batch // this pass's copy of the handler
	}
	now := h.clock.Now()
	var total RetentionResult
	all, err := h.workspaces.List(ctx)
	if err != nil {
		return total, err
	}
	pace := &pacer{store: h.store, rest: cmd.Rest}
	var errs []error
	for _, w := range all {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		r, err := h.workspace(ctx, w, now, pace)
		total.SubmissionsDeleted += r.SubmissionsDeleted
		total.FilesDeleted += r.FilesDeleted
		total.WorkspacesDeleted += r.WorkspacesDeleted
		if err != nil {
			// One workspace's failure does not hold back the others; the next pass retries it.
			errs = append(errs, fmt.Errorf("retention of workspace %s: %w", w.ID(), err))
		}
	}
	if h.audit != nil {
		if _, err := h.audit.Purge(ctx, now.Add(-audit.Retention)); err != nil {
			errs = append(errs, fmt.Errorf("purge audit events: %w", err))
		}
	}
	if h.sessions != nil {
		if _, err := h.sessions.Purge(ctx, now); err != nil {
			errs = append(errs, fmt.Errorf("purge sessions: %w", err))
		}
	}
	if h.throttle != nil {
		if err := h.throttle.Purge(ctx, now.Add(-accounts.LongestThrottleWindow)); err != nil {
			errs = append(errs, fmt.Errorf("purge sign-in failures: %w", err))
		}
	}
	if h.idempotency != nil {
		// Their stored responses can hold answers: nothing keeps them past the window.
		if err := h.idempotency.Purge(ctx, now.Add(-ports.IdempotencyWindow)); err != nil {
			errs = append(errs, fmt.Errorf("purge idempotency keys: %w", err))
		}
	}
	if h.flashes != nil {
		if _, err := h.flashes.Purge(ctx, now); err != nil {
			errs = append(errs, fmt.Errorf("purge flashes: %w", err))
		}
	}
	if h.drafts != nil {
		// A draft lives its form's ttl_days after its last save; a submitted one keeps only
		// its row (no answers), so that its link can say it was used, until then.
		n, err := capture.SweepDrafts(ctx, h.drafts, now)
		total.DraftsDeleted = n
		if err != nil {
			errs = append(errs, fmt.Errorf("delete expired drafts: %w", err))
		}
	}
	return total, errors.Join(errs...)
}

func (h RunRetentionHandler) workspace(ctx context.Context, w *workspace.Workspace, now time.Time, pace *pacer) (RetentionResult, error) {
	d := &deletion{h: h, workspaceID: w.ID(), now: now, pace: pace}
	if w.DueForDeletion(now) {
		return h.purgeWorkspace(ctx, d, w)
	}
	rule := w.EffectiveRetention(now)
	if rule.Keep > 0 || rule.MaxAge > 0 {
		x := ports.Expiry{Keep: rule.Keep}
		if rule.MaxAge > 0 {
			x.Before = now.Add(-rule.MaxAge)
		}
		if err := d.expire(ctx, x); err != nil {
			return d.result(), err
		}
		if err := d.finish(ctx, d.events); err != nil {
			return d.result(), err
		}
	}
	if err := h.settle(ctx, w, now); err != nil {
		return d.result(), err
	}
	return d.result(), nil
}

// purgeWorkspace deletes every submission (with its files) and then the rest of the
// workspace's data; the workspace, its members and its audit log stay.
func (h RunRetentionHandler) purgeWorkspace(ctx context.Context, d *deletion, w *workspace.Workspace) (RetentionResult, error) {
	// Everything received up to now; later captures go with their forms at the end.
	if err := d.expire(ctx, ports.Expiry{Before: d.now.Add(time.Millisecond)}); err != nil {
		return d.result(), err
	}
	if err := d.finish(ctx, nil); err != nil {
		return d.result(), err
	}
	if h.files != nil {
		for _, id := range d.formIDs {
			if err := h.files.DeletePrefix(ctx, ports.FormFilesPrefix(w.ID(), id)); err != nil {
				return d.result(), fmt.Errorf("delete form files: %w", err)
			}
		}
	}
	var purged ports.WorkspacePurge
	purged, err := h.store.PurgeWorkspaceData(ctx, w.ID(), h.batch, func(p ports.WorkspacePurge) ([]audit.Event, error) {
		if !p.Any() && d.submissions == 0 {
			return nil, nil
		}
		return d.events(0, map[string]any{"workspace_data": true, "forms_deleted": p.Forms, "webhooks_deleted": p.Webhooks,
			"workflows_deleted": p.Workflows, "deliveries_deleted": p.Deliveries + d.deliveries,
			"runs_deleted": p.Runs, "events_deleted": p.Events})
	})
	if err != nil {
		return d.result(), err
	}
	r := d.result()
	if purged.Any() || d.submissions > 0 {
		r.WorkspacesDeleted = 1
	}
	return r, h.settle(ctx, w, d.now)
}

// settle forgets a downgrade whose 90 days are over, once its data is gone.
func (h RunRetentionHandler) settle(ctx context.Context, w *workspace.Workspace, now time.Time) error {
	if w.RetainedPlan() == "" || w.DataDeletionAt() == nil || now.Before(*w.DataDeletionAt()) {
		return nil
	}
	_, err := h.workspaces.Update(ctx, w.ID(), func(w *workspace.Workspace) (ports.Effects, error) {
		w.SettleDowngrade(now)
		return ports.Effects{}, nil
	})
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	return err
}

// deletion is one workspace's part of a pass. The last batch of a form is held back until
// the next one is found, so the workspace's very last batch is deleted together with its
// audit event.
type deletion struct {
	h           RunRetentionHandler
	workspaceID string
	now         time.Time
	pace        *pacer
	formIDs     []string

	held        []ports.SubmissionRef
	heldFiles   int64
	submissions int64
	files       int64
	deliveries  int64
}

func (d *deletion) result() RetentionResult {
	return RetentionResult{SubmissionsDeleted: d.submissions, FilesDeleted: d.files}
}

// expire deletes, form by form, the submissions x expires and their files; each form's last
// batch is held back (see deletion).
func (d *deletion) expire(ctx context.Context, x ports.Expiry) error {
	ids, err := d.h.store.FormIDs(ctx, d.workspaceID)
	if err != nil {
		return err
	}
	d.formIDs = ids
	for _, formID := range ids {
		f, err := d.h.forms.Get(ctx, d.workspaceID, formID)
		if errors.Is(err, domain.ErrNotFound) {
			continue // deleted meanwhile, with its submissions
		}
		if err != nil {
			return err
		}
		files, err := d.mayHoldFiles(ctx, f)
		if err != nil {
			return err
		}
		var newest time.Time
		for {
			// One more than a batch tells whether this batch is the form's last.
			batch, err := d.next(ctx, f, x, files)
			if err != nil {
				return err
			}
			if len(batch.refs) == 0 {
				break
			}
			last := len(batch.refs) <= d.h.batch
			if !last {
				batch.refs = batch.refs[:d.h.batch]
			}
			if err := d.flush(ctx, nil); err != nil {
				return err
			}
			newest = batch.refs[len(batch.refs)-1].SubmittedAt
			d.held = append(d.held, batch.refs...)
			d.heldFiles += batch.files
			if last {
				break
			}
			if err := d.flush(ctx, nil); err != nil {
				return err
			}
		}
		if err := d.purgeLogs(ctx, formID, x, newest); err != nil {
			return err
		}
	}
	return nil
}

// purgeLogs deletes the form's webhook deliveries as old as what the plan no longer keeps:
// before the age limit, or (count rule) before the newest submission deleted this pass, since
// a delivery is never older than the submission it carries.
func (d *deletion) purgeLogs(ctx context.Context, formID string, x ports.Expiry, newest time.Time) error {
	before := x.Before
	if newest.After(before) {
		before = newest
	}
	if before.IsZero() {
		return nil
	}
	for {
		n, err := d.h.store.PurgeExpiredLogs(ctx, d.workspaceID, formID, before, d.h.batch)
		if err != nil {
			return err
		}
		d.deliveries += n
		if n < int64(d.h.batch) {
			return nil
		}
	}
}

// expiredBatch is the next batch of a form's expired submissions (and the one read ahead), the
// files of the batch proper already deleted.
type expiredBatch struct {
	refs  []ports.SubmissionRef
	files int64
}

// next reads up to one more than a batch of the form's expired submissions. Only a form that
// may hold files has its submissions opened (their file answers name what to delete, and are
// counted); the others are deleted by ID.
func (d *deletion) next(ctx context.Context, f *form.Form, x ports.Expiry, files bool) (expiredBatch, error) {
	if !files {
		refs, err := d.h.store.ExpiredRefs(ctx, d.workspaceID, f.ID(), x, d.h.batch+1)
		return expiredBatch{refs: refs}, err
	}
	subs, err := d.h.store.Expired(ctx, d.workspaceID, f.ID(), x, d.h.batch+1)
	if err != nil || len(subs) == 0 {
		return expiredBatch{}, err
	}
	// Files of the batch proper only: the one read ahead is the next batch's.
	n, err := d.deleteFiles(ctx, f, subs[:min(len(subs), d.h.batch)])
	if err != nil {
		return expiredBatch{}, err
	}
	b := expiredBatch{files: n}
	for _, s := range subs {
		b.refs = append(b.refs, ports.SubmissionRef{WorkspaceID: s.WorkspaceID(), FormID: s.FormID(), ID: s.ID(), SubmittedAt: s.SubmittedAt()})
	}
	return b, nil
}

// mayHoldFiles reports whether the form's submissions can have stored files: it has a file
// field, or files are stored under its prefix (answers to a file field since removed).
func (d *deletion) mayHoldFiles(ctx context.Context, f *form.Form) (bool, error) {
	if d.h.files == nil {
		return false, nil
	}
	for _, fl := range f.Fields() {
		if fl.Type == form.TypeFile {
			return true, nil
		}
	}
	used, err := d.h.files.Usage(ctx, ports.FormFilesPrefix(f.WorkspaceID(), f.ID()))
	if err != nil {
		return false, fmt.Errorf("form file usage: %w", err)
	}
	return used > 0, nil
}

// flush deletes the held batch, with the audit events of events when not nil.
func (d *deletion) flush(ctx context.Context, events func(int64, map[string]any) ([]audit.Event, error)) error {
	if len(d.held) == 0 {
		return nil
	}
	var record ports.DeletionAudit
	if events != nil {
		record = func(deleted int64) ([]audit.Event, error) { return events(deleted, nil) }
	}
	if err := d.pace.wait(ctx); err != nil {
		return err
	}
	r, err := d.h.store.DeleteSubmissions(ctx, d.held, record)
	if err != nil {
		return err
	}
	d.pace.rested(r.Held)
	d.submissions += r.Deleted
	d.files += d.heldFiles
	d.held, d.heldFiles = nil, 0
	return nil
}

// pacer spaces a pass's deletion transactions (see RunRetention.Rest): after one during which
// captures were written, the next starts only once Rest times as long as it held the writer
// has passed. The
// pass meanwhile reads its next batch and deletes that batch's files, which need no writer.
type pacer struct {
	store ports.RetentionStore
	rest  float64
	// captures is the store's CaptureWrites when the pass last looked.
	captures uint64
	// next is the earliest start of the next deletion transaction.
	next time.Time
}

// wait waits until the next deletion transaction may start.
func (p *pacer) wait(ctx context.Context) error {
	d := time.Until(p.next) // wall time, not the clock port: this paces the database, whatever time the job applies
	if d > 0 && !ports.Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}

// rested sets the rest after a deletion transaction that held the writer for held.
func (p *pacer) rested(held time.Duration) {
	if p.rest > 0 && p.competing() {
		p.next = time.Now().Add(time.Duration(p.rest * float64(held)))
	}
}

// competing reports whether captures were written since the pass last looked (during the
// transaction just made, or the rest before it); captures written during a rest count at the
// next look. It is always true when the store cannot tell.
func (p *pacer) competing() bool {
	n, ok := p.store.CaptureWrites()
	if !ok {
		return true
	}
	moved := n != p.captures
	p.captures = n
	return moved
}

// finish deletes the last held batch with the pass's audit event (when events is not nil and
// something was deleted).
func (d *deletion) finish(ctx context.Context, events func(int64, map[string]any) ([]audit.Event, error)) error {
	if len(d.held) == 0 {
		if events != nil && d.deliveries > 0 {
			// Only delivery logs went: they were deleted in their own batches; record them alone.
			evs, err := events(0, nil)
			if err != nil {
				return err
			}
			if d.h.audit != nil && len(evs) > 0 {
				return d.h.audit.Append(ctx, evs...)
			}
		}
		return nil
	}
	return d.flush(ctx, events)
}

// events is the pass's retention.deleted event for the workspace: the counts so far plus the
// batch being deleted.
func (d *deletion) events(deleted int64, extra map[string]any) ([]audit.Event, error) {
	details := map[string]any{
		"submissions_deleted": d.submissions + deleted,
		"files_deleted":       d.files + d.heldFiles,
		"deliveries_deleted":  d.deliveries,
	}
	for k, v := range extra {
		details[k] = v
	}
	e, err := audit.New(d.h.ids.New(ports.PrefixAudit), d.workspaceID, audit.RetentionDeleted, audit.System, nil, "", details, d.now)
	if err != nil {
		return nil, err
	}
	return []audit.Event{e}, nil
}

// deleteFiles deletes the stored files of the submissions and returns how many their answers
// named.
func (d *deletion) deleteFiles(ctx context.Context, f *form.Form, subs []*submission.Submission) (int64, error) {
	var n int64
	for _, s := range subs {
		c, err := deleteFilesOf(ctx, d.h.files, f, s)
		if err != nil {
			return n, err
		}
		n += int64(c)
	}
	return n, nil
}

// deleteFilesOf deletes the files uploaded with s: everything under its own prefix, and older
// uploads its file answers name under the form's prefix. It returns how many files its answers
// named. A submission whose answers can hold no upload (no file answer, no answer to a field
// the form no longer has) has nothing stored, and costs the object store no call.
func deleteFilesOf(ctx context.Context, files ports.ObjectStore, f *form.Form, s *submission.Submission) (int, error) {
	types := make(map[string]form.FieldType, len(f.Fields()))
	for _, fl := range f.Fields() {
		types[fl.ID] = fl.Type
	}
	prefix := ports.FormFilesPrefix(s.WorkspaceID(), s.FormID())
	own := ports.SubmissionFilesPrefix(s.WorkspaceID(), s.FormID(), s.ID())
	var keys []string
	count, unknown := 0, false
	for id, v := range s.Data() {
		t, ok := types[id]
		if !ok {
			unknown = true
		}
		if ok && t != form.TypeFile {
			continue
		}
		for _, ref := range v.Strings() {
			if key, ok := capture.FileKey(ref, prefix); ok {
				count++
				if len(key) < len(own) || key[:len(own)] != own {
					keys = append(keys, key)
				}
			}
		}
	}
	if files == nil || (count == 0 && !unknown) {
		return count, nil
	}
	if err := files.DeletePrefix(ctx, own); err != nil {
		return 0, fmt.Errorf("delete submission files: %w", err)
	}
	for _, k := range keys {
		if err := files.Delete(ctx, k); err != nil {
			return 0, fmt.Errorf("delete submission file: %w", err)
		}
	}
	return count, nil
}
