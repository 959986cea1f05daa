package persistence

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// ResponseColumnsRepository is the response_columns table: each person's choice of the
// columns of a form's responses table, the field ID lists as JSON arrays.
type ResponseColumnsRepository struct{ db *DB }

var _ ports.ResponseColumnsRepository = (*ResponseColumnsRepository)(nil)

// NewResponseColumnsRepository returns the column choice repository.
func NewResponseColumnsRepository(db *DB) *ResponseColumnsRepository {
	return &ResponseColumnsRepository{db: db}
}

type responseColumnsRow struct {
	UserID      string `gorm:"column:user_id;primaryKey"`
	FormID      string `gorm:"column:form_id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	Shown       string `gorm:"column:shown"`
	Hidden      string `gorm:"column:hidden"`
	UpdatedAt   int64  `gorm:"column:updated_at"`
}

func (responseColumnsRow) TableName() string { return "response_columns" }

// Get returns the person's choice for the form, or domain.ErrNotFound.
func (r *ResponseColumnsRepository) Get(ctx context.Context, workspaceID, userID, formID string) (ports.ResponseColumns, error) {
	var rows []responseColumnsRow
	err := r.db.read(ctx).Raw(`SELECT user_id, form_id, workspace_id, shown, hidden, updated_at FROM response_columns
		WHERE workspace_id = ? AND user_id = ? AND form_id = ?`, workspaceID, userID, formID).Scan(&rows).Error
	if err != nil {
		return ports.ResponseColumns{}, mapErr("get response columns", err)
	}
	if len(rows) == 0 {
		return ports.ResponseColumns{}, domain.ErrNotFound
	}
	row := rows[0]
	c := ports.ResponseColumns{WorkspaceID: row.WorkspaceID, UserID: row.UserID, FormID: row.FormID, UpdatedAt: fromMillis(row.UpdatedAt)}
	if err := jsoncodec.Unmarshal([]byte(row.Shown), &c.Shown); err != nil {
		return ports.ResponseColumns{}, fmt.Errorf("read response columns: %w", err)
	}
	if err := jsoncodec.Unmarshal([]byte(row.Hidden), &c.Hidden); err != nil {
		return ports.ResponseColumns{}, fmt.Errorf("read response columns: %w", err)
	}
	return c, nil
}

// Put stores the choice, replacing the one kept. A form of another workspace, or a deleted
// one, is domain.ErrNotFound.
func (r *ResponseColumnsRepository) Put(ctx context.Context, c ports.ResponseColumns) error {
	shown, err := jsoncodec.Marshal(nonNil(c.Shown))
	if err != nil {
		return err
	}
	hidden, err := jsoncodec.Marshal(nonNil(c.Hidden))
	if err != nil {
		return err
	}
	return r.db.write(ctx, func(db *gorm.DB) error {
		res := db.Exec(`INSERT INTO response_columns (user_id, form_id, workspace_id, shown, hidden, updated_at)
			SELECT ?, id, workspace_id, ?, ?, ? FROM forms WHERE workspace_id = ? AND id = ?
			ON CONFLICT (user_id, form_id) DO UPDATE SET shown = excluded.shown, hidden = excluded.hidden, updated_at = excluded.updated_at`,
			c.UserID, string(shown), string(hidden), toMillis(c.UpdatedAt), c.WorkspaceID, c.FormID)
		if res.Error != nil {
			return mapErr("put response columns", res.Error)
		}
		if res.RowsAffected == 0 {
			return domain.ErrNotFound
		}
		return nil
	})
}

// Delete forgets the choice.
func (r *ResponseColumnsRepository) Delete(ctx context.Context, workspaceID, userID, formID string) error {
	return r.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("delete response columns", db.Exec("DELETE FROM response_columns WHERE workspace_id = ? AND user_id = ? AND form_id = ?",
			workspaceID, userID, formID).Error)
	})
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
