package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// A submission records the version of the form it answered, on its row, as the capture's group
// commit writes it; later versions of the form do not change it.
func TestSubmissionFormVersionStored(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		s1, e1 := buildSubmission(t, f, base, subOpts{name: "Ada"})
		noErr(t, r.submissions.Add(ctx, s1, e1))

		updated, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			specs := specsOf(f)
			specs[0].Label = "Your name"
			_, err := f.Apply(form.Patch{Fields: &specs}, nil, form.DefaultLimits, base.Add(time.Minute))
			return ports.Effects{}, err
		})
		noErr(t, err)
		s2, e2 := buildSubmission(t, updated, base.Add(2*time.Minute), subOpts{name: "Grace"})
		noErr(t, r.submissions.Add(ctx, s2, e2))

		for _, c := range []struct {
			id   string
			want int
		}{{s1.ID(), 1}, {s2.ID(), 2}} {
			got, err := r.submissions.Get(ctx, w.ID(), f.ID(), c.id)
			noErr(t, err)
			if got.FormVersion() != c.want {
				t.Errorf("submission %s: form_version = %d, want %d", c.id, got.FormVersion(), c.want)
			}
			var stored int
			q := "SELECT form_version FROM submissions WHERE id = ?"
			if r.db.Dialect() == persistence.DialectPostgres {
				q = "SELECT form_version FROM submissions WHERE id = $1"
			}
			noErr(t, r.db.SQL().QueryRowContext(ctx, q, c.id).Scan(&stored))
			if stored != c.want {
				t.Errorf("submission %s: stored form_version = %d, want %d", c.id, stored, c.want)
			}
		}
		// The outbox keeps each submission event's form version for the transports.
		recs, err := r.outbox.Pending(ctx, 0, 100)
		noErr(t, err)
		got := map[string]int{}
		for _, rec := range recs {
			if id, _ := rec.Event.Data["submission_id"].(string); id != "" {
				got[id] = rec.Event.FormVersion
			}
		}
		if got[s1.ID()] != 1 || got[s2.ID()] != 2 {
			t.Errorf("outbox form versions = %v, want %s:1 %s:2", got, s1.ID(), s2.ID())
		}
	})
}

// Creating a form stores version 1; a change to its fields stores the next version with its
// author in the same transaction; other changes and refused changes store none.
func TestFormVersionsStoredWithTheForm(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)

		vs, err := r.forms.ListVersions(ctx, w.ID(), f.ID(), 0, 100)
		noErr(t, err)
		if len(vs) != 1 || vs[0].Version != 1 || len(vs[0].Fields) != len(f.Fields()) || vs[0].CreatedBy != nil {
			t.Fatalf("versions of a new form = %+v", vs)
		}

		actor := audit.Actor{Type: audit.ActorUser, ID: "usr_1", Name: "ada@example.com"}
		at := base.Add(time.Hour)
		relabel := func(f *form.Form, label string) (ports.Effects, error) {
			specs := specsOf(f)
			specs[0].Label = label
			if _, err := f.Apply(form.Patch{Fields: &specs}, nil, form.DefaultLimits, at); err != nil {
				return ports.Effects{}, err
			}
			e, err := audit.New(newID("aud"), w.ID(), audit.FormUpdated, actor, &audit.Target{Type: "form", ID: f.ID()}, "", nil, at)
			return ports.Effects{Audit: []audit.Event{e}}, err
		}
		updated, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) { return relabel(f, "Your name") })
		noErr(t, err)
		if updated.Version() != 2 {
			t.Fatalf("version after a field change = %d", updated.Version())
		}
		got, err := r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		public, err := r.forms.Find(ctx, f.ID())
		noErr(t, err)
		if got.Version() != 2 || public.Version() != 2 {
			t.Fatalf("stored version: Get %d, Find %d", got.Version(), public.Version())
		}
		v2, err := r.forms.GetVersion(ctx, w.ID(), f.ID(), 2)
		noErr(t, err)
		if v2.Fields[0].Label != "Your name" || v2.CreatedBy == nil || *v2.CreatedBy != actor || !v2.CreatedAt.Equal(at) {
			t.Fatalf("version 2 = %+v", v2)
		}
		v1, err := r.forms.GetVersion(ctx, w.ID(), f.ID(), 1)
		noErr(t, err)
		if v1.Fields[0].Label == "Your name" || v1.Fields[0].ID != v2.Fields[0].ID {
			t.Fatalf("version 1 changed: %+v", v1.Fields[0])
		}

		// A rename is no new version.
		_, err = r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			name := "Renamed"
			_, err := f.Apply(form.Patch{Name: &name}, nil, form.DefaultLimits, at)
			return ports.Effects{}, err
		})
		noErr(t, err)
		// A change that fails after changing the fields writes nothing: no form, no version.
		boom := errors.New("boom")
		_, err = r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			if _, err := relabel(f, "Lost"); err != nil {
				return ports.Effects{}, err
			}
			return ports.Effects{}, boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("failed change: %v", err)
		}
		// Effects that cannot be written roll the version back with the form.
		_, err = r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			fx, err := relabel(f, "Lost too")
			fx.Audit = append(fx.Audit, fx.Audit[0]) // the same audit ID twice: a conflict
			return fx, err
		})
		if err == nil {
			t.Fatal("an update with a duplicate audit event succeeded")
		}
		vs, err = r.forms.ListVersions(ctx, w.ID(), f.ID(), 0, 100)
		noErr(t, err)
		if len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 {
			t.Fatalf("versions = %+v, want 2 then 1", vs)
		}
		got, err = r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		if got.Version() != 2 || got.Fields()[0].Label != "Your name" {
			t.Fatalf("form after refused changes: version %d, label %q", got.Version(), got.Fields()[0].Label)
		}

		// Another workspace sees none of them; a version that does not exist is not found.
		other := mustWorkspace(t, r, base)
		if _, err := r.forms.ListVersions(ctx, other.ID(), f.ID(), 0, 100); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("other workspace list: %v", err)
		}
		if _, err := r.forms.GetVersion(ctx, other.ID(), f.ID(), 1); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("other workspace get: %v", err)
		}
		if _, err := r.forms.GetVersion(ctx, w.ID(), f.ID(), 3); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("version 3: %v", err)
		}

		// Deleting the form deletes its versions.
		noErr(t, r.forms.Delete(ctx, w.ID(), f.ID()))
		if _, err := r.forms.ListVersions(ctx, w.ID(), f.ID(), 0, 100); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("versions of a deleted form: %v", err)
		}
	})
}

func specsOf(f *form.Form) []form.FieldSpec {
	var specs []form.FieldSpec
	for _, fl := range f.Fields() {
		specs = append(specs, form.FieldSpec{ID: fl.ID, Label: fl.Label, Type: string(fl.Type), Required: fl.Required, Options: fl.Options})
	}
	return specs
}

// Migration 00205 up gives existing forms version 1 with a version row of their current fields
// and existing submissions form_version 1; down removes all of it.
func TestFormVersionsMigration(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		s, e := buildSubmission(t, f, base, subOpts{name: "Ada"})
		noErr(t, r.submissions.Add(ctx, s, e))
		_, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			specs := specsOf(f)
			specs[0].Label = "Your name"
			_, err := f.Apply(form.Patch{Fields: &specs}, nil, form.DefaultLimits, base.Add(time.Minute))
			return ports.Effects{}, err
		})
		noErr(t, err)

		p := migrationsOf(t, r.db)
		_, err = p.DownTo(ctx, 203)
		noErr(t, err)
		for _, q := range []string{"SELECT version FROM forms", "SELECT form_version FROM submissions", "SELECT version FROM form_versions"} {
			if rows, err := r.db.SQL().QueryContext(ctx, q); err == nil {
				_ = rows.Close()
				t.Errorf("after 00205 down %q works", q)
			}
		}

		_, err = p.Up(ctx)
		noErr(t, err)
		got, err := r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		if got.Version() != 1 {
			t.Errorf("migrated form version = %d, want 1", got.Version())
		}
		vs, err := r.forms.ListVersions(ctx, w.ID(), f.ID(), 0, 100)
		noErr(t, err)
		if len(vs) != 1 || vs[0].Version != 1 || vs[0].CreatedBy != nil || vs[0].Fields[0].Label != "Your name" || !vs[0].CreatedAt.Equal(base.Add(time.Minute)) {
			t.Fatalf("migrated versions = %+v", vs)
		}
		sub, err := r.submissions.Get(ctx, w.ID(), f.ID(), s.ID())
		noErr(t, err)
		if sub.FormVersion() != 1 {
			t.Errorf("migrated submission form_version = %d, want 1", sub.FormVersion())
		}
		// The next field change is version 2.
		updated, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			specs := specsOf(f)
			specs[0].Label = "Name"
			_, err := f.Apply(form.Patch{Fields: &specs}, nil, form.DefaultLimits, base.Add(time.Hour))
			return ports.Effects{}, err
		})
		noErr(t, err)
		if updated.Version() != 2 {
			t.Errorf("version after the migration's next change = %d, want 2", updated.Version())
		}
	})
}

// A delivery keeps its event's form version through AddAll, the claim and Save, so every
// attempt sends X-Service-Form-Version.
func TestDeliveryFormVersionStored(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		hook := mustWebhook(t, r, w.ID(), nil, nil, base)
		e := event.Event{ID: newID("evt"), Type: event.SubmissionCreated, WorkspaceID: w.ID(), FormID: f.ID(), OccurredAt: base,
			Data: map[string]any{"submission_id": "sub_1"}, FormVersion: 5}
		d := webhook.NewDelivery(newID("dlv"), hook, e, []byte(`{}`), base)
		plain := buildDelivery(hook, f.ID(), base, `{}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{d, plain}))
		claimed, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Hour), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 2 {
			t.Fatalf("claimed %d deliveries, want 2", len(claimed))
		}
		for _, c := range claimed {
			if want := map[string]int{d.ID(): 5, plain.ID(): 0}[c.ID()]; c.FormVersion() != want {
				t.Fatalf("claimed delivery %s has form version %d, want %d", c.ID(), c.FormVersion(), want)
			}
			noErr(t, r.deliveries.Save(ctx, c))
		}
		again, err := r.deliveries.Get(ctx, w.ID(), hook.ID(), d.ID())
		noErr(t, err)
		if again.FormVersion() != 5 {
			t.Fatalf("saved delivery form version = %d, want 5", again.FormVersion())
		}
	})
}
