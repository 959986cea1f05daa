package persistence_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// A large form pages oldest first in batches without losing or repeating a row, also where a
// batch ends inside a run of submissions with the same timestamp, and within bounds.
func TestSubmissionsOldestFirstAcrossBatches(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		const n, batch = 20_000, 1000
		r := newRepos(db)
		w := mustWorkspace(t, r, base)
		f := publish(t, r, mustForm(t, r, w.ID(), base))
		other := mustForm(t, r, w.ID(), base)
		subs := make([]*submission.Submission, n)
		for i := range subs {
			// About seven submissions share each millisecond; IDs do not follow time.
			at := base.Add(time.Duration((i*7919)%2857) * time.Millisecond)
			subs[i], _ = buildSubmission(t, f, at, subOpts{})
		}
		// Imported in large transactions, counted with the form.
		for i := 0; i < n; i += 5000 {
			if err := r.submissions.Import(context.Background(), subs[i:i+5000]...); err != nil {
				t.Fatal(err)
			}
		}
		counts, err := r.forms.SubmissionCounts(context.Background(), w.ID(), []string{f.ID()})
		if err != nil || counts[f.ID()] != n {
			t.Fatalf("count after import: %v %v", counts, err)
		}
		mustAdd(t, r, other, base, subOpts{}) // another form's submission is never listed

		want := append([]*submission.Submission(nil), subs...)
		sort.Slice(want, func(i, j int) bool {
			a, b := want[i], want[j]
			if !a.SubmittedAt().Equal(b.SubmittedAt()) {
				return a.SubmittedAt().Before(b.SubmittedAt())
			}
			return a.ID() < b.ID()
		})
		scan := func(q ports.OldestFirst) []string {
			var ids []string
			for {
				page, err := r.submissions.ListOldestFirst(context.Background(), w.ID(), f.ID(), q)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range page {
					ids = append(ids, s.ID())
				}
				if len(page) < q.Limit {
					return ids
				}
				last := page[len(page)-1]
				q.After = &ports.Position{CreatedAt: last.SubmittedAt(), ID: last.ID()}
			}
		}
		got := scan(ports.OldestFirst{Limit: batch})
		if len(got) != n {
			t.Fatalf("%d rows, want %d", len(got), n)
		}
		for i, s := range want {
			if got[i] != s.ID() {
				t.Fatalf("row %d = %s, want %s", i, got[i], s.ID())
			}
		}
		// Decrypted whole: the first row reads back as stored.
		first, err := r.submissions.ListOldestFirst(context.Background(), w.ID(), f.ID(), ports.OldestFirst{Limit: 1})
		if err != nil || len(first) != 1 || first[0].Data()[nameField(f)].String() != "Ada Lovelace" {
			t.Fatalf("first row: %v %v", first, err)
		}

		// Exclusive bounds: strictly after the 100th millisecond, strictly before the 200th.
		after, before := base.Add(100*time.Millisecond), base.Add(200*time.Millisecond)
		var bounded []string
		for _, s := range want {
			if s.SubmittedAt().After(after) && s.SubmittedAt().Before(before) {
				bounded = append(bounded, s.ID())
			}
		}
		got = scan(ports.OldestFirst{Limit: 7, CreatedAfter: &after, CreatedBefore: &before})
		if len(got) != len(bounded) || len(got) == 0 {
			t.Fatalf("bounded: %d rows, want %d", len(got), len(bounded))
		}
		for i := range bounded {
			if got[i] != bounded[i] {
				t.Fatalf("bounded row %d = %s, want %s", i, got[i], bounded[i])
			}
		}
		// Another workspace sees nothing of the form.
		if page, err := r.submissions.ListOldestFirst(context.Background(), "wsp_other", f.ID(), ports.OldestFirst{Limit: 10}); err != nil || len(page) != 0 {
			t.Fatalf("other workspace: %d rows, %v", len(page), err)
		}

		// A row that does not open fails its batch, wherever it is in the batch.
		update := "UPDATE submissions SET sealed = ? WHERE id = ?"
		if db.Dialect() == persistence.DialectPostgres {
			update = "UPDATE submissions SET sealed = $1 WHERE id = $2"
		}
		if _, err := db.SQL().Exec(update, []byte("not a ciphertext"), want[700].ID()); err != nil {
			t.Fatal(err)
		}
		if page, err := r.submissions.ListOldestFirst(context.Background(), w.ID(), f.ID(), ports.OldestFirst{Limit: batch}); err == nil {
			t.Fatalf("a batch with a tampered row: %d rows and no error", len(page))
		}
		if page, err := r.submissions.ListOldestFirst(context.Background(), w.ID(), f.ID(), ports.OldestFirst{Limit: 700}); err != nil || len(page) != 700 {
			t.Fatalf("the batch before the tampered row: %d rows, %v", len(page), err)
		}
	})
}

func nameField(f *form.Form) string {
	name, _, _ := fieldIDs(f)
	return name
}
