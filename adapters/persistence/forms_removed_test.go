package persistence_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// A field left out of a PATCH is remembered with the form: Get (the hot path), List and a later
// update read it back, and the submission's stored answer of it stays.
func TestFormRemovedFieldsStored(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		s, e := buildSubmission(t, f, base, subOpts{name: "Ada"})
		noErr(t, r.submissions.Add(ctx, s, e))
		if got, err := r.forms.Get(ctx, w.ID(), f.ID()); err != nil || len(got.RemovedFields()) != 0 {
			t.Fatalf("new form: removed = %+v, %v", got.RemovedFields(), err)
		}

		nameID, _, _ := fieldIDs(f)
		at := base.Add(time.Hour)
		remove := func(f *form.Form, id string, at time.Time) (ports.Effects, error) {
			var specs []form.FieldSpec
			for _, fl := range f.Fields() {
				if fl.ID != id {
					specs = append(specs, form.FieldSpec{ID: fl.ID, Label: fl.Label, Type: string(fl.Type), Required: fl.Required, Options: fl.Options})
				}
			}
			_, err := f.Apply(form.Patch{Fields: &specs}, nil, form.DefaultLimits, at)
			return ports.Effects{}, err
		}
		updated, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) { return remove(f, nameID, at) })
		noErr(t, err)
		want := updated.RemovedFields()
		if len(want) != 1 || want[0].ID != nameID || !want[0].RemovedAt.Equal(at) {
			t.Fatalf("removed after update = %+v", want)
		}

		got, err := r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		if !reflect.DeepEqual(got.RemovedFields(), want) {
			t.Fatalf("Get: removed = %+v, want %+v", got.RemovedFields(), want)
		}
		public, err := r.forms.Find(ctx, f.ID())
		noErr(t, err)
		if !reflect.DeepEqual(public.RemovedFields(), want) {
			t.Fatalf("Find: removed = %+v, want %+v", public.RemovedFields(), want)
		}
		list, err := r.forms.List(ctx, w.ID(), nil, ports.Page{Limit: 10})
		noErr(t, err)
		if len(list) != 1 || !reflect.DeepEqual(list[0].RemovedFields(), want) {
			t.Fatalf("List: %+v", list)
		}

		// A second removal adds to the stored list; the first stays as it was.
		_, emailID, _ := fieldIDs(f)
		later := at.Add(time.Hour)
		_, err = r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) { return remove(f, emailID, later) })
		noErr(t, err)
		got, err = r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		if rs := got.RemovedFields(); len(rs) != 2 || !reflect.DeepEqual(rs[0], want[0]) || rs[1].ID != emailID || !rs[1].RemovedAt.Equal(later) {
			t.Fatalf("removed after two removals = %+v", rs)
		}

		// The answer to the removed field is still stored.
		stored, err := r.submissions.Get(ctx, w.ID(), f.ID(), s.ID())
		noErr(t, err)
		if v, ok := stored.Answer(nameID); !ok || v.String() != "Ada" {
			t.Fatalf("answer of the removed field = %v, %v", v, ok)
		}
	})
}
