package persistence_test

import (
	"context"
	"fmt"
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
// are not enforced) still takes every dependent row with it: further email index entries and
// one-per-email keys. Only the workspace's own submissions go.
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
		var refs []ports.SubmissionRef
		for i := range 3 {
			s, err := submission.New(newID("sub"), f, map[string]submission.Input{
				f.Fields()[0].ID: fmt.Sprintf("ada%d@example.com", i), f.Fields()[1].ID: fmt.Sprintf("grace%d@example.com", i),
			}, submission.Metadata{Source: submission.SourceAPI}, base)
			noErr(t, err)
			noErr(t, r.submissions.Add(ctx, s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, base)))
			_, err = r.db.SQL().ExecContext(ctx, "INSERT INTO form_email_keys (form_id, email_key, submission_id) VALUES ($1, $2, $3)",
				f.ID(), fmt.Sprintf("key%d", i), s.ID())
			noErr(t, err)
			refs = append(refs, ports.SubmissionRef{WorkspaceID: w.ID(), FormID: f.ID(), ID: s.ID(), SubmittedAt: base})
		}
		kept := mustForm(t, r, other.ID(), base)
		s, _ := buildSubmission(t, kept, base, subOpts{})
		noErr(t, r.submissions.Add(ctx, s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, base)))
		// A ref naming another workspace's submission under this workspace deletes nothing.
		refs = append(refs, ports.SubmissionRef{WorkspaceID: w.ID(), FormID: kept.ID(), ID: s.ID(), SubmittedAt: base})

		res, err := persistence.NewRetentionStore(r.db, r.cipher).DeleteSubmissions(ctx, refs, nil)
		noErr(t, err)
		if res.Deleted != 3 || res.Held <= 0 {
			t.Errorf("deleted %d, held the writer %s, want 3 and some time", res.Deleted, res.Held)
		}
		for table, want := range map[string]int64{"submission_email_index": 0, "form_email_keys": 0, "submissions": 1} {
			if got := count(t, r.db, "SELECT COUNT(*) FROM "+table); got != want {
				t.Errorf("%d rows left in %s, want %d", got, table, want)
			}
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM tombstones WHERE kind = 'submission'"); got != 3 {
			t.Errorf("%d submission tombstones, want 3", got)
		}
	})
}
