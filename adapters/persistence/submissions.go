package persistence

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// SubmissionRepository stores submissions sealed with the workspace's data key, each with the
// blind index of its email answers (the first in submissions.email_hash, any further ones in
// submission_email_index) in the same transaction. Add goes
// through the DB's group committers.
type SubmissionRepository struct {
	db     *DB
	cipher ports.Cipher
	index  ports.BlindIndex
}

var (
	_ ports.SubmissionRepository = (*SubmissionRepository)(nil)
	_ ports.SubmissionScanner    = (*SubmissionRepository)(nil)
)

// NewSubmissionRepository returns the submission repository; cipher seals submissions and the
// payloads of their events, index hashes their email answers for privacy requests.
func NewSubmissionRepository(db *DB, cipher ports.Cipher, index ports.BlindIndex) *SubmissionRepository {
	if index == nil {
		panic("persistence: NewSubmissionRepository needs a blind index")
	}
	return &SubmissionRepository{db: db, cipher: cipher, index: index}
}

// emailHashes returns the blind index of each distinct email answer, in answer order.
func emailHashes(index ports.BlindIndex, workspaceID string, emails []string) [][]byte {
	if len(emails) == 0 {
		return nil
	}
	out := make([][]byte, 0, len(emails))
	for _, e := range emails {
		h := index.Email(workspaceID, e)
		if !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, h) }) {
			out = append(out, h)
		}
	}
	return out
}

// emailHashColumn is the value of submissions.email_hash: the first email answer's hash, or
// NULL. The further ones go to submission_email_index (see indexRows).
func emailHashColumn(hashes [][]byte) any {
	if len(hashes) == 0 {
		return nil
	}
	return hashes[0]
}

// writeEmailIndex deletes the index rows of the submissions in replace (an update's old
// answers; fresh submissions have none), then inserts rows, a few hundred per statement.
func writeEmailIndex(tx *gorm.DB, rows []emailIndexRow, replace []string) error {
	if len(replace) > 0 {
		if err := tx.Exec("DELETE FROM submission_email_index WHERE submission_id IN ?", replace).Error; err != nil {
			return err
		}
	}
	const perStatement = 500
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), perStatement)]
		rows = rows[len(chunk):]
		var sb strings.Builder
		// The hash goes last: gorm would spread a []byte right after "(" into one value per byte.
		sb.WriteString("INSERT INTO submission_email_index (submission_id, hash) VALUES ")
		args := make([]any, 0, len(chunk)*2)
		for i, r := range chunk {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(?,?)")
			args = append(args, r.submissionID, r.hash)
		}
		sb.WriteString(" ON CONFLICT (hash, submission_id) DO NOTHING")
		if err := tx.Exec(sb.String(), args...).Error; err != nil {
			return err
		}
	}
	return nil
}

// emailIndexRow is one row of submission_email_index.
type emailIndexRow struct {
	submissionID string
	hash         []byte
}

// indexRows returns the submission_email_index rows of a submission's email hashes: all but
// the first, which lives in submissions.email_hash (emailHashColumn).
func indexRows(submissionID string, hashes [][]byte) []emailIndexRow {
	if len(hashes) < 2 {
		return nil
	}
	out := make([]emailIndexRow, len(hashes)-1)
	for i, h := range hashes[1:] {
		out[i] = emailIndexRow{submissionID: submissionID, hash: h}
	}
	return out
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
		SubmittedAt: toMillis(s.SubmittedAt()), UpdatedAt: toMillis(s.UpdatedAt()), Sealed: sealed, FormVersion: s.FormVersion()}, nil
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
	p, err := r.pending(ctx, s, e)
	if err != nil {
		return err
	}
	p.limit, p.emailKey = g.MaxSubmissions, g.EmailKey
	if g.Token != nil {
		p.token = &spentToken{nonce: g.Token.Nonce, expiresAt: toMillis(g.Token.ExpiresAt)}
	}
	return r.db.enqueue(ctx, p)
}

func (r *SubmissionRepository) add(ctx context.Context, s *submission.Submission, e event.Event, tok *spentToken) error {
	p, err := r.pending(ctx, s, e)
	if err != nil {
		return err
	}
	p.token = tok
	return r.db.enqueue(ctx, p)
}

// pending seals the submission and its event into an add for the group committer.
func (r *SubmissionRepository) pending(ctx context.Context, s *submission.Submission, e event.Event) (*pendingAdd, error) {
	row, err := r.seal(ctx, s)
	if err != nil {
		return nil, err
	}
	ev, err := sealEvent(ctx, r.cipher, e)
	if err != nil {
		return nil, err
	}
	return &pendingAdd{ctx: ctx, sub: row, event: ev, emails: emailHashes(r.index, s.WorkspaceID(), s.Emails()), done: make(chan error, 1)}, nil
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

// Find returns one submission of the workspace, whatever its form, or domain.ErrNotFound.
func (r *SubmissionRepository) Find(ctx context.Context, workspaceID, id string) (*submission.Submission, error) {
	var row submissionRow
	err := r.db.read(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&row).Error
	if err != nil {
		return nil, mapErr("find submission", err)
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
	return allToDomain(ctx, rows, r.open)
}

// Update loads and locks the submission, runs change, and stores the submission with the
// effects change returns in one transaction. When change fails nothing is written and its
// error is returned as is.
func (r *SubmissionRepository) Update(ctx context.Context, workspaceID, formID, id string, change func(*submission.Submission) (ports.Effects, error)) (*submission.Submission, error) {
	// The data key is created before the lock (see FormRepository.Update).
	if err := r.cipher.EnsureKey(ctx, workspaceID); err != nil {
		return nil, fmt.Errorf("update submission: %w", err)
	}
	return updateLocked(ctx, r.db, r.cipher, lockUpdate, "submission", r.open, change, func(tx *gorm.DB, s *submission.Submission) error {
		next, err := r.seal(ctx, s)
		if err != nil {
			return err
		}
		emails, err := r.currentEmails(tx, s)
		if err != nil {
			return err
		}
		hashes := emailHashes(r.index, workspaceID, emails)
		err = tx.Exec("UPDATE submissions SET sealed = ?, updated_at = ?, email_hash = ? WHERE workspace_id = ? AND form_id = ? AND id = ?",
			next.Sealed, next.UpdatedAt, emailHashColumn(hashes), workspaceID, formID, id).Error
		if err != nil {
			return mapErr("update submission", err)
		}
		return mapErr("update submission email index", writeEmailIndex(tx, indexRows(id, hashes), []string{id}))
	}, "workspace_id = ? AND form_id = ? AND id = ?", workspaceID, formID, id)
}

// currentEmails returns the submission's email answers under its form's fields as stored in
// the transaction (a change that did not re-validate the answers has not computed them).
func (r *SubmissionRepository) currentEmails(tx *gorm.DB, s *submission.Submission) ([]string, error) {
	if s.HasEmails() {
		return s.Emails(), nil
	}
	var raw string
	if err := tx.Raw("SELECT fields FROM forms WHERE workspace_id = ? AND id = ?", s.WorkspaceID(), s.FormID()).Scan(&raw).Error; err != nil {
		return nil, mapErr("load form fields", err)
	}
	fields, err := decodeFields(s.FormID(), raw)
	if err != nil {
		return nil, err
	}
	return submission.EmailAnswers(fields, s.Data()), nil
}

// Delete removes the submission, decrements the form's count, records its tombstone and
// deletes the stored response of the request that created it (forgetResponses) in one
// transaction, or returns domain.ErrNotFound. Its email index rows go with it (the foreign key
// cascades).
func (r *SubmissionRepository) Delete(ctx context.Context, workspaceID, formID, id string, events ...audit.Event) error {
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if err := changedRow("delete submission", tx.Exec("DELETE FROM submissions WHERE workspace_id = ? AND form_id = ? AND id = ?", workspaceID, formID, id)); err != nil {
			return err
		}
		if err := addCounts(tx, 0, map[string]int64{formID: -1}); err != nil {
			return mapErr("count deleted submission", err)
		}
		if err := forgetResponses(tx, workspaceID, []string{id}, jsonIDs([]string{id})); err != nil {
			return err
		}
		if err := forgetEvents(tx, workspaceID, []string{id}, jsonIDs([]string{id}), time.Now()); err != nil {
			return err
		}
		if err := writeTombstones(tx, []ports.Tombstone{{Kind: ports.TombstoneSubmission, ID: id, WorkspaceID: workspaceID}}); err != nil {
			return err
		}
		return writeAudit(tx, events)
	})
}

// Import stores submissions that were received elsewhere or earlier (bulk loads: a move from
// another tool, benchmarks' seeding) in one transaction, sealed like any other, with the
// forms' counts, and without events: nothing was received now, so nothing is delivered.
func (r *SubmissionRepository) Import(ctx context.Context, subs ...*submission.Submission) error {
	if len(subs) == 0 {
		return nil
	}
	rows := make([]submissionRow, len(subs))
	counts := map[string]int64{}
	for i, s := range subs {
		row, err := r.seal(ctx, s)
		if err != nil {
			return err
		}
		rows[i] = row
		counts[s.FormID()]++
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		// 6 parameters a row: well under either database's limit per statement.
		if err := tx.CreateInBatches(rows, 500).Error; err != nil {
			return mapErr("import submissions", err)
		}
		return mapErr("count imported submissions", addCounts(tx, 0, counts))
	})
}

// Additional authenticated data binds each sealed value to its table and row, so a ciphertext
// copied to another row does not open.
func submissionAAD(id string) []byte { return []byte("submissions/" + id) }

type submissionRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	FormID      string `gorm:"column:form_id"`
	SubmittedAt int64  `gorm:"column:submitted_at"`
	UpdatedAt   int64  `gorm:"column:updated_at"`
	Sealed      []byte `gorm:"column:sealed"`
	FormVersion int    `gorm:"column:form_version"`
}

func (submissionRow) TableName() string { return "submissions" }

// sealedSubmission is the plaintext inside submissions.sealed: everything the respondent sent
// and how it arrived.
type sealedSubmission struct {
	Data     map[string]json.RawMessage `json:"data"`
	Metadata sealedMetadata             `json:"metadata"`
}

type sealedMetadata struct {
	IPHash    *string           `json:"ip_hash,omitempty"`
	UserAgent *string           `json:"user_agent,omitempty"`
	Referrer  *string           `json:"referrer,omitempty"`
	Source    string            `json:"source"`
	UTM       map[string]string `json:"utm,omitempty"`
	ReplyTo   *string           `json:"reply_to,omitempty"`
	Subject   *string           `json:"subject,omitempty"`
	Language  *string           `json:"language,omitempty"`
	// Score is written only for forms with scores: other submissions' bytes stay as before.
	Score *float64 `json:"score,omitempty"`
}

func encodeSubmission(s *submission.Submission) ([]byte, error) {
	data := s.Data()
	out := sealedSubmission{Data: make(map[string]json.RawMessage, len(data))}
	for k, v := range data {
		var (
			b   []byte
			err error
		)
		if v.IsList() {
			b, err = jsoncodec.Marshal(v.Strings())
		} else {
			b, err = jsoncodec.Marshal(v.String())
		}
		if err != nil {
			return nil, fmt.Errorf("encode submission: %w", err)
		}
		out.Data[k] = b
	}
	m := s.Metadata()
	out.Metadata = sealedMetadata{IPHash: m.IPHash, UserAgent: m.UserAgent, Referrer: m.Referrer, Source: string(m.Source), UTM: m.UTM, ReplyTo: m.ReplyTo, Subject: m.Subject, Score: m.Score}
	out.Metadata.Language = m.Language
	b, err := jsoncodec.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode submission: %w", err)
	}
	return b, nil
}

func decodeSubmission(r submissionRow, plaintext []byte) (*submission.Submission, error) {
	data, meta, ok := decodeSealedFast(plaintext)
	if !ok {
		var err error
		if data, meta, err = decodeSealedJSON(plaintext); err != nil {
			return nil, fmt.Errorf("decode submission %s: %w", r.ID, err)
		}
	}
	return submission.UnmarshalFromDatabase(r.ID, r.WorkspaceID, r.FormID, data, meta, fromMillis(r.SubmittedAt), fromMillis(r.UpdatedAt)).WithFormVersionFromDatabase(r.FormVersion), nil
}
