package persistence_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// guardedAdds runs n concurrent AddGuarded calls on f (guard(i) for the i-th) together with
// plain Adds on other, and returns how many of the guarded ones succeeded and each error.
func guardedAdds(t *testing.T, r repos, n int, f, other *form.Form, guard func(i int) ports.CaptureGuards) (int, map[error]int) {
	t.Helper()
	ctx := context.Background()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		stored int
		errs   = map[error]int{}
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			s, e := buildSubmission(t, f, base.Add(time.Duration(i)*time.Millisecond), subOpts{})
			<-start
			err := r.submissions.AddGuarded(ctx, s, e, guard(i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored++
			case errors.Is(err, domain.ErrFormClosed):
				errs[domain.ErrFormClosed]++
			case errors.Is(err, ports.ErrEmailUsed):
				errs[ports.ErrEmailUsed]++
			default:
				errs[err]++
			}
		}()
		go func() { // unlimited captures of another form share the batches
			defer wg.Done()
			s, e := buildSubmission(t, other, base.Add(time.Duration(i)*time.Millisecond), subOpts{})
			<-start
			if err := r.submissions.Add(ctx, s, e); err != nil {
				mu.Lock()
				errs[err]++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return stored, errs
}

func TestAddGuardedNeverStoresMoreThanTheLimit(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		other := mustForm(t, r, w.ID(), base)
		// Two API submissions are stored already: they count towards the limit.
		mustAdd(t, r, f, base, subOpts{})
		mustAdd(t, r, f, base, subOpts{})

		const n, limit = 64, 10
		stored, errs := guardedAdds(t, r, n, f, other, func(int) ports.CaptureGuards { return ports.CaptureGuards{MaxSubmissions: limit} })
		if stored != limit-2 || errs[domain.ErrFormClosed] != n-(limit-2) || len(errs) != 1 {
			t.Fatalf("stored %d, refused %v; want %d stored, the rest form_closed", stored, errs, limit-2)
		}
		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{f.ID(), other.ID()})
		noErr(t, err)
		if counts[f.ID()] != limit || counts[other.ID()] != n {
			t.Fatalf("counts = %v", counts)
		}
		if got := countWhere(t, r.db, "submissions", "form_id", f.ID()); got != limit {
			t.Fatalf("stored rows = %d", got)
		}
		if got := countWhere(t, r.db, "outbox", "form_id", f.ID()); got != limit {
			t.Fatalf("outbox rows = %d", got)
		}

		// Full: one more is refused, alone too; API captures are not.
		s, e := buildSubmission(t, f, base, subOpts{})
		wantErr(t, r.submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{MaxSubmissions: limit}), domain.ErrFormClosed)
		mustAdd(t, r, f, base, subOpts{})
	})
}

func TestAddGuardedOneResponsePerEmailKey(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		other := mustForm(t, r, w.ID(), base)

		const n, keys = 64, 8
		stored, errs := guardedAdds(t, r, n, f, other, func(i int) ports.CaptureGuards {
			return ports.CaptureGuards{EmailKey: fmt.Sprintf("key-%d", i%keys)}
		})
		if stored != keys || errs[ports.ErrEmailUsed] != n-keys || len(errs) != 1 {
			t.Fatalf("stored %d, refused %v; want one per key", stored, errs)
		}
		if got := countWhere(t, r.db, "form_email_keys", "form_id", f.ID()); got != keys {
			t.Fatalf("email keys = %d", got)
		}
		// The same key on another form is another respondent.
		s, e := buildSubmission(t, other, base, subOpts{})
		noErr(t, r.submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{EmailKey: "key-0"}))

		// Deleting the response frees its address.
		var id string
		q := "SELECT submission_id FROM form_email_keys WHERE email_key = ? AND form_id = '" + f.ID() + "'"
		if r.db.Dialect() == persistence.DialectPostgres {
			q = strings.Replace(q, "?", "$1", 1)
		}
		noErr(t, r.db.SQL().QueryRowContext(ctx, q, "key-3").Scan(&id))
		noErr(t, r.submissions.Delete(ctx, w.ID(), f.ID(), id))
		if got := countWhere(t, r.db, "form_email_keys", "submission_id", id); got != 0 {
			t.Fatalf("key of a deleted response kept: %d", got)
		}
		s, e = buildSubmission(t, f, base, subOpts{})
		noErr(t, r.submissions.AddGuarded(ctx, s, e, ports.CaptureGuards{EmailKey: "key-3"}))
	})
}

func TestAddGuardedLimitGivesBackEmailKeys(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		other := mustForm(t, r, w.ID(), base)
		const n, limit = 64, 3
		stored, errs := guardedAdds(t, r, n, f, other, func(i int) ports.CaptureGuards {
			return ports.CaptureGuards{MaxSubmissions: limit, EmailKey: fmt.Sprintf("key-%d", i)}
		})
		if stored != limit || errs[domain.ErrFormClosed] != n-limit {
			t.Fatalf("stored %d, refused %v", stored, errs)
		}
		// Refused posts leave no key behind: their respondents may answer if room opens.
		if got := countWhere(t, r.db, "form_email_keys", "form_id", f.ID()); got != limit {
			t.Fatalf("email keys = %d, want %d", got, limit)
		}
	})
}
