package persistence

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// emailIndexBackfill names the index_backfills row of submission_email_index.
const emailIndexBackfill = "submission_email_index"

// PrivacyIndex reads the blind index of email answers (submissions.email_hash and
// submission_email_index) and rebuilds it for submissions stored before it existed, or under
// another master key: their answers are sealed, so only the server can.
type PrivacyIndex struct {
	db     *DB
	cipher ports.Cipher
	index  ports.BlindIndex
}

var _ ports.PrivacyIndex = (*PrivacyIndex)(nil)

// NewPrivacyIndex returns the index over the database.
func NewPrivacyIndex(db *DB, cipher ports.Cipher, index ports.BlindIndex) *PrivacyIndex {
	return &PrivacyIndex{db: db, cipher: cipher, index: index}
}

// FindByEmail returns the workspace's submissions indexed under hash, oldest first.
func (p *PrivacyIndex) FindByEmail(ctx context.Context, workspaceID string, hash []byte) ([]*submission.Submission, error) {
	rows, err := findByEmail(p.db.read(ctx), workspaceID, hash)
	if err != nil {
		return nil, err
	}
	return openRows(ctx, p.cipher, rows)
}

// Export reads as FindByEmail does and writes record's audit events, in one transaction.
func (p *PrivacyIndex) Export(ctx context.Context, workspaceID string, hash []byte, record func(int) ([]audit.Event, error)) ([]*submission.Submission, error) {
	var rows []submissionRow
	err := p.db.tx(ctx, func(tx *gorm.DB) error {
		var err error
		if rows, err = findByEmail(tx, workspaceID, hash); err != nil {
			return err
		}
		evs, err := record(len(rows))
		if err != nil {
			return err
		}
		return writeAudit(tx, evs)
	})
	if err != nil {
		return nil, err
	}
	return openRows(ctx, p.cipher, rows)
}

// findByEmailSQL finds a workspace's submissions by email hash (args: hash, workspace, hash,
// workspace). The first email answer's hash is in the submission's row, any further ones in
// submission_email_index; a submission is in one part or the other, never both. On SQLite the
// first part reads submissions_email_scan_idx (ID order, see migration 00130) from end to end.
const findByEmailSQL = `SELECT id, workspace_id, form_id, submitted_at, updated_at, sealed FROM (
		SELECT s.id, s.workspace_id, s.form_id, s.submitted_at, s.updated_at, s.sealed
		FROM submissions s WHERE s.email_hash = ? AND s.workspace_id = ?
		UNION
		SELECT s.id, s.workspace_id, s.form_id, s.submitted_at, s.updated_at, s.sealed
		FROM submission_email_index i JOIN submissions s ON s.id = i.submission_id
		WHERE i.hash = ? AND s.workspace_id = ?
	) found ORDER BY submitted_at, id`

func findByEmail(db *gorm.DB, workspaceID string, hash []byte) ([]submissionRow, error) {
	var rows []submissionRow
	if err := db.Raw(findByEmailSQL, hash, workspaceID, hash, workspaceID).Scan(&rows).Error; err != nil {
		return nil, mapErr("find submissions by email", err)
	}
	return rows, nil
}

type backfillRow struct {
	Name    string `gorm:"column:name;primaryKey"`
	Version string `gorm:"column:version"`
	AfterID string `gorm:"column:after_id"`
	Done    bool   `gorm:"column:done"`
}

func (backfillRow) TableName() string { return "index_backfills" }

// Reindex indexes up to limit submissions after the last one indexed (by ID), under the
// current key. A key other than the one the index was built with starts it over. A submission
// updated or deleted while its batch was computed is left as that change left it.
func (p *PrivacyIndex) Reindex(ctx context.Context, limit int) (int, bool, error) {
	var state backfillRow
	err := p.db.read(ctx).Where("name = ?", emailIndexBackfill).Take(&state).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, false, mapErr("read index backfill", err)
	}
	if state.Version != p.index.Version() {
		state = backfillRow{Name: emailIndexBackfill, Version: p.index.Version()}
	}
	if state.Done {
		return 0, true, nil
	}
	var rows []submissionRow
	err = p.db.read(ctx).Raw("SELECT id, workspace_id, form_id, submitted_at, updated_at, sealed, form_version FROM submissions WHERE id > ? ORDER BY id LIMIT ?",
		state.AfterID, limit).Scan(&rows).Error
	if err != nil {
		return 0, false, mapErr("read submissions to index", err)
	}
	subs, err := openRows(ctx, p.cipher, rows)
	if err != nil {
		return 0, false, err
	}
	fields := map[string][]form.Field{}
	hashes := make(map[string][][]byte, len(subs))
	for _, s := range subs {
		fs, ok := fields[s.FormID()]
		if !ok {
			var raw string
			if err := p.db.read(ctx).Raw("SELECT fields FROM forms WHERE id = ?", s.FormID()).Scan(&raw).Error; err != nil {
				return 0, false, mapErr("read form fields", err)
			}
			if raw != "" {
				if fs, err = decodeFields(s.FormID(), raw); err != nil {
					return 0, false, err
				}
			}
			fields[s.FormID()] = fs
		}
		hashes[s.ID()] = emailHashes(p.index, s.WorkspaceID(), submission.EmailAnswers(fs, s.Data()))
	}
	if len(rows) > 0 {
		state.AfterID = rows[len(rows)-1].ID
	}
	state.Done = len(rows) < limit
	err = p.db.tx(ctx, func(tx *gorm.DB) error {
		if len(rows) > 0 {
			ids := make([]string, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			lock := ""
			if p.db.dialect == DialectPostgres {
				lock = " FOR SHARE" // keeps them from being deleted before this commits
			}
			var current []struct {
				ID        string `gorm:"column:id"`
				UpdatedAt int64  `gorm:"column:updated_at"`
			}
			if err := tx.Raw("SELECT id, updated_at FROM submissions WHERE id IN ?"+lock, ids).Scan(&current).Error; err != nil {
				return mapErr("check submissions to index", err)
			}
			read := make(map[string]int64, len(rows))
			for _, r := range rows {
				read[r.ID] = r.UpdatedAt
			}
			var replace []string
			var insert []emailIndexRow
			for _, c := range current {
				if c.UpdatedAt != read[c.ID] {
					continue // updated meanwhile: the update wrote its own index
				}
				replace = append(replace, c.ID)
				insert = append(insert, indexRows(c.ID, hashes[c.ID])...)
				err := tx.Exec("UPDATE submissions SET email_hash = ? WHERE id = ?", emailHashColumn(hashes[c.ID]), c.ID).Error
				if err != nil {
					return mapErr("write email index", err)
				}
			}
			if err := writeEmailIndex(tx, insert, replace); err != nil {
				return mapErr("write email index", err)
			}
		}
		return mapErr("save index backfill", tx.Save(&state).Error)
	})
	if err != nil {
		return 0, false, err
	}
	return len(rows), state.Done, nil
}
