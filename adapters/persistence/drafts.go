package persistence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/draft"
	"github.com/formward/formward/ports"
)

// DraftRepository stores drafts; their answers, language and resume address are sealed with
// the workspace's data key, bound to the draft's ID.
type DraftRepository struct {
	db     *DB
	cipher ports.Cipher
	blind  ports.BlindIndex
}

var _ ports.DraftRepository = (*DraftRepository)(nil)

// NewDraftRepository returns the draft repository.
func NewDraftRepository(db *DB, cipher ports.Cipher, blind ports.BlindIndex) *DraftRepository {
	return &DraftRepository{db: db, cipher: cipher, blind: blind}
}

type draftRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	FormID      string `gorm:"column:form_id"`
	SecretHash  []byte `gorm:"column:secret_hash"`
	Page        int    `gorm:"column:page"`
	Emailed     int    `gorm:"column:emailed"`
	Answers     []byte `gorm:"column:answers"`
	CreatedAt   int64  `gorm:"column:created_at"`
	UpdatedAt   int64  `gorm:"column:updated_at"`
	ExpiresAt   int64  `gorm:"column:expires_at"`
	SubmittedAt *int64 `gorm:"column:submitted_at"`
}

func (draftRow) TableName() string { return "drafts" }

type draftEmailRow struct {
	DraftID     string `gorm:"column:draft_id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	EmailHash   []byte `gorm:"column:email_hash;primaryKey"`
}

func (draftEmailRow) TableName() string { return "draft_emails" }

// sealedDraft is what a draft's sealed column holds.
type sealedDraft struct {
	Answers      map[string][]string `json:"answers"`
	Language     string              `json:"language,omitempty"`
	AnswerEmails []string            `json:"answer_emails,omitempty"`
	ResumeEmail  string              `json:"resume_email,omitempty"`
}

func draftAAD(id string) []byte { return []byte("draft:" + id) }

// Save upserts the draft and replaces its address index, in one transaction.
func (r *DraftRepository) Save(ctx context.Context, d *draft.Draft) error {
	row := draftRow{ID: d.ID(), WorkspaceID: d.WorkspaceID(), FormID: d.FormID(), SecretHash: d.SecretHash(), Page: d.Page(),
		Emailed: d.Emailed(), CreatedAt: toMillis(d.CreatedAt()), UpdatedAt: toMillis(d.UpdatedAt()), ExpiresAt: toMillis(d.ExpiresAt())}
	if at := d.SubmittedAt(); at != nil {
		ms := toMillis(*at)
		row.SubmittedAt = &ms
	} else {
		plain, err := jsoncodec.Marshal(sealedDraft{Answers: d.Answers(), Language: d.Language(), AnswerEmails: d.AnswerEmails(), ResumeEmail: d.ResumeEmail()})
		if err != nil {
			return fmt.Errorf("encode draft: %w", err)
		}
		if err := r.cipher.EnsureKey(ctx, d.WorkspaceID()); err != nil {
			return err
		}
		if row.Answers, err = r.cipher.Seal(ctx, d.WorkspaceID(), plain, draftAAD(d.ID())); err != nil {
			return fmt.Errorf("seal draft: %w", err)
		}
	}
	emails := make([]draftEmailRow, 0, len(d.Emails()))
	for _, e := range d.Emails() {
		emails = append(emails, draftEmailRow{DraftID: d.ID(), WorkspaceID: d.WorkspaceID(), EmailHash: r.blind.Email(d.WorkspaceID(), e)})
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}},
			DoUpdates: clause.AssignmentColumns([]string{"page", "emailed", "answers", "updated_at", "expires_at", "submitted_at"})}).
			Create(&row).Error
		if err != nil {
			return mapErr("save draft", err)
		}
		if err := tx.Exec("DELETE FROM draft_emails WHERE draft_id = ?", d.ID()).Error; err != nil {
			return mapErr("save draft emails", err)
		}
		if len(emails) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&emails).Error; err != nil {
				return mapErr("save draft emails", err)
			}
		}
		return nil
	})
}

// Get returns a draft with its answers opened.
func (r *DraftRepository) Get(ctx context.Context, id string) (*draft.Draft, error) {
	var row draftRow
	err := r.db.read(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, mapErr("get draft", err)
	}
	s := row.stored()
	if len(row.Answers) > 0 {
		plain, err := r.cipher.Open(ctx, row.WorkspaceID, row.Answers, draftAAD(row.ID))
		if err != nil {
			return nil, fmt.Errorf("open draft %s: %w", row.ID, err)
		}
		var in sealedDraft
		if err := jsoncodec.Unmarshal(plain, &in); err != nil {
			return nil, fmt.Errorf("decode draft %s: %w", row.ID, err)
		}
		s.Answers, s.Language, s.AnswerEmails, s.ResumeEmail = in.Answers, in.Language, in.AnswerEmails, in.ResumeEmail
	}
	return draft.Unmarshal(s), nil
}

func (row draftRow) stored() draft.Stored {
	return draft.Stored{ID: row.ID, WorkspaceID: row.WorkspaceID, FormID: row.FormID, SecretHash: row.SecretHash, Page: row.Page,
		Emailed: row.Emailed, CreatedAt: fromMillis(row.CreatedAt), UpdatedAt: fromMillis(row.UpdatedAt),
		ExpiresAt: fromMillis(row.ExpiresAt), SubmittedAt: fromMillisPtr(row.SubmittedAt)}
}

// List returns a page of the form's open drafts, newest first, without their answers.
func (r *DraftRepository) List(ctx context.Context, workspaceID, formID string, page ports.Page) ([]*draft.Draft, error) {
	q := r.db.read(ctx).Select("id, workspace_id, form_id, page, emailed, created_at, updated_at, expires_at, submitted_at").
		Where("workspace_id = ? AND form_id = ? AND submitted_at IS NULL", workspaceID, formID)
	rows, err := newestFirst[draftRow](q, page, "created_at", "drafts")
	if err != nil {
		return nil, err
	}
	out := make([]*draft.Draft, len(rows))
	for i, row := range rows {
		out[i] = draft.Unmarshal(row.stored())
	}
	return out, nil
}

// CountByPage counts the form's open drafts by page reached.
func (r *DraftRepository) CountByPage(ctx context.Context, workspaceID, formID string, now time.Time) (map[int]int, error) {
	var rows []struct {
		Page int
		N    int
	}
	err := r.db.read(ctx).Raw("SELECT page, COUNT(*) AS n FROM drafts WHERE workspace_id = ? AND form_id = ? AND submitted_at IS NULL AND expires_at > ? GROUP BY page",
		workspaceID, formID, toMillis(now)).Scan(&rows).Error
	if err != nil {
		return nil, mapErr("count drafts", err)
	}
	out := make(map[int]int, len(rows))
	for _, row := range rows {
		out[row.Page] = row.N
	}
	return out, nil
}

// DeleteExpired deletes up to limit drafts whose time is over (submitted ones too: their row
// only answered "already used" until then).
func (r *DraftRepository) DeleteExpired(ctx context.Context, now time.Time, limit int) (int64, error) {
	var n int64
	err := r.db.redoableTx(ctx, func(tx *gorm.DB) error {
		var ids []string
		if err := tx.Raw("SELECT id FROM drafts WHERE expires_at <= ? ORDER BY expires_at LIMIT ?", toMillis(now), limit).Scan(&ids).Error; err != nil {
			return mapErr("find expired drafts", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Exec("DELETE FROM draft_emails WHERE draft_id IN ?", ids).Error; err != nil {
			return mapErr("delete expired drafts", err)
		}
		res := tx.Exec("DELETE FROM drafts WHERE id IN ?", ids)
		n = res.RowsAffected
		return mapErr("delete expired drafts", res.Error)
	})
	return n, err
}

// DeleteByEmail deletes the workspace's drafts that hold the address.
func (r *DraftRepository) DeleteByEmail(ctx context.Context, workspaceID string, hash []byte) (int64, error) {
	var n int64
	err := r.db.tx(ctx, func(tx *gorm.DB) error {
		var ids []string
		if err := tx.Raw("SELECT draft_id FROM draft_emails WHERE workspace_id = ? AND email_hash = ?", workspaceID, hash).Scan(&ids).Error; err != nil {
			return mapErr("find drafts by email", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Exec("DELETE FROM draft_emails WHERE draft_id IN ?", ids).Error; err != nil {
			return mapErr("erase drafts", err)
		}
		res := tx.Exec("DELETE FROM drafts WHERE workspace_id = ? AND id IN ?", workspaceID, ids)
		n = res.RowsAffected
		return mapErr("erase drafts", res.Error)
	})
	return n, err
}
