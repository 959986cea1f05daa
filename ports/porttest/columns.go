package porttest

import (
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// responseColumns: a choice is kept per person and form, in its order, replaced by the next
// one, forgotten by Delete, refused for a form of another workspace, and gone with its form.
func responseColumns(t *testing.T, r Repos) {
	ws, other := newWorkspace(t, r), newWorkspace(t, r)
	f, g := newForm(t, r, ws.ID(), base), newForm(t, r, ws.ID(), base)
	ana, bob := newID("usr"), newID("usr")
	_, err := r.Columns.Get(ctx, ws.ID(), ana, f.ID())
	wantErr(t, err, domain.ErrNotFound)

	want := ports.ResponseColumns{WorkspaceID: ws.ID(), UserID: ana, FormID: f.ID(), Shown: []string{"fld_b", "fld_a"},
		Hidden: []string{"fld_c"}, UpdatedAt: base}
	noErr(t, r.Columns.Put(ctx, want))
	got, err := r.Columns.Get(ctx, ws.ID(), ana, f.ID())
	noErr(t, err)
	sameIDs(t, "shown", got.Shown, "fld_b", "fld_a")
	sameIDs(t, "hidden", got.Hidden, "fld_c")
	if got.UserID != ana || got.FormID != f.ID() || got.WorkspaceID != ws.ID() || !got.UpdatedAt.Equal(base) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Another person, another form, another workspace: nothing kept.
	for _, k := range [][3]string{{ws.ID(), bob, f.ID()}, {ws.ID(), ana, g.ID()}, {other.ID(), ana, f.ID()}} {
		_, err := r.Columns.Get(ctx, k[0], k[1], k[2])
		wantErr(t, err, domain.ErrNotFound)
	}
	wantErr(t, r.Columns.Put(ctx, ports.ResponseColumns{WorkspaceID: other.ID(), UserID: ana, FormID: f.ID(), Shown: []string{"x"}, UpdatedAt: base}),
		domain.ErrNotFound)

	// Put replaces; an empty list stays empty (everything hidden).
	noErr(t, r.Columns.Put(ctx, ports.ResponseColumns{WorkspaceID: ws.ID(), UserID: ana, FormID: f.ID(), Hidden: []string{"fld_a", "fld_b"},
		UpdatedAt: base.Add(time.Minute)}))
	got, err = r.Columns.Get(ctx, ws.ID(), ana, f.ID())
	noErr(t, err)
	sameIDs(t, "shown after replace", got.Shown)
	sameIDs(t, "hidden after replace", got.Hidden, "fld_a", "fld_b")
	if !got.UpdatedAt.Equal(base.Add(time.Minute)) {
		t.Fatalf("updated at %v", got.UpdatedAt)
	}

	noErr(t, r.Columns.Delete(ctx, ws.ID(), ana, f.ID()))
	noErr(t, r.Columns.Delete(ctx, ws.ID(), ana, f.ID()))
	_, err = r.Columns.Get(ctx, ws.ID(), ana, f.ID())
	wantErr(t, err, domain.ErrNotFound)

	// Deleting the form deletes the choices made for it.
	noErr(t, r.Columns.Put(ctx, ports.ResponseColumns{WorkspaceID: ws.ID(), UserID: bob, FormID: g.ID(), Shown: []string{"fld_a"}, UpdatedAt: base}))
	noErr(t, r.Forms.Delete(ctx, ws.ID(), g.ID()))
	_, err = r.Columns.Get(ctx, ws.ID(), bob, g.ID())
	wantErr(t, err, domain.ErrNotFound)
}
