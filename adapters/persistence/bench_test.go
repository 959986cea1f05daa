package persistence_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
)

// BenchmarkAdd captures submissions from 64 goroutines, as concurrent HTTP requests would.
// ns/op is wall time per submission; subs/s the resulting throughput.
func BenchmarkAdd(b *testing.B) {
	b.Run(persistence.DialectSQLite, func(b *testing.B) { benchmarkAdd(b, persistencetest.SQLite(b, nil)) })
	b.Run(persistence.DialectPostgres, func(b *testing.B) { benchmarkAdd(b, persistencetest.Postgres(b)) })
}

func benchmarkAdd(b *testing.B, db *persistence.DB) {
	const workers = 64
	r := newRepos(db)
	ctx := context.Background()
	w := mustWorkspace(b, r, base)
	f := mustForm(b, r, w.ID(), base)
	// Build the submissions up front so only Add is measured.
	subs := make([]*submission.Submission, b.N)
	events := make([]event.Event, b.N)
	for i := range subs {
		subs[i], events[i] = buildSubmission(b, f, base.Add(time.Duration(i)*time.Millisecond), subOpts{})
	}
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				if err := r.submissions.Add(ctx, subs[i], events[i]); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d adds failed", failed.Load())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "subs/s")
}
