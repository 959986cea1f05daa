package capture

import (
	"context"
	"errors"
	"strings"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// ResponseColumn is one field as a column of the responses table.
type ResponseColumn struct {
	Field form.Field
	// Shown says whether the table shows the column.
	Shown bool
	// Removed marks a field removed from the form (its label has no suffix here).
	Removed bool
}

// ResponseColumns are a form's fields as the signed-in person arranged the responses table:
// the shown ones first, in their chosen order, then the hidden ones.
type ResponseColumns struct {
	Columns []ResponseColumn
	// Saved says whether the person saved a choice; without one every field of the form is
	// shown in the form's order, and removed fields are hidden (the table adds those answered
	// on its page).
	Saved bool
}

// GetResponseColumns asks for the signed-in person's columns of a form's responses table.
type GetResponseColumns struct {
	FormID string
}

// GetResponseColumnsHandler reads the column choice.
type GetResponseColumnsHandler struct {
	forms   ports.FormRepository
	columns ports.ResponseColumnsRepository
}

// NewGetResponseColumnsHandler makes the query.
func NewGetResponseColumnsHandler(forms ports.FormRepository, columns ports.ResponseColumnsRepository) GetResponseColumnsHandler {
	return GetResponseColumnsHandler{forms: forms, columns: columns}
}

// Handle returns the columns for a principal who may read the form. An API key, which is
// nobody's, gets the default arrangement.
func (h GetResponseColumnsHandler) Handle(ctx context.Context, q GetResponseColumns) (ResponseColumns, error) {
	p, f, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return ResponseColumns{}, err
	}
	if p.Actor.Type != audit.ActorUser || h.columns == nil {
		return ArrangeColumns(f, nil), nil
	}
	c, err := h.columns.Get(ctx, p.WorkspaceID, p.Actor.ID, f.ID())
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return ArrangeColumns(f, nil), nil
	case err != nil:
		return ResponseColumns{}, err
	}
	return ArrangeColumns(f, &c), nil
}

// SaveResponseColumns keeps the signed-in person's columns of a form's responses table: Shown
// are the field IDs to show, in their order; every other field of the form is hidden. Reset
// forgets the choice instead (back to every field in the form's order).
type SaveResponseColumns struct {
	FormID string
	Shown  []string
	Reset  bool
}

// SaveResponseColumnsHandler stores the column choice.
type SaveResponseColumnsHandler struct {
	forms   ports.FormRepository
	columns ports.ResponseColumnsRepository
	clock   ports.Clock
}

// NewSaveResponseColumnsHandler makes the command.
func NewSaveResponseColumnsHandler(forms ports.FormRepository, columns ports.ResponseColumnsRepository, clock ports.Clock) SaveResponseColumnsHandler {
	return SaveResponseColumnsHandler{forms: forms, columns: columns, clock: clock}
}

// Handle checks that the principal may read the form and is a signed-in person, that every
// shown ID is a field of the form (current or removed) named once, stores the choice and
// returns the columns as they now are.
func (h SaveResponseColumnsHandler) Handle(ctx context.Context, cmd SaveResponseColumns) (ResponseColumns, error) {
	p, f, err := auth.Load(ctx, access.Read, h.forms, cmd.FormID)
	if err != nil {
		return ResponseColumns{}, err
	}
	if p.Actor.Type != audit.ActorUser {
		return ResponseColumns{}, domain.Validation("columns", "not_a_person", "column choices are kept for a signed-in person, not an API key")
	}
	if cmd.Reset {
		if err := h.columns.Delete(ctx, p.WorkspaceID, p.Actor.ID, f.ID()); err != nil {
			return ResponseColumns{}, err
		}
		return ArrangeColumns(f, nil), nil
	}
	known := map[string]bool{}
	var all []string
	for _, fl := range f.Fields() {
		known[fl.ID] = true
		all = append(all, fl.ID)
	}
	for _, r := range f.RemovedFields() {
		known[r.ID] = true
		all = append(all, r.ID)
	}
	shown := map[string]bool{}
	for _, id := range cmd.Shown {
		id = strings.TrimSpace(id)
		switch {
		case !known[id]:
			return ResponseColumns{}, domain.Validation("columns", "unknown_field", "the form has no field "+id)
		case shown[id]:
			return ResponseColumns{}, domain.Validation("columns", "duplicate_field", "field "+id+" is named twice")
		}
		shown[id] = true
	}
	c := ports.ResponseColumns{WorkspaceID: p.WorkspaceID, UserID: p.Actor.ID, FormID: f.ID(), UpdatedAt: h.clock.Now()}
	for _, id := range cmd.Shown {
		c.Shown = append(c.Shown, strings.TrimSpace(id))
	}
	for _, id := range all {
		if !shown[id] {
			c.Hidden = append(c.Hidden, id)
		}
	}
	if err := h.columns.Put(ctx, c); err != nil {
		return ResponseColumns{}, err
	}
	return ArrangeColumns(f, &c), nil
}

// ArrangeColumns lays the form's fields out as the choice c says (nil: the default). The
// shown fields come first in their order, then the fields the form gained after the choice
// (shown), then the hidden ones; IDs of fields gone for good are skipped.
func ArrangeColumns(f *form.Form, c *ports.ResponseColumns) ResponseColumns {
	fields := map[string]ResponseColumn{}
	var order []string
	for _, fl := range f.Fields() {
		fields[fl.ID] = ResponseColumn{Field: fl}
		order = append(order, fl.ID)
	}
	for _, r := range f.RemovedFields() {
		fields[r.ID] = ResponseColumn{Field: r.AsField(), Removed: true}
		order = append(order, r.ID)
	}
	if c == nil {
		out := ResponseColumns{}
		for _, id := range order {
			col := fields[id]
			col.Shown = !col.Removed
			out.Columns = append(out.Columns, col)
		}
		return out
	}
	out := ResponseColumns{Saved: true}
	placed := map[string]bool{}
	add := func(id string, shown bool) {
		col, ok := fields[id]
		if !ok || placed[id] {
			return
		}
		placed[id] = true
		col.Shown = shown
		out.Columns = append(out.Columns, col)
	}
	for _, id := range c.Shown {
		add(id, true)
	}
	hidden := map[string]bool{}
	for _, id := range c.Hidden {
		hidden[id] = true
	}
	for _, id := range order {
		if !hidden[id] {
			// New since the choice: a current field is shown; a field removed since is not.
			add(id, !fields[id].Removed)
		}
	}
	for _, id := range c.Hidden {
		add(id, false)
	}
	return out
}
