package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// The retention job and privacy requests against the real databases (SQLite and PostgreSQL),
// the real local object store and the real blind index, on a fake clock.

// store is one database with the repositories the retention job and privacy requests use.
type store struct {
	db          *persistence.DB
	workspaces  *persistence.WorkspaceRepository
	forms       *persistence.FormRepository
	submissions *persistence.SubmissionRepository
	retention   *persistence.RetentionStore
	audit       *persistence.AuditLog
	sessions    *persistence.SessionRepository
	privacy     *persistence.PrivacyIndex
	files       *objectstore.Local
	clock       *apptest.Clock
	ids         *apptest.IDs
}

var day = 24 * time.Hour

// t0 is the fake clock's start, millisecond-aligned.
var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func newStore(t *testing.T, db *persistence.DB) *store {
	t.Helper()
	c := persistencetest.Cipher()
	files, err := objectstore.NewLocal(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	return &store{db: db, workspaces: persistence.NewWorkspaceRepository(db), forms: persistence.NewFormRepository(db, c),
		submissions: persistence.NewSubmissionRepository(db, c, persistencetest.BlindIndex()),
		retention:   persistence.NewRetentionStore(db, c), audit: persistence.NewAuditLog(db), sessions: persistence.NewSessionRepository(db),
		privacy: persistence.NewPrivacyIndex(db, c, persistencetest.BlindIndex()),
		files:   files, clock: &apptest.Clock{At: t0}, ids: &apptest.IDs{}}
}

func (s *store) retentionJob(batch int) workspaceapp.RunRetentionHandler {
	return workspaceapp.NewRunRetentionHandler(s.workspaces, s.forms, s.retention, s.files, s.audit, s.sessions, nil, nil, nil, s.ids, s.clock, batch)
}

func (s *store) workspace(t *testing.T, plan workspace.Plan) *workspace.Workspace {
	t.Helper()
	w, err := workspace.New(s.ids.New("wsp"), "Acme", plan, s.clock.At)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.workspaces.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (s *store) change(t *testing.T, id string, set workspace.Settings) {
	t.Helper()
	_, err := s.workspaces.Update(context.Background(), id, func(w *workspace.Workspace) (ports.Effects, error) {
		_, err := w.Change(set, s.clock.At)
		return ports.Effects{}, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// form stores a published form with an email and a file field.
func (s *store) form(t *testing.T, ws string) *form.Form {
	t.Helper()
	f, err := form.New(s.ids.New("frm"), ws, form.Draft{Name: "Contact", Fields: []form.FieldSpec{
		{Label: "Email", Type: "email"}, {Label: "CV", Type: "file"},
	}}, func() string { return s.ids.New("fld") }, form.DefaultLimits, s.clock.At)
	if err != nil {
		t.Fatal(err)
	}
	published := string(form.StatusPublished)
	if _, err := f.Apply(form.Patch{Status: &published}, func() string { return s.ids.New("fld") }, form.DefaultLimits, s.clock.At); err != nil {
		t.Fatal(err)
	}
	if err := s.forms.Create(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	return f
}

// capture stores a submission received at the time with the email answer and, when withFile,
// one uploaded file under the submission's own prefix; it returns the submission and the
// file's key.
func (s *store) capture(t testing.TB, f *form.Form, at time.Time, email string, withFile bool) (*submission.Submission, string) {
	t.Helper()
	emailID, fileID := f.Fields()[0].ID, f.Fields()[1].ID
	input := map[string]submission.Input{emailID: email}
	id := s.ids.New("sub")
	var key string
	if withFile {
		input[fileID] = []submission.FileInfo{{Name: "cv.txt", Size: 4, Declared: "text/plain", Sniffed: "text/plain"}}
	}
	d, err := submission.Prepare(f, input, submission.Metadata{}, submission.FileLimits{PerField: 10, PerPost: 20})
	if err != nil {
		t.Fatal(err)
	}
	if withFile {
		key = ports.SubmissionFilesPrefix(f.WorkspaceID(), f.ID(), id) + "0/cv.txt"
		if err := s.files.Put(context.Background(), key, strings.NewReader("data"), 4, "text/plain"); err != nil {
			t.Fatal(err)
		}
		if err := d.Attach(fileID, []string{key}); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := d.Submit(id, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.submissions.Add(context.Background(), sub, event.ForSubmission(s.ids.New("evt"), event.SubmissionCreated, sub, at)); err != nil {
		t.Fatal(err)
	}
	return sub, key
}

func (s *store) count(t testing.TB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := s.db.SQL().QueryRowContext(context.Background(), s.rebind(q), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// tombstones returns the IDs of the tombstones of the kind and workspace the database holds.
func (s *store) tombstones(t testing.TB, kind ports.TombstoneKind, workspaceID string) []string {
	t.Helper()
	pending, err := persistence.NewTombstoneRepository(s.db).Pending(context.Background(), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range pending {
		if p.Kind == kind && p.WorkspaceID == workspaceID {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

func (s *store) rebind(q string) string {
	if s.db.Dialect() != persistence.DialectPostgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *store) has(t testing.TB, sub *submission.Submission) bool {
	t.Helper()
	_, err := s.submissions.Get(context.Background(), sub.WorkspaceID(), sub.FormID(), sub.ID())
	return err == nil
}

func (s *store) fileExists(key string) bool {
	rc, _, err := s.files.Get(context.Background(), key)
	if err == nil {
		_ = rc.Close()
	}
	return err == nil
}

func (s *store) run(t *testing.T, job workspaceapp.RunRetentionHandler) workspaceapp.RetentionResult {
	t.Helper()
	r, err := job.Handle(context.Background(), workspaceapp.RunRetention{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// retentionEvents returns the details' submission counts of the workspace's retention.deleted events.
func (s *store) retentionEvents(t *testing.T, ws string) int64 {
	t.Helper()
	return s.count(t, "SELECT COUNT(*) FROM audit_events WHERE workspace_id = ? AND action = ? AND actor_type = ?", ws, string(audit.RetentionDeleted), audit.ActorSystem)
}

func TestRetentionByPlan(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		s := newStore(t, db)
		free, starter, growth, business := s.workspace(t, workspace.PlanFree), s.workspace(t, workspace.PlanStarter),
			s.workspace(t, workspace.PlanGrowth), s.workspace(t, workspace.PlanBusiness)

		// Free: 105 submissions on one form (the 5 oldest with files), 3 on another.
		busy, quiet := s.form(t, free.ID()), s.form(t, free.ID())
		var freeSubs []*submission.Submission
		var freeFiles []string
		for i := range 105 {
			sub, key := s.capture(t, busy, t0.Add(-time.Duration(200-i)*time.Hour), fmt.Sprintf("r%d@example.org", i), i < 5)
			freeSubs = append(freeSubs, sub)
			if key != "" {
				freeFiles = append(freeFiles, key)
			}
		}
		var quietSubs []*submission.Submission
		for i := range 3 {
			sub, _ := s.capture(t, quiet, t0.Add(-time.Duration(3000+i)*day), "q@example.org", false)
			quietSubs = append(quietSubs, sub)
		}
		// Starter keeps 12 months, Growth 24, Business everything.
		sf := s.form(t, starter.ID())
		starterOld, starterOldFile := s.capture(t, sf, t0.Add(-366*day), "a@example.org", true)
		starterNew, _ := s.capture(t, sf, t0.Add(-364*day), "a@example.org", false)
		gf := s.form(t, growth.ID())
		growthOld, _ := s.capture(t, gf, t0.Add(-731*day), "a@example.org", false)
		growthNew, _ := s.capture(t, gf, t0.Add(-729*day), "a@example.org", false)
		bf := s.form(t, business.ID())
		businessOld, _ := s.capture(t, bf, t0.Add(-5000*day), "a@example.org", true)

		// Audit events are kept 400 days.
		var logged []audit.Event
		for _, age := range []time.Duration{401 * day, 399 * day} {
			e, err := audit.New(s.ids.New("aud"), business.ID(), audit.WorkspaceUpdated, audit.System, nil, "", nil, t0.Add(-age))
			if err != nil {
				t.Fatal(err)
			}
			logged = append(logged, e)
		}
		if err := s.audit.Append(context.Background(), logged...); err != nil {
			t.Fatal(err)
		}

		// A batch of 7 makes the free form's deletion several batches long.
		r := s.run(t, s.retentionJob(7))
		if r.SubmissionsDeleted != 5+1+1 || r.FilesDeleted != 5+1 || r.WorkspacesDeleted != 0 {
			t.Fatalf("pass = %+v, want 7 submissions, 6 files, 0 workspaces", r)
		}
		for i, sub := range freeSubs {
			if got, want := s.has(t, sub), i >= 5; got != want {
				t.Errorf("free submission %d present = %v, want %v (the 100 most recent stay)", i, got, want)
			}
		}
		for _, sub := range quietSubs {
			if !s.has(t, sub) {
				t.Error("a form with fewer than 100 submissions lost one")
			}
		}
		for _, key := range append(freeFiles, starterOldFile) {
			if s.fileExists(key) {
				t.Errorf("file %s survived its submission", key)
			}
		}
		if s.has(t, starterOld) || !s.has(t, starterNew) || s.has(t, growthOld) || !s.has(t, growthNew) || !s.has(t, businessOld) {
			t.Error("age rules: starter keeps 12 months, growth 24, business all")
		}
		counts, err := s.forms.SubmissionCounts(context.Background(), free.ID(), []string{busy.ID()})
		if err != nil || counts[busy.ID()] != 100 {
			t.Errorf("form count = %v (%v), want 100", counts, err)
		}
		if n := len(s.tombstones(t, ports.TombstoneSubmission, free.ID())); n != 5 {
			t.Errorf("%d tombstones in the free workspace, want 5", n)
		}
		for ws, want := range map[string]int64{free.ID(): 1, starter.ID(): 1, growth.ID(): 1, business.ID(): 0} {
			if n := s.retentionEvents(t, ws); n != want {
				t.Errorf("workspace %s: %d retention.deleted events, want %d", ws, n, want)
			}
		}
		if n := s.count(t, "SELECT COUNT(*) FROM audit_events WHERE workspace_id = ? AND action = ? AND details LIKE ?",
			free.ID(), string(audit.RetentionDeleted), `%"submissions_deleted":5%`); n != 1 {
			t.Error("the free workspace's event does not count 5 submissions")
		}
		if n := s.count(t, "SELECT COUNT(*) FROM audit_events WHERE id = ?", logged[0].ID); n != 0 {
			t.Error("an audit event older than 400 days was kept")
		}
		if n := s.count(t, "SELECT COUNT(*) FROM audit_events WHERE id = ?", logged[1].ID); n != 1 {
			t.Error("an audit event younger than 400 days was purged")
		}
		// A second pass finds nothing and records nothing.
		if r := s.run(t, s.retentionJob(7)); r != (workspaceapp.RetentionResult{}) {
			t.Errorf("second pass = %+v, want nothing", r)
		}
		if n := s.retentionEvents(t, free.ID()); n != 1 {
			t.Errorf("%d events after an empty pass, want 1", n)
		}
	})
}

func TestRetentionDowngradeKeepsNinetyDays(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		s := newStore(t, db)
		w := s.workspace(t, workspace.PlanGrowth)
		f := s.form(t, w.ID())
		old, oldFile := s.capture(t, f, t0.Add(-540*day), "a@example.org", true) // 18 months
		recent, _ := s.capture(t, f, t0.Add(-180*day), "a@example.org", false)
		starter := string(workspace.PlanStarter)
		s.change(t, w.ID(), workspace.Settings{Plan: &starter})

		s.clock.At = t0.Add(89 * day)
		if r := s.run(t, s.retentionJob(0)); r.SubmissionsDeleted != 0 || !s.has(t, old) {
			t.Fatalf("within 90 days of the downgrade: %+v; the old plan's retention must still apply", r)
		}
		s.clock.At = t0.Add(90 * day)
		r := s.run(t, s.retentionJob(0))
		if r.SubmissionsDeleted != 1 || r.FilesDeleted != 1 || s.has(t, old) || !s.has(t, recent) || s.fileExists(oldFile) {
			t.Fatalf("90 days after: %+v; the new plan's 12 months apply", r)
		}
		got, err := s.workspaces.Get(context.Background(), w.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got.RetainedPlan() != "" || got.DataDeletionAt() != nil {
			t.Errorf("downgrade not settled: retained %q, deletion at %v", got.RetainedPlan(), got.DataDeletionAt())
		}
	})
}

func TestRetentionUpgradeOrReactivationCancelsDeletion(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		s := newStore(t, db)
		downgraded, cancelled := s.workspace(t, workspace.PlanGrowth), s.workspace(t, workspace.PlanBusiness)
		oldGrowth, _ := s.capture(t, s.form(t, downgraded.ID()), t0.Add(-540*day), "a@example.org", false)
		kept, _ := s.capture(t, s.form(t, cancelled.ID()), t0.Add(-10*day), "a@example.org", true)
		starter, growth, cancel, active := string(workspace.PlanStarter), string(workspace.PlanGrowth), string(workspace.StatusCancelled), string(workspace.StatusActive)
		s.change(t, downgraded.ID(), workspace.Settings{Plan: &starter})
		s.change(t, cancelled.ID(), workspace.Settings{Status: &cancel})
		s.clock.At = t0.Add(10 * day)
		s.change(t, downgraded.ID(), workspace.Settings{Plan: &growth})
		s.change(t, cancelled.ID(), workspace.Settings{Status: &active})

		s.clock.At = t0.Add(120 * day)
		if r := s.run(t, s.retentionJob(0)); r != (workspaceapp.RetentionResult{}) {
			t.Fatalf("pass = %+v, want nothing deleted", r)
		}
		if !s.has(t, oldGrowth) || !s.has(t, kept) {
			t.Fatal("an upgrade or a reactivation before the 90 days must cancel the deletion")
		}
	})
}

func TestRetentionDeletesCancelledWorkspaceAfterNinetyDays(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		s := newStore(t, db)
		w, other := s.workspace(t, workspace.PlanBusiness), s.workspace(t, workspace.PlanBusiness)
		f1, f2 := s.form(t, w.ID()), s.form(t, w.ID())
		var keys []string
		for i := range 12 {
			f := f1
			if i%2 == 1 {
				f = f2
			}
			_, key := s.capture(t, f, t0.Add(-time.Duration(i)*day), "a@example.org", i%3 == 0)
			if key != "" {
				keys = append(keys, key)
			}
		}
		otherSub, otherKey := s.capture(t, s.form(t, other.ID()), t0, "a@example.org", true)
		cancel := string(workspace.StatusCancelled)
		s.change(t, w.ID(), workspace.Settings{Status: &cancel})

		s.clock.At = t0.Add(90*day - time.Millisecond)
		if r := s.run(t, s.retentionJob(5)); r != (workspaceapp.RetentionResult{}) {
			t.Fatalf("before 90 days: %+v", r)
		}
		s.clock.At = t0.Add(90 * day)
		r := s.run(t, s.retentionJob(5))
		if r.SubmissionsDeleted != 12 || r.FilesDeleted != int64(len(keys)) || r.WorkspacesDeleted != 1 {
			t.Fatalf("after 90 days: %+v, want 12 submissions, %d files, 1 workspace", r, len(keys))
		}
		for _, key := range keys {
			if s.fileExists(key) {
				t.Errorf("file %s survived", key)
			}
		}
		for _, table := range []string{"forms", "submissions", "outbox"} {
			if n := s.count(t, "SELECT COUNT(*) FROM "+table+" WHERE workspace_id = ?", w.ID()); n != 0 {
				t.Errorf("%d rows left in %s", n, table)
			}
		}
		// The email index names only submissions; none may be left but those of other workspaces.
		if n := s.count(t, "SELECT COUNT(*) FROM submission_email_index WHERE submission_id NOT IN (SELECT id FROM submissions WHERE workspace_id <> ?)", w.ID()); n != 0 {
			t.Errorf("%d rows left in submission_email_index", n)
		}
		got, err := s.workspaces.Get(context.Background(), w.ID())
		if err != nil {
			t.Fatalf("the workspace row must stay: %v", err)
		}
		if got.Status() != workspace.StatusCancelled {
			t.Errorf("status %s", got.Status())
		}
		if ids := s.tombstones(t, ports.TombstoneWorkspace, w.ID()); len(ids) != 1 || ids[0] != w.ID() {
			t.Errorf("workspace tombstones %v, want [%s]", ids, w.ID())
		}
		if n := s.retentionEvents(t, w.ID()); n != 1 {
			t.Errorf("%d retention.deleted events, want 1", n)
		}
		if !s.has(t, otherSub) || !s.fileExists(otherKey) {
			t.Error("another workspace lost data")
		}
		// Already deleted: the next pass counts nothing.
		if r := s.run(t, s.retentionJob(5)); r != (workspaceapp.RetentionResult{}) {
			t.Errorf("next pass = %+v", r)
		}
	})
}

// Retention deletes thousands of expired submissions while captures continue: no capture
// fails, and every captured submission stays.
func TestRetentionWhileCapturing(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		s := newStore(t, db)
		w := s.workspace(t, workspace.PlanStarter)
		f := s.form(t, w.ID())
		const expired = 3000
		for i := range expired / 500 {
			subs := make([]*submission.Submission, 0, 500)
			for j := range 500 {
				sub, err := submission.New(s.ids.New("sub"), f, map[string]submission.Input{f.Fields()[0].ID: "old@example.org"},
					submission.Metadata{Source: submission.SourceAPI}, t0.Add(-400*day+time.Duration(i*500+j)*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				subs = append(subs, sub)
			}
			var wg sync.WaitGroup
			for _, sub := range subs {
				wg.Go(func() {
					if err := s.submissions.Add(context.Background(), sub, event.ForSubmission(s.ids.New("evt"), event.SubmissionCreated, sub, sub.SubmittedAt())); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		var captured sync.Map
		var failed atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					sub, err := submission.New(s.ids.New("sub"), f, map[string]submission.Input{f.Fields()[0].ID: "new@example.org"},
						submission.Metadata{Source: submission.SourceAPI}, t0)
					if err != nil {
						t.Error(err)
						return
					}
					if err := s.submissions.Add(context.Background(), sub, event.ForSubmission(s.ids.New("evt"), event.SubmissionCreated, sub, t0)); err != nil {
						failed.Add(1)
						t.Errorf("capture during retention: %v", err)
						continue
					}
					captured.Store(sub.ID(), sub)
				}
			})
		}
		r := s.run(t, s.retentionJob(100))
		close(stop)
		wg.Wait()
		if r.SubmissionsDeleted != expired {
			t.Errorf("deleted %d, want %d", r.SubmissionsDeleted, expired)
		}
		n := 0
		captured.Range(func(_, v any) bool {
			n++
			if !s.has(t, v.(*submission.Submission)) {
				t.Errorf("captured submission %s is gone", v.(*submission.Submission).ID())
			}
			return true
		})
		if n == 0 || failed.Load() > 0 {
			t.Errorf("%d captures, %d failed", n, failed.Load())
		}
		if left := s.count(t, "SELECT COUNT(*) FROM submissions WHERE form_id = ?", f.ID()); left != int64(n) {
			t.Errorf("%d submissions left, want the %d captured", left, n)
		}
	})
}

// A privacy erase deletes the respondent's submissions in every form with their files, and
// leaves a tombstone for each; another respondent's stay.
func TestPrivacyEraseAcrossFormsDeletesFiles(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		s := newStore(t, db)
		app := application.New(application.Deps{Workspaces: s.workspaces, Forms: s.forms, Submissions: s.submissions, IDs: s.ids, Clock: s.clock,
			Files: s.files, Retention: s.retention, Privacy: s.privacy, BlindIndex: persistencetest.BlindIndex(), Audit: s.audit, Sessions: s.sessions},
			application.Settings{})
		w := s.workspace(t, workspace.PlanBusiness)
		f1, f2 := s.form(t, w.ID()), s.form(t, w.ID())
		a, aKey := s.capture(t, f1, t0.Add(-2*day), "Jane@Example.org", true)
		b, bKey := s.capture(t, f2, t0.Add(-day), "jane@example.org", true)
		other, otherKey := s.capture(t, f2, t0, "john@example.org", true)
		ctx := auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: w.ID(), Scope: "admin",
			Actor: audit.Actor{Type: audit.ActorAPIKey, ID: "key_1", Name: "admin"}})

		exported, err := app.Queries.PrivacyExport.Handle(ctx, workspaceapp.PrivacyExport{Email: " JANE@example.org"})
		if err != nil {
			t.Fatal(err)
		}
		if len(exported.Submissions) != 2 || exported.Submissions[0].ID() != a.ID() || exported.Submissions[1].ID() != b.ID() {
			t.Fatalf("exported %d submissions", len(exported.Submissions))
		}
		erased, err := app.Commands.PrivacyErase.Handle(ctx, workspaceapp.PrivacyErase{Email: "jane@example.org"})
		if err != nil {
			t.Fatal(err)
		}
		if erased.SubmissionsDeleted != 2 || s.has(t, a) || s.has(t, b) || s.fileExists(aKey) || s.fileExists(bKey) {
			t.Fatalf("erase: %+v; the respondent's submissions and files must be gone", erased)
		}
		if !s.has(t, other) || !s.fileExists(otherKey) {
			t.Fatal("another respondent's submission or file was erased")
		}
		if ids := s.tombstones(t, ports.TombstoneSubmission, w.ID()); !slices.Contains(ids, a.ID()) || !slices.Contains(ids, b.ID()) || slices.Contains(ids, other.ID()) {
			t.Errorf("tombstones %v, want %s and %s (and not %s)", ids, a.ID(), b.ID(), other.ID())
		}
		// Only an account manager may ask.
		rw := auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: w.ID(), Scope: "read-write"})
		if _, err := app.Commands.PrivacyErase.Handle(rw, workspaceapp.PrivacyErase{Email: "john@example.org"}); !errors.Is(err, auth.ErrForbidden) {
			t.Errorf("read-write erase: %v, want ErrForbidden", err)
		}
		if _, err := app.Queries.PrivacyExport.Handle(context.Background(), workspaceapp.PrivacyExport{Email: "john@example.org"}); !errors.Is(err, auth.ErrForbidden) {
			t.Errorf("export without a principal: %v, want ErrForbidden", err)
		}
	})
}

// pacedStore is the real retention store with deletions that take a known time and a capture
// count the test moves.
type pacedStore struct {
	*persistence.RetentionStore
	delay    time.Duration
	captures atomic.Uint64
	busy     bool // every look sees new captures
}

// DeleteSubmissions reports the delay as time the writer was held (the pacer rests by what the
// store reports, so nothing needs to take that long).
func (p *pacedStore) DeleteSubmissions(ctx context.Context, refs []ports.SubmissionRef, events ports.DeletionAudit) (ports.SubmissionDeletion, error) {
	r, err := p.RetentionStore.DeleteSubmissions(ctx, refs, events)
	r.Held += p.delay
	return r, err
}

func (p *pacedStore) CaptureWrites() (uint64, bool) {
	if p.busy {
		return p.captures.Add(1), true
	}
	return p.captures.Load(), true
}

// A paced pass (serve's) rests between batches only while captures are being written: alone
// it runs at full speed; while captures compete the next transaction waits Rest times the
// last one's time (after the pass's last transaction there is nothing to wait for).
func TestPacedRetentionRestsOnlyWhileCapturesCompete(t *testing.T) {
	const delay, rest, batches = 20 * time.Millisecond, 25.0, 3 // a rest lasts at least 0.5 s
	for _, busy := range []bool{false, true} {
		s := newStore(t, persistencetest.SQLite(t, nil))
		w := s.workspace(t, workspace.PlanStarter)
		f := s.form(t, w.ID())
		for i := range batches * 10 {
			s.capture(t, f, t0.Add(-400*day+time.Duration(i)*time.Second), "", false)
		}
		store := &pacedStore{RetentionStore: s.retention, delay: delay, busy: busy}
		job := workspaceapp.NewRunRetentionHandler(s.workspaces, s.forms, store, s.files, s.audit, s.sessions, nil, nil, nil, s.ids, s.clock, 10)
		start := time.Now()
		r, err := job.Handle(context.Background(), workspaceapp.RunRetention{Rest: rest})
		took := time.Since(start)
		if err != nil || r.SubmissionsDeleted != batches*10 {
			t.Fatalf("busy=%v: deleted %d, %v", busy, r.SubmissionsDeleted, err)
		}
		restTime := time.Duration(rest * float64(delay))
		if busy && took < (batches-1)*restTime {
			t.Errorf("captures competing: the pass took %s, want a rest between each two of its %d batches (≥ %s)", took, batches, (batches-1)*restTime)
		}
		if !busy && took >= restTime {
			t.Errorf("no capture about: the pass took %s, as if it had rested (a rest is ≥ %s)", took, restTime)
		}
	}
}
