package persistence_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

func TestGroupCommitConcurrentAdds(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		forms := []*form.Form{mustForm(t, r, w.ID(), base), mustForm(t, r, w.ID(), base), mustForm(t, r, w.ID(), base)}
		const n = 500
		errs := race(n, func(i int) error {
			s, e := buildSubmission(t, forms[i%3], base.Add(time.Duration(i)*time.Millisecond), subOpts{})
			return r.submissions.Add(ctx, s, e)
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("add %d: %v", i, err)
			}
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM submissions"); got != n {
			t.Fatalf("submissions = %d, want %d", got, n)
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM outbox"); got != n {
			t.Fatalf("outbox rows = %d, want %d", got, n)
		}
		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{forms[0].ID(), forms[1].ID(), forms[2].ID()})
		noErr(t, err)
		if counts[forms[0].ID()] != 167 || counts[forms[1].ID()] != 167 || counts[forms[2].ID()] != 166 {
			t.Fatalf("counts = %v", counts)
		}
		for _, f := range forms {
			list, err := r.submissions.List(ctx, w.ID(), f.ID(), ports.SubmissionQuery{Page: ports.Page{Limit: 1000}})
			noErr(t, err)
			if int64(len(list)) != counts[f.ID()] {
				t.Fatalf("listed %d, counted %d", len(list), counts[f.ID()])
			}
		}
		// Fewer transactions than submissions is the point, but only the result is asserted:
		// every event is readable and in seq order.
		pending, err := r.outbox.Pending(ctx, 0, 1000)
		noErr(t, err)
		if len(pending) != n {
			t.Fatalf("pending = %d", len(pending))
		}
		for i := 1; i < len(pending); i++ {
			if pending[i].Seq <= pending[i-1].Seq {
				t.Fatalf("outbox out of order at %d", i)
			}
		}
	})
}

func TestGroupCommitBadItemFailsAlone(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		good := mustForm(t, r, w.ID(), base)
		doomed := mustDeletedForm(t, r, w.ID())

		const n = 300
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := good
				if i%10 == 0 {
					f = doomed
				}
				s, e := buildSubmission(t, f, base, subOpts{})
				<-start
				errs[i] = r.submissions.Add(ctx, s, e)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if i%10 == 0 {
				if !errors.Is(err, domain.ErrNotFound) {
					t.Fatalf("add %d to the deleted form: %v, want ErrNotFound", i, err)
				}
			} else if err != nil {
				t.Fatalf("add %d to the live form failed with its neighbour: %v", i, err)
			}
		}
		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{good.ID(), doomed.ID()})
		noErr(t, err)
		if counts[good.ID()] != n-n/10 || counts[doomed.ID()] != 0 {
			t.Fatalf("counts = %v", counts)
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM outbox"); got != n-n/10 {
			t.Fatalf("outbox = %d, want %d (no events of failed adds)", got, n-n/10)
		}
	})
}

// Deleting a form while its submissions are being captured leaves no orphans: every Add either
// fails with ErrNotFound or was stored before the delete and went with it.
func TestGroupCommitRacesFormDelete(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		const n = 200
		errs := addsDuring(t, r, f, n, n/2, func() { noErr(t, r.forms.Delete(ctx, w.ID(), f.ID())) })
		winners(t, errs, domain.ErrNotFound) // each add was stored or found the form gone
		if got := countWhere(t, r.db, "submissions", "form_id", f.ID()); got != 0 {
			t.Fatalf("%d orphan submissions", got)
		}
		if got := countWhere(t, r.db, "form_counters", "form_id", f.ID()); got != 0 {
			t.Fatalf("%d orphan counters", got)
		}
	})
}

// addsDuring adds n new submissions to f, each on a goroutine of its own, runs meanwhile once
// the add numbered at has started, and returns the adds' errors when all have ended.
func addsDuring(t *testing.T, r repos, f *form.Form, n, at int, meanwhile func()) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, e := buildSubmission(t, f, base, subOpts{})
			errs[i] = r.submissions.Add(context.Background(), s, e)
		})
		if i == at {
			meanwhile()
		}
	}
	wg.Wait()
	return errs
}

func TestCloseDrainsAndRejects(t *testing.T) {
	for _, dialect := range []string{persistence.DialectSQLite, persistence.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			cfg := persistence.Config{DataDir: t.TempDir(), GroupCommitMax: 8}
			if dialect == persistence.DialectPostgres {
				cfg = persistence.Config{DatabaseURL: persistencetest.PostgresURL(t), GroupCommitMax: 8, Committers: 2}
			}
			db, err := persistence.Open(ctx, cfg)
			noErr(t, err)
			noErr(t, db.Migrate(ctx))
			r := newRepos(db)
			w := mustWorkspace(t, r, base)
			f := mustForm(t, r, w.ID(), base)

			const n = 300
			errs := addsDuring(t, r, f, n, n-1, func() { noErr(t, db.Close()) })
			stored := winners(t, errs, persistence.ErrClosed)
			s, e := buildSubmission(t, f, base, subOpts{})
			wantErr(t, r.submissions.Add(ctx, s, e), persistence.ErrClosed)
			noErr(t, db.Close()) // closing twice is harmless

			// Every acknowledged Add is in the database, and nothing else.
			db2, err := persistence.Open(ctx, cfg)
			noErr(t, err)
			defer db2.Close()
			if got := count(t, db2, "SELECT COUNT(*) FROM submissions"); got != int64(stored) {
				t.Fatalf("stored %d, acknowledged %d", got, stored)
			}
			counts, err := persistence.NewFormRepository(db2, persistencetest.Cipher()).SubmissionCounts(ctx, w.ID(), []string{f.ID()})
			noErr(t, err)
			if counts[f.ID()] != int64(stored) {
				t.Fatalf("count %d, acknowledged %d", counts[f.ID()], stored)
			}
			t.Logf("%d of %d adds acknowledged before close", stored, n)
		})
	}
}
