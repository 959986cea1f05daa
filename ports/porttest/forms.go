package porttest

import (
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// forms: every method but Find is bounded to the workspace; List pages newest first; Update
// stores the change with its effects or nothing; Delete takes the form's submissions with it;
// the counts and last times are of the stored submissions.
func forms(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	f1 := newForm(t, r, w.ID(), base)
	f2 := newForm(t, r, w.ID(), base.Add(time.Minute))
	f3 := newForm(t, r, w.ID(), base.Add(2*time.Minute))
	foreign := newForm(t, r, other.ID(), base.Add(3*time.Minute))

	got, err := r.Forms.Get(ctx, w.ID(), f1.ID())
	noErr(t, err)
	if got.ID() != f1.ID() || got.WorkspaceID() != w.ID() || got.Name() != "Contact" || len(got.Fields()) != 2 {
		t.Fatalf("got %s in %s named %q with %d fields", got.ID(), got.WorkspaceID(), got.Name(), len(got.Fields()))
	}
	_, err = r.Forms.Get(ctx, other.ID(), f1.ID())
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Forms.Get(ctx, w.ID(), newID("frm"))
	wantErr(t, err, domain.ErrNotFound)
	found, err := r.Forms.Find(ctx, foreign.ID())
	noErr(t, err)
	if found.WorkspaceID() != other.ID() {
		t.Fatalf("found in %s", found.WorkspaceID())
	}
	_, err = r.Forms.Find(ctx, newID("frm"))
	wantErr(t, err, domain.ErrNotFound)

	page, err := r.Forms.List(ctx, w.ID(), nil, ports.Page{Limit: 2})
	noErr(t, err)
	sameIDs(t, "first page", ids(page), f3.ID(), f2.ID())
	page, err = r.Forms.List(ctx, w.ID(), nil, ports.Page{Limit: 2, After: &ports.Position{CreatedAt: f2.CreatedAt(), ID: f2.ID()}})
	noErr(t, err)
	sameIDs(t, "second page", ids(page), f1.ID())

	published := string(form.StatusPublished)
	fx := ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.FormDeleted, base)}}
	updated, err := r.Forms.Update(ctx, w.ID(), f2.ID(), func(f *form.Form) (ports.Effects, error) {
		_, err := f.Apply(form.Patch{Status: &published}, func() string { return newID("fld") }, form.DefaultLimits, base.Add(time.Hour))
		return fx, err
	})
	noErr(t, err)
	if updated.Status() != form.StatusPublished {
		t.Fatalf("update returned status %s", updated.Status())
	}
	status := form.StatusPublished
	page, err = r.Forms.List(ctx, w.ID(), &status, ports.Page{Limit: 10})
	noErr(t, err)
	sameIDs(t, "published forms", ids(page), f2.ID())

	renamed := "Refused"
	_, err = r.Forms.Update(ctx, w.ID(), f1.ID(), func(f *form.Form) (ports.Effects, error) {
		_, _ = f.Apply(form.Patch{Name: &renamed}, func() string { return newID("fld") }, form.DefaultLimits, base.Add(time.Hour))
		return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.FormDeleted, base)}}, errChange
	})
	wantErr(t, err, errChange)
	got, err = r.Forms.Get(ctx, w.ID(), f1.ID())
	noErr(t, err)
	if got.Name() != "Contact" {
		t.Fatalf("a refused change was stored: name %q", got.Name())
	}
	_, err = r.Forms.Update(ctx, other.ID(), f1.ID(), func(*form.Form) (ports.Effects, error) {
		t.Fatal("change called for a form of another workspace")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)

	s1 := newSubmission(t, r, f1, base.Add(time.Minute))
	newSubmission(t, r, f1, base.Add(2*time.Minute))
	counts, err := r.Forms.SubmissionCounts(ctx, w.ID(), []string{f1.ID(), f2.ID()})
	noErr(t, err)
	if counts[f1.ID()] != 2 || counts[f2.ID()] != 0 {
		t.Fatalf("counts %v, want 2 for %s and 0 for %s", counts, f1.ID(), f2.ID())
	}
	last, err := r.Forms.LastSubmissionTimes(ctx, w.ID(), []string{f1.ID(), f2.ID(), foreign.ID()})
	noErr(t, err)
	if len(last) != 1 || !last[f1.ID()].Equal(base.Add(2*time.Minute)) {
		t.Fatalf("last times %v, want only %s at %v", last, f1.ID(), base.Add(2*time.Minute))
	}

	wantErr(t, r.Forms.Delete(ctx, other.ID(), f1.ID()), domain.ErrNotFound)
	deleted := auditEvent(t, w.ID(), audit.FormDeleted, base)
	noErr(t, r.Forms.Delete(ctx, w.ID(), f1.ID(), deleted))
	_, err = r.Forms.Get(ctx, w.ID(), f1.ID())
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Submissions.Get(ctx, w.ID(), f1.ID(), s1.ID())
	wantErr(t, err, domain.ErrNotFound)
	wantErr(t, r.Forms.Delete(ctx, w.ID(), f1.ID()), domain.ErrNotFound)
	wantAudit(t, r, w.ID(), fx.Audit[0].ID, deleted.ID)
}

func buildSubmission(t *testing.T, f *form.Form, at time.Time) (*submission.Submission, event.Event) {
	t.Helper()
	fs := f.Fields()
	s, err := submission.New(newID("sub"), f, map[string]submission.Input{fs[0].ID: "Ada", fs[1].ID: "ada@example.com"},
		submission.Metadata{Source: submission.SourceAPI}, at)
	noErr(t, err)
	return s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, at)
}

func newSubmission(t *testing.T, r Repos, f *form.Form, at time.Time) *submission.Submission {
	t.Helper()
	s, e := buildSubmission(t, f, at)
	noErr(t, r.Submissions.Add(ctx, s, e))
	return s
}

// submissions: bounded to the workspace and the form; List pages newest first within
// exclusive time bounds; Update stores the change or nothing; Delete removes one.
func submissions(t *testing.T, r Repos) {
	w, other := newWorkspace(t, r), newWorkspace(t, r)
	f, g := newForm(t, r, w.ID(), base), newForm(t, r, w.ID(), base)
	s1 := newSubmission(t, r, f, base.Add(time.Minute))
	s2 := newSubmission(t, r, f, base.Add(2*time.Minute))
	s3 := newSubmission(t, r, f, base.Add(3*time.Minute))
	newSubmission(t, r, g, base.Add(4*time.Minute))

	got, err := r.Submissions.Get(ctx, w.ID(), f.ID(), s1.ID())
	noErr(t, err)
	if got.ID() != s1.ID() || got.FormID() != f.ID() || !got.SubmittedAt().Equal(s1.SubmittedAt()) {
		t.Fatalf("got %s of %s at %v", got.ID(), got.FormID(), got.SubmittedAt())
	}
	if v, _ := got.Answer(f.Fields()[0].ID); v.String() != "Ada" {
		t.Fatalf("answer %v", v)
	}
	_, err = r.Submissions.Get(ctx, other.ID(), f.ID(), s1.ID())
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Submissions.Get(ctx, w.ID(), g.ID(), s1.ID())
	wantErr(t, err, domain.ErrNotFound)
	// Find needs no form, but still the workspace.
	got, err = r.Submissions.Find(ctx, w.ID(), s2.ID())
	noErr(t, err)
	if got.ID() != s2.ID() || got.FormID() != f.ID() || got.WorkspaceID() != w.ID() {
		t.Fatalf("found %s of %s in %s", got.ID(), got.FormID(), got.WorkspaceID())
	}
	_, err = r.Submissions.Find(ctx, other.ID(), s2.ID())
	wantErr(t, err, domain.ErrNotFound)
	_, err = r.Submissions.Find(ctx, w.ID(), "sub_missing")
	wantErr(t, err, domain.ErrNotFound)

	list := func(q ports.SubmissionQuery) []string {
		t.Helper()
		out, err := r.Submissions.List(ctx, w.ID(), f.ID(), q)
		noErr(t, err)
		return ids(out)
	}
	sameIDs(t, "first page", list(ports.SubmissionQuery{Page: ports.Page{Limit: 2}}), s3.ID(), s2.ID())
	sameIDs(t, "second page", list(ports.SubmissionQuery{Page: ports.Page{Limit: 2, After: &ports.Position{CreatedAt: s2.SubmittedAt(), ID: s2.ID()}}}), s1.ID())
	after, before := s1.SubmittedAt(), s3.SubmittedAt()
	sameIDs(t, "between", list(ports.SubmissionQuery{Page: ports.Page{Limit: 10}, CreatedAfter: &after, CreatedBefore: &before}), s2.ID())
	foreign, err := r.Submissions.List(ctx, other.ID(), f.ID(), ports.SubmissionQuery{Page: ports.Page{Limit: 10}})
	noErr(t, err)
	sameIDs(t, "another workspace's list", ids(foreign))

	nameID := f.Fields()[0].ID
	updated, err := r.Submissions.Update(ctx, w.ID(), f.ID(), s1.ID(), func(s *submission.Submission) (ports.Effects, error) {
		return ports.Effects{Events: []event.Event{event.ForSubmission(newID("evt"), event.SubmissionUpdated, s, base)}},
			s.Update(f, map[string]submission.Input{nameID: "Grace"}, base.Add(time.Hour))
	})
	noErr(t, err)
	if v, _ := updated.Answer(nameID); v.String() != "Grace" {
		t.Fatalf("update returned %v", v)
	}
	_, err = r.Submissions.Update(ctx, w.ID(), f.ID(), s1.ID(), func(s *submission.Submission) (ports.Effects, error) {
		_ = s.Update(f, map[string]submission.Input{nameID: "Refused"}, base.Add(time.Hour))
		return ports.Effects{}, errChange
	})
	wantErr(t, err, errChange)
	got, err = r.Submissions.Get(ctx, w.ID(), f.ID(), s1.ID())
	noErr(t, err)
	if v, _ := got.Answer(nameID); v.String() != "Grace" {
		t.Fatalf("stored %v after a refused change", v)
	}
	_, err = r.Submissions.Update(ctx, other.ID(), f.ID(), s1.ID(), func(*submission.Submission) (ports.Effects, error) {
		t.Fatal("change called for a submission of another workspace")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)

	wantErr(t, r.Submissions.Delete(ctx, other.ID(), f.ID(), s2.ID()), domain.ErrNotFound)
	deleted := auditEvent(t, w.ID(), audit.SubmissionDeleted, base)
	noErr(t, r.Submissions.Delete(ctx, w.ID(), f.ID(), s2.ID(), deleted))
	_, err = r.Submissions.Get(ctx, w.ID(), f.ID(), s2.ID())
	wantErr(t, err, domain.ErrNotFound)
	sameIDs(t, "after delete", list(ports.SubmissionQuery{Page: ports.Page{Limit: 10}}), s3.ID(), s1.ID())
	wantAudit(t, r, w.ID(), deleted.ID)
}

// captureGuards: a spent nonce, a used email key and a full form each refuse the submission
// and store nothing of it.
func captureGuards(t *testing.T, r Repos) {
	w := newWorkspace(t, r)
	f := newForm(t, r, w.ID(), base)
	stored := func() int {
		t.Helper()
		out, err := r.Submissions.List(ctx, w.ID(), f.ID(), ports.SubmissionQuery{Page: ports.Page{Limit: 100}})
		noErr(t, err)
		return len(out)
	}
	tok := ports.SpentToken{Nonce: newID("nonce"), ExpiresAt: base.Add(time.Hour)}
	s, e := buildSubmission(t, f, base)
	noErr(t, r.Submissions.AddSpendingToken(ctx, s, e, tok))
	s, e = buildSubmission(t, f, base)
	wantErr(t, r.Submissions.AddSpendingToken(ctx, s, e, tok), ports.ErrTokenUsed)
	s, e = buildSubmission(t, f, base)
	wantErr(t, r.Submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{Token: &tok}), ports.ErrTokenUsed)
	if n := stored(); n != 1 {
		t.Fatalf("stored %d after replays, want 1", n)
	}

	key := newID("email")
	s, e = buildSubmission(t, f, base)
	noErr(t, r.Submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{EmailKey: key}))
	s, e = buildSubmission(t, f, base)
	wantErr(t, r.Submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{EmailKey: key}), ports.ErrEmailUsed)
	g := newForm(t, r, w.ID(), base)
	s, e = buildSubmission(t, g, base)
	noErr(t, r.Submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{EmailKey: key})) // keys are per form

	// Every stored submission counts against the limit, however it was added.
	s, e = buildSubmission(t, f, base)
	noErr(t, r.Submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{MaxSubmissions: 3}))
	fresh := ports.SpentToken{Nonce: newID("nonce"), ExpiresAt: base.Add(time.Hour)}
	s, e = buildSubmission(t, f, base)
	wantErr(t, r.Submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{MaxSubmissions: 3, Token: &fresh}), domain.ErrFormClosed)
	if n := stored(); n != 3 {
		t.Fatalf("stored %d, want 3", n)
	}
}
