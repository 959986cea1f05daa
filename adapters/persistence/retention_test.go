package persistence_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// The retention job paces itself by CaptureWrites: on SQLite every capture's group commit moves
// it; on PostgreSQL, where other processes capture too, it says it cannot tell.
func TestCaptureWritesMoveWithCaptures(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		store := persistence.NewRetentionStore(r.db, r.cipher)
		before, ok := store.CaptureWrites()
		if want := r.db.Dialect() == persistence.DialectSQLite; ok != want {
			t.Fatalf("ok = %v, want %v", ok, want)
		}
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		s, e := buildSubmission(t, f, base, subOpts{})
		if err := r.submissions.Add(context.Background(), s, e); err != nil {
			t.Fatal(err)
		}
		if after, _ := store.CaptureWrites(); after == before {
			t.Fatalf("CaptureWrites stayed at %d after a capture", after)
		}
	})
}

// A batch deleted without audit events (a redoable transaction: on SQLite its foreign keys
// are not enforced) still takes every dependent row with it: workflow runs, further email index
// entries and one-per-email keys. A submission of the same form captured between two of the
// batch's, but not in it, keeps its rows; so does another workspace's. The batch's tombstones
// are one row naming its submissions.
func TestRetentionBatchTakesDependentRows(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		other := mustWorkspace(t, r, base)
		f, err := form.New(newID("frm"), w.ID(), form.Draft{Name: "Referees", Fields: []form.FieldSpec{
			{Label: "Your email", Type: "email"}, {Label: "Referee", Type: "email"},
		}}, func() string { return newID("fld") }, form.DefaultLimits, base)
		noErr(t, err)
		noErr(t, r.forms.Create(ctx, f))
		addRun := func(workspaceID, formID, submissionID string) {
			_, err := r.db.SQL().ExecContext(ctx, `INSERT INTO runs (id, workspace_id, kind, form_id, submission_id, event_id,
				event_type, occurred_at, status, actions, fields, created_at, updated_at)
				VALUES ($1, $2, 'owner', $3, $4, $5, 'submission.created', 1, 'succeeded', $6, $6, 1, 1)`,
				newID("run"), workspaceID, formID, submissionID, newID("evt"), []byte("[]"))
			noErr(t, err)
		}
		var refs []ports.SubmissionRef
		var between string
		for i := range 4 {
			s, err := submission.New(newID("sub"), f, map[string]submission.Input{
				f.Fields()[0].ID: fmt.Sprintf("ada%d@example.com", i), f.Fields()[1].ID: fmt.Sprintf("grace%d@example.com", i),
			}, submission.Metadata{Source: submission.SourceAPI}, base)
			noErr(t, err)
			noErr(t, r.submissions.Add(ctx, s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, base)))
			_, err = r.db.SQL().ExecContext(ctx, "INSERT INTO form_email_keys (form_id, email_key, submission_id) VALUES ($1, $2, $3)",
				f.ID(), fmt.Sprintf("key%d", i), s.ID())
			noErr(t, err)
			addRun(w.ID(), f.ID(), s.ID())
			if i == 2 {
				between = s.ID()
				continue
			}
			refs = append(refs, ports.SubmissionRef{WorkspaceID: w.ID(), FormID: f.ID(), ID: s.ID(), SubmittedAt: base})
		}
		// Nor does a ref naming a submission of the workspace under another of its forms.
		elsewhere := mustForm(t, r, w.ID(), base)
		misplaced := mustAdd(t, r, elsewhere, base, subOpts{})
		refs = append(refs, ports.SubmissionRef{WorkspaceID: w.ID(), FormID: f.ID(), ID: misplaced.ID(), SubmittedAt: base})
		kept := mustForm(t, r, other.ID(), base)
		s, _ := buildSubmission(t, kept, base, subOpts{})
		noErr(t, r.submissions.Add(ctx, s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, base)))
		addRun(other.ID(), kept.ID(), s.ID())
		// A ref naming another workspace's submission under this workspace deletes nothing.
		refs = append(refs, ports.SubmissionRef{WorkspaceID: w.ID(), FormID: kept.ID(), ID: s.ID(), SubmittedAt: base})

		res, err := persistence.NewRetentionStore(r.db, r.cipher).DeleteSubmissions(ctx, refs, nil)
		noErr(t, err)
		if res.Deleted != 3 || res.Held <= 0 {
			t.Errorf("deleted %d, held the writer %s, want 3 and some time", res.Deleted, res.Held)
		}
		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{f.ID(), elsewhere.ID()})
		noErr(t, err)
		if counts[f.ID()] != 1 || counts[elsewhere.ID()] != 1 {
			t.Errorf("form counts %v, want 1 left in each", counts)
		}
		for table, want := range map[string]int64{"submission_email_index": 1, "form_email_keys": 1, "submissions": 3, "runs": 2} {
			if got := count(t, r.db, "SELECT COUNT(*) FROM "+table); got != want {
				t.Errorf("%d rows left in %s, want %d", got, table, want)
			}
		}
		for _, table := range []string{"submission_email_index", "form_email_keys", "submissions", "runs"} {
			column := "submission_id"
			if table == "submissions" {
				column = "id"
			}
			if got := count(t, r.db, "SELECT COUNT(*) FROM "+table+" WHERE "+column+" = '"+between+"'"); got != 1 {
				t.Errorf("the submission between the batch's lost its row of %s", table)
			}
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM tombstones"); got != 1 {
			t.Errorf("%d tombstone rows, want 1 for the batch", got)
		}
		pending, err := persistence.NewTombstoneRepository(r.db).Pending(ctx, 100)
		noErr(t, err)
		var named []string
		for _, p := range pending {
			if p.Kind != ports.TombstoneSubmission || p.WorkspaceID != w.ID() || p.Seq != pending[0].Seq {
				t.Errorf("tombstone %+v", p)
			}
			named = append(named, p.ID)
		}
		slices.Sort(named)
		if want := []string{refs[0].ID, refs[1].ID, refs[2].ID}; !slices.Equal(named, want) {
			t.Errorf("tombstones name %v, want %v", named, want)
		}
	})
}
