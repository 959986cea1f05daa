package persistence_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

func TestFormCreateGetIsolation(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		f := mustForm(t, r, a.ID(), base.Add(777*time.Microsecond))
		wantErr(t, r.forms.Create(ctx, f), domain.ErrConflict)

		got, err := r.forms.Get(ctx, a.ID(), f.ID())
		noErr(t, err)
		if got.ID() != f.ID() || got.WorkspaceID() != a.ID() || got.Name() != "Contact" || got.Status() != form.StatusDraft {
			t.Fatalf("got %+v", got)
		}
		if got.Description() == nil || *got.Description() != "Tell us about you" {
			t.Fatalf("description = %v", got.Description())
		}
		if !reflect.DeepEqual(got.Fields(), f.Fields()) {
			t.Fatalf("fields = %+v, want %+v", got.Fields(), f.Fields())
		}
		if h := got.Fields()[1].Help; h == nil || *h != "Where we answer you.\nWe never share it." || got.Fields()[0].Help != nil {
			t.Fatalf("help did not round trip: %v / %v", got.Fields()[0].Help, h)
		}
		want := base.Truncate(time.Millisecond)
		if !got.CreatedAt().Equal(want) || !got.UpdatedAt().Equal(want) {
			t.Fatalf("times %v %v, want %v", got.CreatedAt(), got.UpdatedAt(), want)
		}

		// Another workspace sees nothing of it.
		_, err = r.forms.Get(ctx, b.ID(), f.ID())
		wantErr(t, err, domain.ErrNotFound)
		list, err := r.forms.List(ctx, b.ID(), nil, ports.Page{Limit: 10})
		noErr(t, err)
		if len(list) != 0 {
			t.Fatalf("workspace b lists %d forms", len(list))
		}
		called := false
		_, err = r.forms.Update(ctx, b.ID(), f.ID(), func(*form.Form) (ports.Effects, error) { called = true; return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
		if called {
			t.Fatal("change called for another workspace's form")
		}
		wantErr(t, r.forms.Delete(ctx, b.ID(), f.ID()), domain.ErrNotFound)
		counts, err := r.forms.SubmissionCounts(ctx, b.ID(), []string{f.ID()})
		noErr(t, err)
		if counts[f.ID()] != 0 {
			t.Fatalf("count seen from workspace b = %d", counts[f.ID()])
		}
		_, err = r.forms.Get(ctx, a.ID(), "frm_missing")
		wantErr(t, err, domain.ErrNotFound)

		// A submission cannot name a form of another workspace, even with the right form ID.
		s, e := buildSubmission(t, f, base, subOpts{})
		noErr(t, r.submissions.Add(ctx, s, e))
		impostor := form.UnmarshalWithSettingsFromDatabase(f.ID(), b.ID(), f.Name(), nil, f.Status(), f.Fields(), f.Settings(), base, base)
		forged, fe := buildSubmission(t, impostor, base, subOpts{})
		wantErr(t, r.submissions.Add(ctx, forged, fe), domain.ErrNotFound)
		if _, err := r.submissions.Get(ctx, b.ID(), f.ID(), s.ID()); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("get from workspace b: %v", err)
		}
	})
}

func TestFormListPagination(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		other := mustWorkspace(t, r, base)
		mustForm(t, r, other.ID(), base.Add(time.Hour)) // never listed for w

		// Seven forms: three share one timestamp, so the ID breaks the tie.
		times := []time.Duration{0, time.Second, time.Second, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
		var forms []*form.Form
		for _, d := range times {
			forms = append(forms, mustForm(t, r, w.ID(), base.Add(d)))
		}
		// Newest first: by created_at desc, then id desc (IDs increase with creation order).
		want := []string{forms[6].ID(), forms[5].ID(), forms[4].ID(), forms[3].ID(), forms[2].ID(), forms[1].ID(), forms[0].ID()}

		var got []string
		var after *ports.Position
		pages := 0
		for {
			page, err := r.forms.List(ctx, w.ID(), nil, ports.Page{Limit: 3 + 1, After: after}) // limit+1 tells has_more
			noErr(t, err)
			pages++
			hasMore := len(page) > 3
			if hasMore {
				page = page[:3]
			}
			for _, f := range page {
				got = append(got, f.ID())
			}
			if !hasMore {
				break
			}
			last := page[len(page)-1]
			after = &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}
		}
		if !reflect.DeepEqual(got, want) || pages != 3 {
			t.Fatalf("pages=%d got %v\nwant %v", pages, got, want)
		}

		// A position inside the tie continues strictly after it.
		page, err := r.forms.List(ctx, w.ID(), nil, ports.Page{Limit: 10, After: &ports.Position{CreatedAt: base.Add(time.Second), ID: forms[2].ID()}})
		noErr(t, err)
		if len(page) != 2 || page[0].ID() != forms[1].ID() || page[1].ID() != forms[0].ID() {
			t.Fatalf("after tie: %v", ids(page))
		}

		// Status filter.
		published := form.StatusPublished
		_, err = r.forms.Update(ctx, w.ID(), forms[2].ID(), func(f *form.Form) (ports.Effects, error) {
			s := "published"
			_, err := f.Apply(form.Patch{Status: &s}, nil, form.DefaultLimits, base.Add(time.Minute))
			return ports.Effects{}, err
		})
		noErr(t, err)
		page, err = r.forms.List(ctx, w.ID(), &published, ports.Page{Limit: 10})
		noErr(t, err)
		if len(page) != 1 || page[0].ID() != forms[2].ID() {
			t.Fatalf("published: %v", ids(page))
		}
		draft := form.StatusDraft
		page, err = r.forms.List(ctx, w.ID(), &draft, ports.Page{Limit: 10})
		noErr(t, err)
		if len(page) != 6 {
			t.Fatalf("drafts: %v", ids(page))
		}
	})
}

func ids(fs []*form.Form) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID()
	}
	return out
}

func TestFormUpdate(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		before := count(t, r.db, "SELECT COUNT(*) FROM outbox")

		// change fails: its error comes back unchanged and nothing is written.
		boom := errors.New("boom")
		_, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			name := "Renamed"
			if _, err := f.Apply(form.Patch{Name: &name}, nil, form.DefaultLimits, base.Add(time.Hour)); err != nil {
				return ports.Effects{}, err
			}
			return ports.Effects{Events: []event.Event{event.Published(newID("evt"), f, base.Add(time.Hour))}}, boom
		})
		if err != boom {
			t.Fatalf("error = %v, want the change's error unchanged", err)
		}
		if n := count(t, r.db, "SELECT COUNT(*) FROM outbox"); n != before {
			t.Fatalf("outbox rows after failed update: %d, want %d", n, before)
		}
		got, err := r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		if got.Name() != "Contact" || !got.UpdatedAt().Equal(base) {
			t.Fatalf("form changed by failed update: %s %v", got.Name(), got.UpdatedAt())
		}

		// A validation error from the domain also passes through as is.
		_, err = r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			empty := " "
			_, err := f.Apply(form.Patch{Name: &empty}, nil, form.DefaultLimits, base)
			return ports.Effects{}, err
		})
		var ve *domain.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("error = %v, want *domain.ValidationError", err)
		}

		// Success: form and its event are stored together.
		at := base.Add(2 * time.Hour)
		var evID string
		updated, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			name, status := "Signup", "published"
			nameID, _, _ := fieldIDs(f)
			fields := []form.FieldSpec{{ID: nameID, Label: "Full name", Type: "text", Required: true}, {Label: "Date", Type: "date"}}
			published, err := f.Apply(form.Patch{Name: &name, Status: &status, Fields: &fields}, func() string { return newID("fld") }, form.DefaultLimits, at)
			if err != nil || !published {
				return ports.Effects{}, err
			}
			e := event.Published(newID("evt"), f, at)
			evID = e.ID
			return ports.Effects{Events: []event.Event{e}}, nil
		})
		noErr(t, err)
		if updated.Name() != "Signup" || updated.Status() != form.StatusPublished {
			t.Fatalf("returned %+v", updated)
		}
		got, err = r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		if got.Name() != "Signup" || got.Status() != form.StatusPublished || !got.UpdatedAt().Equal(at) || !got.CreatedAt().Equal(base) ||
			!reflect.DeepEqual(got.Fields(), updated.Fields()) || len(got.Fields()) != 2 || got.Fields()[1].Type != form.TypeDate {
			t.Fatalf("stored %+v", got)
		}
		pending, err := r.outbox.Pending(ctx, 0, 100)
		noErr(t, err)
		if len(pending) != 1 {
			t.Fatalf("pending = %d, want 1", len(pending))
		}
		e := pending[0].Event
		if e.ID != evID || e.Type != event.FormPublished || e.WorkspaceID != w.ID() || e.FormID != f.ID() || !e.OccurredAt.Equal(at) ||
			e.Data["name"] != "Signup" || e.Data["published_at"] != domain.FormatTime(at) {
			t.Fatalf("event %+v", e)
		}

		_, err = r.forms.Update(ctx, w.ID(), "frm_missing", func(*form.Form) (ports.Effects, error) { return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
	})
}

func TestFormDeleteCascades(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		doomed := mustForm(t, r, w.ID(), base)
		kept := mustForm(t, r, w.ID(), base)
		for i := range 5 {
			mustAdd(t, r, doomed, base.Add(time.Duration(i)*time.Second), subOpts{})
		}
		keptSub := mustAdd(t, r, kept, base, subOpts{})

		noErr(t, r.forms.Delete(ctx, w.ID(), doomed.ID()))
		_, err := r.forms.Get(ctx, w.ID(), doomed.ID())
		wantErr(t, err, domain.ErrNotFound)
		wantErr(t, r.forms.Delete(ctx, w.ID(), doomed.ID()), domain.ErrNotFound)
		if n := countWhere(t, r.db, "submissions", "form_id", doomed.ID()); n != 0 {
			t.Fatalf("%d submissions left", n)
		}
		if n := countWhere(t, r.db, "form_counters", "form_id", doomed.ID()); n != 0 {
			t.Fatalf("%d counter rows left", n)
		}
		list, err := r.submissions.List(ctx, w.ID(), doomed.ID(), ports.SubmissionQuery{Page: ports.Page{Limit: 10}})
		noErr(t, err)
		if len(list) != 0 {
			t.Fatalf("deleted form lists %d submissions", len(list))
		}
		// The other form is untouched.
		_, err = r.submissions.Get(ctx, w.ID(), kept.ID(), keptSub.ID())
		noErr(t, err)
		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{kept.ID(), doomed.ID()})
		noErr(t, err)
		if counts[kept.ID()] != 1 || counts[doomed.ID()] != 0 {
			t.Fatalf("counts = %v", counts)
		}
	})
}

// LastSubmissionTimes: the newest submission of each form, none for a form without one, nothing
// of another workspace's form; deleting the newest submission shows the one before.
func TestFormLastSubmissionTimes(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		busy, empty := mustForm(t, r, a.ID(), base), mustForm(t, r, a.ID(), base)
		other := mustForm(t, r, b.ID(), base)
		mustAdd(t, r, busy, base.Add(time.Minute), subOpts{name: "first"})
		newest := mustAdd(t, r, busy, base.Add(3*time.Minute), subOpts{name: "newest"})
		mustAdd(t, r, busy, base.Add(2*time.Minute), subOpts{name: "middle"})
		mustAdd(t, r, other, base.Add(time.Hour), subOpts{name: "elsewhere"})

		got, err := r.forms.LastSubmissionTimes(ctx, a.ID(), []string{busy.ID(), empty.ID(), other.ID(), "frm_unknown"})
		noErr(t, err)
		if len(got) != 1 || !got[busy.ID()].Equal(base.Add(3*time.Minute)) {
			t.Fatalf("last submission times: %v", got)
		}
		got, err = r.forms.LastSubmissionTimes(ctx, a.ID(), nil)
		noErr(t, err)
		if len(got) != 0 {
			t.Fatalf("no forms asked: %v", got)
		}

		noErr(t, r.submissions.Delete(ctx, a.ID(), busy.ID(), newest.ID()))
		got, err = r.forms.LastSubmissionTimes(ctx, a.ID(), []string{busy.ID()})
		noErr(t, err)
		if !got[busy.ID()].Equal(base.Add(2 * time.Minute)) {
			t.Fatalf("after deleting the newest: %v", got)
		}
	})
}
