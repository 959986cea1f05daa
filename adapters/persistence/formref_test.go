package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// A form's ref is stored, found by FindByRef in its workspace only, and unique per workspace.
func TestFormRefFindAndUnique(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		setRef := func(f *form.Form, ref string) error {
			_, err := r.forms.Update(ctx, f.WorkspaceID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
				rp := &ref
				_, err := f.Apply(form.Patch{Ref: &rp}, func() string { return "fld_unused" }, form.DefaultLimits, base)
				return ports.Effects{}, err
			})
			return err
		}
		f := mustForm(t, r, a.ID(), base)
		g := mustForm(t, r, a.ID(), base.Add(time.Millisecond))
		h := mustForm(t, r, b.ID(), base)
		_, err := r.forms.FindByRef(ctx, a.ID(), "contact")
		wantErr(t, err, domain.ErrNotFound)
		noErr(t, setRef(f, "contact"))
		got, err := r.forms.FindByRef(ctx, a.ID(), "contact")
		noErr(t, err)
		if got.ID() != f.ID() || got.Ref() == nil || *got.Ref() != "contact" {
			t.Fatalf("found %s ref %v", got.ID(), got.Ref())
		}
		if got, err := r.forms.Get(ctx, a.ID(), f.ID()); err != nil || got.Ref() == nil || *got.Ref() != "contact" {
			t.Fatalf("get: ref %v, %v", got.Ref(), err)
		}
		// The unique index refuses the same ref on another form of the workspace.
		wantErr(t, setRef(g, "contact"), domain.ErrConflict)
		// Another workspace neither sees it nor is blocked by it.
		_, err = r.forms.FindByRef(ctx, b.ID(), "contact")
		wantErr(t, err, domain.ErrNotFound)
		noErr(t, setRef(h, "contact"))
	})
}
