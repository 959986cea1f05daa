package persistence_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

func TestDeletionsWriteTombstonesInTheirTransaction(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		tombs := persistence.NewTombstoneRepository(r.db)
		w := mustWorkspace(t, r, base)
		doomed := mustForm(t, r, w.ID(), base)
		kept := mustForm(t, r, w.ID(), base)
		var doomedSubs []string
		for i := range 3 {
			doomedSubs = append(doomedSubs, mustAdd(t, r, doomed, base.Add(time.Duration(i)*time.Second), subOpts{}).ID())
		}
		one := mustAdd(t, r, kept, base, subOpts{})
		mustAdd(t, r, kept, base, subOpts{})

		signalled := func() bool {
			select {
			case <-r.db.TombstonesRecorded():
				return true
			default:
				return false
			}
		}
		signalled()
		before := time.Now().Add(-time.Second)
		noErr(t, r.submissions.Delete(ctx, w.ID(), kept.ID(), one.ID()))
		if !signalled() {
			t.Fatal("a deletion's commit did not signal its tombstones")
		}
		noErr(t, r.forms.Delete(ctx, w.ID(), doomed.ID()))
		if !signalled() {
			t.Fatal("a form deletion's commit did not signal its tombstones")
		}
		// A failed deletion records nothing and signals nothing.
		wantErr(t, r.submissions.Delete(ctx, w.ID(), kept.ID(), "sub_missing"), domain.ErrNotFound)
		if signalled() {
			t.Fatal("a failed deletion signalled tombstones")
		}

		pending, err := tombs.Pending(ctx, 100)
		noErr(t, err)
		got := map[string]ports.TombstoneKind{}
		for _, p := range pending {
			if p.WorkspaceID != w.ID() || p.DeletedAt.Before(before) {
				t.Fatalf("tombstone %+v", p)
			}
			got[p.ID] = p.Kind
		}
		want := map[string]ports.TombstoneKind{one.ID(): ports.TombstoneSubmission, doomed.ID(): ports.TombstoneForm}
		for _, id := range doomedSubs {
			want[id] = ports.TombstoneSubmission
		}
		if len(got) != len(want) || len(pending) != len(want) {
			t.Fatalf("tombstones %v, want %v", got, want)
		}
		for id, k := range want {
			if got[id] != k {
				t.Fatalf("tombstone of %s = %q, want %q", id, got[id], k)
			}
		}

		// Shipped rows go; the rest stay, in order.
		noErr(t, tombs.Shipped(ctx, []int64{pending[0].Seq, pending[1].Seq}))
		rest, err := tombs.Pending(ctx, 100)
		noErr(t, err)
		if len(rest) != len(pending)-2 || rest[0].Seq != pending[2].Seq {
			t.Fatalf("after shipping: %d left", len(rest))
		}
	})
}

func TestApplyTombstonesDeletesWhatIsStillThere(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		tombs := persistence.NewTombstoneRepository(r.db)
		w := mustWorkspace(t, r, base)
		other := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		g := mustForm(t, r, w.ID(), base)
		gone := mustAdd(t, r, f, base, subOpts{})
		stays := mustAdd(t, r, f, base, subOpts{})
		mustAdd(t, r, g, base, subOpts{})
		of := mustForm(t, r, other.ID(), base)
		otherSub := mustAdd(t, r, of, base, subOpts{})

		ts := []ports.Tombstone{
			{Kind: ports.TombstoneSubmission, ID: gone.ID(), WorkspaceID: w.ID(), DeletedAt: base},
			{Kind: ports.TombstoneSubmission, ID: "sub_never_there", WorkspaceID: w.ID(), DeletedAt: base},
			{Kind: ports.TombstoneForm, ID: g.ID(), WorkspaceID: w.ID(), DeletedAt: base},
		}
		counts, err := tombs.Apply(ctx, ts)
		noErr(t, err)
		if counts != (ports.TombstoneCounts{Submissions: 1, Forms: 1}) {
			t.Fatalf("counts = %+v", counts)
		}
		_, err = r.submissions.Get(ctx, w.ID(), f.ID(), gone.ID())
		wantErr(t, err, domain.ErrNotFound)
		_, err = r.forms.Get(ctx, w.ID(), g.ID())
		wantErr(t, err, domain.ErrNotFound)
		_, err = r.submissions.Get(ctx, w.ID(), f.ID(), stays.ID())
		noErr(t, err)
		n, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{f.ID()})
		noErr(t, err)
		if n[f.ID()] != 1 {
			t.Fatalf("count after apply = %d", n[f.ID()])
		}
		// Idempotent, and writes no new tombstones.
		again, err := tombs.Apply(ctx, ts)
		noErr(t, err)
		if again != (ports.TombstoneCounts{}) {
			t.Fatalf("second apply = %+v", again)
		}
		pending, err := tombs.Pending(ctx, 10)
		noErr(t, err)
		if len(pending) != 0 {
			t.Fatalf("apply wrote %d tombstones", len(pending))
		}

		// A workspace tombstone removes all of that workspace's data and nothing else.
		counts, err = tombs.Apply(ctx, []ports.Tombstone{{Kind: ports.TombstoneWorkspace, ID: w.ID(), WorkspaceID: w.ID(), DeletedAt: base}})
		noErr(t, err)
		if counts.Workspaces != 1 {
			t.Fatalf("workspace counts = %+v", counts)
		}
		forms, err := r.forms.List(ctx, w.ID(), nil, ports.Page{Limit: 10})
		noErr(t, err)
		if len(forms) != 0 || countWhere(t, r.db, "submissions", "workspace_id", w.ID()) != 0 {
			t.Fatalf("workspace data left: %d forms", len(forms))
		}
		_, err = r.submissions.Get(ctx, other.ID(), of.ID(), otherSub.ID())
		noErr(t, err)

		// Record writes tombstones of deletions made elsewhere.
		noErr(t, tombs.Record(ctx, ts[:1]))
		pending, err = tombs.Pending(ctx, 10)
		noErr(t, err)
		if len(pending) != 1 || pending[0].ID != gone.ID() || pending[0].Kind != ports.TombstoneSubmission ||
			!pending[0].DeletedAt.Equal(base.Truncate(time.Millisecond)) {
			t.Fatalf("recorded %+v", pending)
		}
	})
}

// Migration 00140 turns each tombstone row into a list of one; its way down gives every ID of
// a list a row of its own again. Neither loses a tombstone, and new rows come after the old.
func TestTombstoneListMigration(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		p := migrationsOf(t, r.db)
		_, err := p.DownTo(ctx, 130)
		noErr(t, err)
		for _, id := range []string{"sub_a", "sub_b"} {
			_, err := r.db.SQL().ExecContext(ctx, "INSERT INTO tombstones (kind, id, workspace_id, deleted_at) VALUES ('submission', $1, 'wsp_x', 1000)", id)
			noErr(t, err)
		}
		_, err = p.Up(ctx)
		noErr(t, err)
		tombs := persistence.NewTombstoneRepository(r.db)
		noErr(t, tombs.Record(ctx, []ports.Tombstone{{Kind: ports.TombstoneForm, ID: "frm_c", WorkspaceID: "wsp_x", DeletedAt: time.UnixMilli(2000)}}))
		pending, err := tombs.Pending(ctx, 10)
		noErr(t, err)
		var got []string
		for _, p := range pending {
			got = append(got, string(p.Kind)+" "+p.ID+" "+p.WorkspaceID+" "+p.DeletedAt.UTC().Format(time.RFC3339Nano))
		}
		want := []string{"submission sub_a wsp_x 1970-01-01T00:00:01Z", "submission sub_b wsp_x 1970-01-01T00:00:01Z", "form frm_c wsp_x 1970-01-01T00:00:02Z"}
		if !slices.Equal(got, want) {
			t.Fatalf("after 00140 up: %q, want %q", got, want)
		}
		if pending[2].Seq <= pending[1].Seq {
			t.Errorf("a new row's seq %d is not after the migrated ones' %d", pending[2].Seq, pending[1].Seq)
		}

		_, err = r.db.SQL().ExecContext(ctx, `INSERT INTO tombstones (kind, ids, workspace_id, deleted_at) VALUES ('submission', '["sub_d","sub_e","sub_f"]', 'wsp_y', 3000)`)
		noErr(t, err)
		_, err = p.DownTo(ctx, 130)
		noErr(t, err)
		rows, err := r.db.SQL().QueryContext(ctx, "SELECT kind, id, workspace_id FROM tombstones ORDER BY seq")
		noErr(t, err)
		got = nil
		for rows.Next() {
			var kind, id, ws string
			noErr(t, rows.Scan(&kind, &id, &ws))
			got = append(got, kind+" "+id+" "+ws)
		}
		noErr(t, rows.Close())
		want = []string{"submission sub_a wsp_x", "submission sub_b wsp_x", "form frm_c wsp_x", "submission sub_d wsp_y", "submission sub_e wsp_y", "submission sub_f wsp_y"}
		if !slices.Equal(got, want) {
			t.Errorf("after 00140 down: %q, want %q", got, want)
		}
		_, err = p.Up(ctx)
		noErr(t, err)
	})
}
