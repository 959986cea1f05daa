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
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

func publish(t testing.TB, r repos, f *form.Form) *form.Form {
	t.Helper()
	got, err := r.forms.Update(context.Background(), f.WorkspaceID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
		s := "published"
		_, err := f.Apply(form.Patch{Status: &s}, nil, form.DefaultLimits, f.UpdatedAt())
		return ports.Effects{}, err
	})
	noErr(t, err)
	return got
}

func TestSubmissionAddGet(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		a, b := mustWorkspace(t, r, base), mustWorkspace(t, r, base)
		f := publish(t, r, mustForm(t, r, a.ID(), base))
		other := mustForm(t, r, a.ID(), base)
		at := base.Add(1500 * time.Microsecond)
		s, e := buildSubmission(t, f, at, subOpts{name: "Grace", userAgent: "Mozilla/5.0 Test", referrer: "https://ref.example/"})
		noErr(t, r.submissions.Add(ctx, s, e))
		wantErr(t, r.submissions.Add(ctx, s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, at)), domain.ErrConflict)

		got, err := r.submissions.Get(ctx, a.ID(), f.ID(), s.ID())
		noErr(t, err)
		if !reflect.DeepEqual(got.Data(), s.Data()) {
			t.Fatalf("data = %+v, want %+v", got.Data(), s.Data())
		}
		if !reflect.DeepEqual(got.Metadata(), s.Metadata()) {
			t.Fatalf("metadata = %+v, want %+v", got.Metadata(), s.Metadata())
		}
		_, _, topics := fieldIDs(f)
		if v := got.Data()[topics]; !v.IsList() || !reflect.DeepEqual(v.Strings(), []string{"sales", "press"}) {
			t.Fatalf("list value = %+v", v)
		}
		wantAt := base.Add(time.Millisecond)
		if got.ID() != s.ID() || got.FormID() != f.ID() || got.WorkspaceID() != a.ID() || !got.SubmittedAt().Equal(wantAt) || !got.UpdatedAt().Equal(wantAt) {
			t.Fatalf("got %s %s %s %v %v", got.ID(), got.FormID(), got.WorkspaceID(), got.SubmittedAt(), got.UpdatedAt())
		}

		// Isolation: wrong workspace, wrong form, unknown ID.
		for _, q := range [][3]string{{b.ID(), f.ID(), s.ID()}, {a.ID(), other.ID(), s.ID()}, {a.ID(), f.ID(), "sub_missing"}} {
			_, err := r.submissions.Get(ctx, q[0], q[1], q[2])
			wantErr(t, err, domain.ErrNotFound)
		}
		list, err := r.submissions.List(ctx, b.ID(), f.ID(), ports.SubmissionQuery{Page: ports.Page{Limit: 10}})
		noErr(t, err)
		if len(list) != 0 {
			t.Fatalf("workspace b lists %d", len(list))
		}
		wantErr(t, r.submissions.Delete(ctx, b.ID(), f.ID(), s.ID()), domain.ErrNotFound)
		_, err = r.submissions.Update(ctx, b.ID(), f.ID(), s.ID(), func(*submission.Submission) (ports.Effects, error) {
			t.Fatal("change called across workspaces")
			return ports.Effects{}, nil
		})
		wantErr(t, err, domain.ErrNotFound)

		// Its event is in the outbox with the values.
		pending, err := r.outbox.Pending(ctx, 0, 10)
		noErr(t, err)
		if len(pending) != 1 || pending[0].Event.ID != e.ID || pending[0].Event.Type != event.SubmissionCreated {
			t.Fatalf("pending = %+v", pending)
		}
		pe := pending[0].Event
		if pe.Data["submission_id"] != s.ID() || pe.WorkspaceID != a.ID() || pe.FormID != f.ID() || !pe.OccurredAt.Equal(wantAt) {
			t.Fatalf("event = %+v", pe)
		}
		nameID, _, _ := fieldIDs(f)
		if fields, _ := pe.Data["fields"].(map[string]any); fields[nameID] != "Grace" || !reflect.DeepEqual(fields[topics], []any{"sales", "press"}) {
			t.Fatalf("event fields = %+v", pe.Data["fields"])
		}

		// Unknown form → not found.
		ghost := buildForm(t, a.ID(), base)
		gs, ge := buildSubmission(t, ghost, base, subOpts{})
		wantErr(t, r.submissions.Add(ctx, gs, ge), domain.ErrNotFound)
	})
}

func TestSubmissionListPaginationAndBounds(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		other := mustForm(t, r, w.ID(), base)
		mustAdd(t, r, other, base.Add(time.Second), subOpts{}) // never listed for f

		// 9 submissions: offsets in seconds, with a tie of three at 2s and two at 4s.
		offsets := []int{0, 1, 2, 2, 2, 3, 4, 4, 5}
		var subs []*submission.Submission
		for _, o := range offsets {
			subs = append(subs, mustAdd(t, r, f, base.Add(time.Duration(o)*time.Second), subOpts{}))
		}
		want := make([]string, 0, len(subs))
		for i := len(subs) - 1; i >= 0; i-- { // IDs grow with creation, so ties are id desc too
			want = append(want, subs[i].ID())
		}
		for _, limit := range []int{1, 2, 3, 4, 9, 10} {
			var got []string
			var after *ports.Position
			for {
				page, err := r.submissions.List(ctx, w.ID(), f.ID(), ports.SubmissionQuery{Page: ports.Page{Limit: limit + 1, After: after}})
				noErr(t, err)
				more := len(page) > limit
				if more {
					page = page[:limit]
				}
				for _, s := range page {
					got = append(got, s.ID())
				}
				if !more {
					break
				}
				last := page[len(page)-1]
				after = &ports.Position{CreatedAt: last.SubmittedAt(), ID: last.ID()}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("limit %d: got %v\nwant %v", limit, got, want)
			}
		}

		bound := func(d time.Duration) *time.Time { t := base.Add(d); return &t }
		cases := []struct {
			name          string
			after, before *time.Time
			want          []int // indexes into subs, newest first
		}{
			{"after is exclusive", bound(4 * time.Second), nil, []int{8}},
			{"before is exclusive", nil, bound(2 * time.Second), []int{1, 0}},
			{"both", bound(1 * time.Second), bound(4 * time.Second), []int{5, 4, 3, 2}},
			{"sub-millisecond after", bound(4*time.Second - time.Microsecond), nil, []int{8, 7, 6}},
			{"sub-millisecond before", nil, bound(time.Second + time.Microsecond), []int{1, 0}},
			{"empty range", bound(2 * time.Second), bound(3 * time.Second), nil},
		}
		for _, c := range cases {
			page, err := r.submissions.List(ctx, w.ID(), f.ID(), ports.SubmissionQuery{Page: ports.Page{Limit: 100}, CreatedAfter: c.after, CreatedBefore: c.before})
			noErr(t, err)
			var got, exp []string
			for _, s := range page {
				got = append(got, s.ID())
			}
			for _, i := range c.want {
				exp = append(exp, subs[i].ID())
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("%s: got %v, want %v", c.name, got, exp)
			}
		}
		// Bounds combine with the keyset position.
		page, err := r.submissions.List(ctx, w.ID(), f.ID(), ports.SubmissionQuery{
			Page:         ports.Page{Limit: 2, After: &ports.Position{CreatedAt: subs[4].SubmittedAt(), ID: subs[4].ID()}},
			CreatedAfter: bound(0),
		})
		noErr(t, err)
		if len(page) != 2 || page[0].ID() != subs[3].ID() || page[1].ID() != subs[2].ID() {
			t.Fatalf("after tie position: %d items", len(page))
		}
	})
}

func TestSubmissionUpdateDelete(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		s := mustAdd(t, r, f, base, subOpts{name: "Before"})
		mustAdd(t, r, f, base, subOpts{})
		nameID, emailID, _ := fieldIDs(f)
		seqBefore := count(t, r.db, "SELECT COUNT(*) FROM outbox")

		boom := errors.New("boom")
		_, err := r.submissions.Update(ctx, w.ID(), f.ID(), s.ID(), func(s *submission.Submission) (ports.Effects, error) {
			if err := s.Update(f, map[string]submission.Input{nameID: "Nope"}, base.Add(time.Hour)); err != nil {
				return ports.Effects{}, err
			}
			return ports.Effects{Events: []event.Event{event.ForSubmission(newID("evt"), event.SubmissionUpdated, s, base.Add(time.Hour))}}, boom
		})
		if err != boom {
			t.Fatalf("error = %v, want the change's error unchanged", err)
		}
		if n := count(t, r.db, "SELECT COUNT(*) FROM outbox"); n != seqBefore {
			t.Fatalf("outbox grew on failed update")
		}
		got, err := r.submissions.Get(ctx, w.ID(), f.ID(), s.ID())
		noErr(t, err)
		if got.Data()[nameID].String() != "Before" {
			t.Fatalf("failed update changed the submission")
		}

		at := base.Add(2 * time.Hour)
		var evID string
		updated, err := r.submissions.Update(ctx, w.ID(), f.ID(), s.ID(), func(s *submission.Submission) (ports.Effects, error) {
			if err := s.Update(f, map[string]submission.Input{nameID: "After", emailID: nil}, at); err != nil {
				return ports.Effects{}, err
			}
			e := event.ForSubmission(newID("evt"), event.SubmissionUpdated, s, at)
			evID = e.ID
			return ports.Effects{Events: []event.Event{e}}, nil
		})
		noErr(t, err)
		got, err = r.submissions.Get(ctx, w.ID(), f.ID(), s.ID())
		noErr(t, err)
		if !reflect.DeepEqual(got.Data(), updated.Data()) || got.Data()[nameID].String() != "After" || !got.UpdatedAt().Equal(at) || !got.SubmittedAt().Equal(base) {
			t.Fatalf("stored %+v", got.Data())
		}
		if _, ok := got.Data()[emailID]; ok {
			t.Fatal("cleared value still stored")
		}
		pending, err := r.outbox.Pending(ctx, 0, 100)
		noErr(t, err)
		last := pending[len(pending)-1].Event
		if last.ID != evID || last.Type != event.SubmissionUpdated {
			t.Fatalf("last event = %+v", last)
		}

		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{f.ID()})
		noErr(t, err)
		if counts[f.ID()] != 2 {
			t.Fatalf("count = %d, want 2", counts[f.ID()])
		}
		noErr(t, r.submissions.Delete(ctx, w.ID(), f.ID(), s.ID()))
		wantErr(t, r.submissions.Delete(ctx, w.ID(), f.ID(), s.ID()), domain.ErrNotFound)
		_, err = r.submissions.Get(ctx, w.ID(), f.ID(), s.ID())
		wantErr(t, err, domain.ErrNotFound)
		_, err = r.submissions.Update(ctx, w.ID(), f.ID(), s.ID(), func(s *submission.Submission) (ports.Effects, error) { return ports.Effects{}, nil })
		wantErr(t, err, domain.ErrNotFound)
		counts, err = r.forms.SubmissionCounts(ctx, w.ID(), []string{f.ID(), "frm_missing"})
		noErr(t, err)
		if counts[f.ID()] != 1 || counts["frm_missing"] != 0 {
			t.Fatalf("counts after delete = %v", counts)
		}
	})
}

// The committer hands the events it committed to this process's relay (handoff.go) once a
// relay has read the outbox: what the relay gets is exactly what it reads from the table when
// nothing was handed over, and what it was not handed it reads as before.
func TestCommittedEventsHandedToTheRelayAreWhatTheOutboxHolds(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := publish(t, r, mustForm(t, r, w.ID(), base))
		before, e0 := buildSubmission(t, f, base.Add(time.Millisecond), subOpts{name: "Before any relay"})
		noErr(t, r.submissions.Add(ctx, before, e0)) // not handed over: no relay had asked yet
		first, err := r.outbox.Pending(ctx, 0, 100)
		noErr(t, err)
		for i, name := range []string{"Ada", "Grace <&>", "Ümit"} {
			s, e := buildSubmission(t, f, base.Add(time.Duration(i+2)*time.Millisecond), subOpts{name: name})
			noErr(t, r.submissions.Add(ctx, s, e))
		}
		handed, err := r.outbox.Pending(ctx, 0, 100) // three handed over, the first read
		noErr(t, err)
		read, err := r.outbox.Pending(ctx, 0, 100) // nothing handed over any more: all read
		noErr(t, err)
		if len(handed) != len(first)+3 || !reflect.DeepEqual(handed, read) {
			t.Fatalf("handed over:\n%+v\nread from the outbox:\n%+v", handed, read)
		}
		if !reflect.DeepEqual(handed[:len(first)], first) {
			t.Fatalf("the earlier rows changed:\n%+v\n%+v", handed[:len(first)], first)
		}
	})
}
