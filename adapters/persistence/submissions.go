package persistence

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// SubmissionRepository stores submissions sealed with the workspace's data key. Add goes
// through the DB's group committers.
type SubmissionRepository struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.SubmissionRepository = (*SubmissionRepository)(nil)

// NewSubmissionRepository returns the submission repository; cipher seals submissions and the
// payloads of their events.
func NewSubmissionRepository(db *DB, cipher ports.Cipher) *SubmissionRepository {
	return &SubmissionRepository{db: db, cipher: cipher}
}

func (r *SubmissionRepository) seal(ctx context.Context, s *submission.Submission) (submissionRow, error) {
	plain, err := encodeSubmission(s)
	if err != nil {
		return submissionRow{}, err
	}
	sealed, err := r.cipher.Seal(ctx, s.WorkspaceID(), plain, submissionAAD(s.ID()))
	if err != nil {
		return submissionRow{}, fmt.Errorf("seal submission: %w", err)
	}
	return submissionRow{ID: s.ID(), WorkspaceID: s.WorkspaceID(), FormID: s.FormID(),
		SubmittedAt: toMillis(s.SubmittedAt()), UpdatedAt: toMillis(s.UpdatedAt()), Sealed: sealed}, nil
}

func (r *SubmissionRepository) open(ctx context.Context, row submissionRow) (*submission.Submission, error) {
	plain, err := r.cipher.Open(ctx, row.WorkspaceID, row.Sealed, submissionAAD(row.ID))
	if err != nil {
		return nil, fmt.Errorf("open submission %s: %w", row.ID, err)
	}
	return decodeSubmission(row, plain)
}

// Add seals the submission and its event in the caller's goroutine, then queues both for a
// group committer, which writes everything queued in one transaction. It returns after the
// commit; a form deleted meanwhile gives domain.ErrNotFound, a reused ID domain.ErrConflict.
func (r *SubmissionRepository) Add(ctx context.Context, s *submission.Submission, e event.Event) error {
	return r.add(ctx, s, e, nil)
}

// AddSpendingToken is Add that also inserts tok's nonce into used_form_tokens in the same
// group-committed transaction. A nonce already spent (before, or by another item of the same
// batch) gives ports.ErrTokenUsed and stores nothing of this submission.
func (r *SubmissionRepository) AddSpendingToken(ctx context.Context, s *submission.Submission, e event.Event, tok ports.SpentToken) error {
	return r.add(ctx, s, e, &spentToken{nonce: tok.Nonce, expiresAt: toMillis(tok.ExpiresAt)})
}

// AddGuarded is Add under the public capture's guards (render token, submission limit, one
// response per email answer), all checked by the group committer inside the transaction that
// stores the submission.
func (r *SubmissionRepository) AddGuarded(ctx context.Context, s *submission.Submission, e event.Event, g ports.CaptureGuards) error {
	row, err := r.seal(ctx, s)
	if err != nil {
		return err
	}
	ev, err := sealEvent(ctx, r.cipher, e)
	if err != nil {
		return err
	}
	p := &pendingAdd{ctx: ctx, sub: row, event: ev, limit: g.MaxSubmissions, emailKey: g.EmailKey, done: make(chan error, 1)}
	if g.Token != nil {
		p.token = &spentToken{nonce: g.Token.Nonce, expiresAt: toMillis(g.Token.ExpiresAt)}
	}
	return r.db.enqueue(ctx, p)
}

func (r *SubmissionRepository) add(ctx context.Context, s *submission.Submission, e event.Event, tok *spentToken) error {
	row, err := r.seal(ctx, s)
	if err != nil {
		return err
	}
	ev, err := sealEvent(ctx, r.cipher, e)
	if err != nil {
		return err
	}
	return r.db.enqueue(ctx, &pendingAdd{ctx: ctx, sub: row, event: ev, token: tok, done: make(chan error, 1)})
}

// Get returns one submission of the workspace's form, or domain.ErrNotFound.
func (r *SubmissionRepository) Get(ctx context.Context, workspaceID, formID, id string) (*submission.Submission, error) {
	var row submissionRow
	err := r.db.read(ctx).Where("workspace_id = ? AND form_id = ? AND id = ?", workspaceID, formID, id).Take(&row).Error
	if err != nil {
		return nil, mapErr("get submission", err)
	}
	return r.open(ctx, row)
}

// List returns up to q.Page.Limit submissions of the form, newest first (submitted_at, id),
// strictly after q.Page.After and strictly between the time bounds.
func (r *SubmissionRepository) List(ctx context.Context, workspaceID, formID string, q ports.SubmissionQuery) ([]*submission.Submission, error) {
	db := r.db.read(ctx).Where("workspace_id = ? AND form_id = ?", workspaceID, formID)
	if q.CreatedAfter != nil {
		// stored ms > bound  ⇔  ms > floor(bound in ms)
		db = db.Where("submitted_at > ?", floorMillis(*q.CreatedAfter))
	}
	if q.CreatedBefore != nil {
		// stored ms < bound  ⇔  ms < ceil(bound in ms)
		db = db.Where("submitted_at < ?", ceilMillis(*q.CreatedBefore))
	}
	rows, err := newestFirst[submissionRow](db, q.Page, "submitted_at", "submissions")
	if err != nil {
		return nil, err
	}
	out := make([]*submission.Submission, 0, len(rows))
	for _, row := range rows {
		s, err := r.open(ctx, row)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Update loads and locks the submission, runs change, and stores the submission with the
// event change returns in one transaction. When change fails nothing is written and its
// error is returned as is.
func (r *SubmissionRepository) Update(ctx context.Context, workspaceID, formID, id string, change func(*submission.Submission) (event.Event, error)) (*submission.Submission, error) {
	// Make sure the workspace's data key exists before taking the lock (see FormRepository.Update).
	if _, err := r.cipher.Seal(ctx, workspaceID, nil, nil); err != nil {
		return nil, fmt.Errorf("update submission: %w", err)
	}
	var updated *submission.Submission
	err := lockedUpdate(ctx, r.db, lockUpdate, "submission", func(tx *gorm.DB, row submissionRow) error {
		s, err := r.open(ctx, row)
		if err != nil {
			return err
		}
		e, err := change(s)
		if err != nil {
			return err
		}
		next, err := r.seal(ctx, s)
		if err != nil {
			return err
		}
		ev, err := sealEvent(ctx, r.cipher, e)
		if err != nil {
			return err
		}
		err = tx.Exec("UPDATE submissions SET sealed = ?, updated_at = ? WHERE workspace_id = ? AND form_id = ? AND id = ?",
			next.Sealed, next.UpdatedAt, workspaceID, formID, id).Error
		if err != nil {
			return mapErr("update submission", err)
		}
		if err := insertEvents(tx, []sealedEvent{ev}); err != nil {
			return mapErr("write submission event", err)
		}
		updated = s
		return nil
	}, "workspace_id = ? AND form_id = ? AND id = ?", workspaceID, formID, id)
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// Delete removes the submission and decrements the form's count in one transaction, or
// returns domain.ErrNotFound.
func (r *SubmissionRepository) Delete(ctx context.Context, workspaceID, formID, id string) error {
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("DELETE FROM submissions WHERE workspace_id = ? AND form_id = ? AND id = ?", workspaceID, formID, id)
		if res.Error != nil {
			return mapErr("delete submission", res.Error)
		}
		if res.RowsAffected == 0 {
			return domain.ErrNotFound
		}
		return mapErr("count deleted submission", addCounts(tx, 0, map[string]int64{formID: -1}))
	})
}
