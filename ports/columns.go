package ports

import (
	"context"
	"time"
)

// ResponseColumns is one person's choice of the columns of one form's responses table.
type ResponseColumns struct {
	WorkspaceID string
	UserID      string
	FormID      string
	// Shown are the field IDs the table shows, in their order.
	Shown []string
	// Hidden are the field IDs the person hid. A field in neither list (added to the form
	// after the choice was saved) is shown, after Shown.
	Hidden    []string
	UpdatedAt time.Time
}

// ResponseColumnsRepository keeps the column choices, one per person and form. Deleting the
// form deletes the choices made for it.
type ResponseColumnsRepository interface {
	// Get returns the person's choice for the form, or domain.ErrNotFound when none is kept.
	Get(ctx context.Context, workspaceID, userID, formID string) (ResponseColumns, error)
	// Put stores the choice, replacing the one kept.
	Put(ctx context.Context, c ResponseColumns) error
	// Delete forgets the choice; forgetting none is no error.
	Delete(ctx context.Context, workspaceID, userID, formID string) error
}
