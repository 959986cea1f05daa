package persistence_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

func TestAddSpendingTokenSpendsTheNonceOnce(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		tok := ports.SpentToken{Nonce: "nonce-a", ExpiresAt: base.Add(time.Hour)}

		s, e := buildSubmission(t, f, base, subOpts{})
		noErr(t, r.submissions.AddSpendingToken(ctx, s, e, tok))
		if got := countWhere(t, r.db, "used_form_tokens", "nonce", "nonce-a"); got != 1 {
			t.Fatalf("used tokens = %d", got)
		}
		if _, err := r.submissions.Get(ctx, w.ID(), f.ID(), s.ID()); err != nil {
			t.Fatal(err)
		}

		// The same nonce again: the specific error, and nothing of the replay is stored.
		s2, e2 := buildSubmission(t, f, base.Add(time.Second), subOpts{})
		wantErr(t, r.submissions.AddSpendingToken(ctx, s2, e2, tok), ports.ErrTokenUsed)
		if _, err := r.submissions.Get(ctx, w.ID(), f.ID(), s2.ID()); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("replayed submission stored: %v", err)
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM submissions"); got != 1 {
			t.Fatalf("submissions = %d", got)
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM outbox"); got != 1 {
			t.Fatalf("outbox rows = %d", got)
		}
		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{f.ID()})
		noErr(t, err)
		if counts[f.ID()] != 1 {
			t.Fatalf("count = %d", counts[f.ID()])
		}

		// Without a token the capture is unaffected.
		mustAdd(t, r, f, base.Add(2*time.Second), subOpts{})

		// Once expired (by the submissions' clock), a later spend purges the row.
		later := base.Add(2 * time.Hour)
		s3, e3 := buildSubmission(t, f, later, subOpts{})
		noErr(t, r.submissions.AddSpendingToken(ctx, s3, e3, ports.SpentToken{Nonce: "nonce-b", ExpiresAt: later.Add(time.Hour)}))
		if got := countWhere(t, r.db, "used_form_tokens", "nonce", "nonce-a"); got != 0 {
			t.Fatalf("expired nonce kept: %d", got)
		}
	})
}

func TestAddSpendingTokenFailedCaptureKeepsTheNonce(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		doomed := mustDeletedForm(t, r, w.ID())
		tok := ports.SpentToken{Nonce: "nonce-c", ExpiresAt: base.Add(time.Hour)}

		s, e := buildSubmission(t, doomed, base, subOpts{})
		wantErr(t, r.submissions.AddSpendingToken(ctx, s, e, tok), domain.ErrNotFound)
		// The failed capture rolled its spend back: the nonce is still good.
		s, e = buildSubmission(t, f, base, subOpts{})
		noErr(t, r.submissions.AddSpendingToken(ctx, s, e, tok))
	})
}

func TestAddSpendingTokenConcurrentDuplicates(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		doomed := mustDeletedForm(t, r, w.ID())
		const nonces, copies, plain, bad = 40, 6, 60, 10
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			won      = map[string]int{}
			replayed = map[string]int{}
			failures []error
		)
		start := make(chan struct{})
		for i := range nonces * copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nonce := fmt.Sprintf("nonce-%d", i%nonces)
				s, e := buildSubmission(t, f, base.Add(time.Duration(i)*time.Millisecond), subOpts{})
				<-start
				err := r.submissions.AddSpendingToken(ctx, s, e, ports.SpentToken{Nonce: nonce, ExpiresAt: base.Add(time.Hour)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won[nonce]++
				case errors.Is(err, ports.ErrTokenUsed):
					replayed[nonce]++
				default:
					failures = append(failures, err)
				}
			}()
		}
		// Tokenless captures and failing items share the batches.
		for i := range plain + bad {
			wg.Add(1)
			go func() {
				defer wg.Done()
				target := f
				if i >= plain {
					target = doomed
				}
				s, e := buildSubmission(t, target, base.Add(time.Duration(i)*time.Millisecond), subOpts{})
				<-start
				err := r.submissions.Add(ctx, s, e)
				if (err == nil) != (i < plain) {
					mu.Lock()
					failures = append(failures, fmt.Errorf("plain add %d: %w", i, err))
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("unexpected errors: %v", failures)
		}
		for i := range nonces {
			nonce := fmt.Sprintf("nonce-%d", i)
			if won[nonce] != 1 || replayed[nonce] != copies-1 {
				t.Fatalf("%s: %d stored, %d replayed", nonce, won[nonce], replayed[nonce])
			}
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM submissions"); got != nonces+plain {
			t.Fatalf("submissions = %d, want %d", got, nonces+plain)
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM outbox"); got != nonces+plain {
			t.Fatalf("outbox rows = %d", got)
		}
		if got := count(t, r.db, "SELECT COUNT(*) FROM used_form_tokens"); got != nonces {
			t.Fatalf("used tokens = %d", got)
		}
		counts, err := r.forms.SubmissionCounts(ctx, w.ID(), []string{f.ID()})
		noErr(t, err)
		if counts[f.ID()] != nonces+plain {
			t.Fatalf("count = %d", counts[f.ID()])
		}
	})
}
