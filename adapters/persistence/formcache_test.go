package persistence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// On SQLite a process keeps the forms rows it read while no forms row was written since
// (form_epoch): a write by another process on the same file, even a bare statement outside
// the repositories, shows on the very next read.
func TestKeptFormsSeeEveryWriteOfAnotherProcess(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() repos {
		db, err := persistence.Open(ctx, persistence.Config{DataDir: dir})
		noErr(t, err)
		noErr(t, db.Migrate(ctx))
		t.Cleanup(func() { _ = db.Close() })
		return newRepos(db)
	}
	a, b := open(), open()
	w := mustWorkspace(t, a, base)
	other := mustWorkspace(t, a, base)
	f := mustForm(t, a, w.ID(), base)
	for range 2 { // the second read is the kept row
		got, err := a.forms.Find(ctx, f.ID())
		noErr(t, err)
		if got.Name() != f.Name() || got.Status() != form.StatusDraft {
			t.Fatalf("found %s (%s)", got.Name(), got.Status())
		}
		if _, err := a.forms.Get(ctx, other.ID(), f.ID()); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("another workspace's form from what is kept: %v, want not found", err)
		}
	}

	_, err := b.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
		s := "published"
		_, err := f.Apply(form.Patch{Status: &s}, nil, form.DefaultLimits, f.UpdatedAt())
		return ports.Effects{}, err
	})
	noErr(t, err)
	got, err := a.forms.Find(ctx, f.ID())
	noErr(t, err)
	if got.Status() != form.StatusPublished {
		t.Fatalf("after another process published it: %s", got.Status())
	}

	if _, err := b.db.SQL().ExecContext(ctx, "UPDATE forms SET name = 'Renamed by hand' WHERE id = ?", f.ID()); err != nil {
		t.Fatal(err)
	}
	got, err = a.forms.Get(ctx, w.ID(), f.ID())
	noErr(t, err)
	if got.Name() != "Renamed by hand" {
		t.Fatalf("after a bare UPDATE in another process: %q", got.Name())
	}

	noErr(t, b.forms.Delete(ctx, w.ID(), f.ID()))
	if _, err := a.forms.Find(ctx, f.ID()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("after another process deleted it: %v, want not found", err)
	}
}
