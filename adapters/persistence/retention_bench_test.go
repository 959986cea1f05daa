package persistence_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/workspace"
)

// retentionSeed is how many expired submissions the retention benchmarks delete.
const retentionSeed = 50000

type clockAt struct{ t time.Time }

func (c clockAt) Now() time.Time { return c.t }

// seedExpired stores n submissions of a starter workspace received 13 months before now.
func seedExpired(b *testing.B, r repos, now time.Time, n int) *workspace.Workspace {
	b.Helper()
	w, err := workspace.New(newID("ws"), "Old", workspace.PlanStarter, now)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.workspaces.Create(context.Background(), w); err != nil {
		b.Fatal(err)
	}
	f := mustForm(b, r, w.ID(), now)
	addMany(b, r, f, now.Add(-395*24*time.Hour), n)
	return w
}

// addMany captures n submissions of f from 64 goroutines, received from `from` on, each from
// its own respondent (so their email hashes spread over the blind index as real ones do), and
// returns how many were stored and how many failed.
func addMany(b *testing.B, r repos, f *form.Form, from time.Time, n int) (added int64, failed int64) {
	b.Helper()
	var next, ok, bad atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				s, e := buildSubmission(b, f, from.Add(time.Duration(i)*time.Millisecond), subOpts{email: fmt.Sprintf("respondent%d@example.com", i)})
				if err := r.submissions.Add(context.Background(), s, e); err != nil {
					bad.Add(1)
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return ok.Load(), bad.Load()
}

func retentionJob(r repos, now time.Time) workspaceapp.RunRetentionHandler {
	return workspaceapp.NewRunRetentionHandler(r.workspaces, r.forms, persistence.NewRetentionStore(r.db, r.cipher), nil, nil, nil, nil, nil, nil,
		system.NewIDs(), clockAt{now}, 0)
}

// BenchmarkRetention deletes 50,000 expired submissions in one pass of the retention job
// (batches of 1,000); subs/s is its deletion rate. "serve" paces the pass as serve does (Rest 3),
// with no capture about: it rests only after its first batch (the seeding's captures).
func BenchmarkRetention(b *testing.B) {
	b.Run(persistence.DialectSQLite, func(b *testing.B) { benchmarkRetention(b, persistencetest.SQLite(b, nil), 0) })
	b.Run(persistence.DialectSQLite+"/serve", func(b *testing.B) { benchmarkRetention(b, persistencetest.SQLite(b, nil), 3) })
	b.Run(persistence.DialectPostgres, func(b *testing.B) { benchmarkRetention(b, persistencetest.Postgres(b), 0) })
}

func benchmarkRetention(b *testing.B, db *persistence.DB, rest float64) {
	r := newRepos(db)
	now := base.Add(400 * 24 * time.Hour)
	var deleted int64
	var took, cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		seedExpired(b, r, now, retentionSeed)
		b.StartTimer()
		start, cpuStart := time.Now(), processCPU()
		res, err := retentionJob(r, now).Handle(context.Background(), workspaceapp.RunRetention{Rest: rest})
		took += time.Since(start)
		cpu += processCPU() - cpuStart
		if err != nil {
			b.Fatal(err)
		}
		deleted += res.SubmissionsDeleted
	}
	if deleted != int64(b.N)*retentionSeed {
		b.Fatalf("deleted %d, want %d", deleted, int64(b.N)*retentionSeed)
	}
	b.ReportMetric(float64(deleted)/took.Seconds(), "deleted/s")
	// On a shared machine wall time mostly measures the other tenants; the process's own CPU
	// time per deletion does not.
	b.ReportMetric(float64(deleted)/cpu.Seconds(), "deleted/cpu-s")
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCaptureDuringRetention captures 20,000 submissions from 64 goroutines, alone
// ("idle") and while the retention job, paced as serve runs it (Rest 3), deletes 50,000 expired
// submissions of another workspace ("retention"); subs/s is the capture throughput.
func BenchmarkCaptureDuringRetention(b *testing.B) {
	for _, mode := range []string{"idle", "retention"} {
		b.Run(mode, func(b *testing.B) {
			db := persistencetest.SQLite(b, nil)
			r := newRepos(db)
			now := base.Add(400 * 24 * time.Hour)
			w := mustWorkspace(b, r, now)
			f := mustForm(b, r, w.ID(), now)
			var captured int64
			var took time.Duration
			for range b.N {
				b.StopTimer()
				seedExpired(b, r, now, retentionSeed)
				done := make(chan struct{})
				if mode == "retention" {
					go func() {
						defer close(done)
						if _, err := retentionJob(r, now).Handle(context.Background(), workspaceapp.RunRetention{Rest: 3}); err != nil {
							b.Error(err)
						}
					}()
				} else {
					close(done)
				}
				b.StartTimer()
				start := time.Now()
				ok, failed := addMany(b, r, f, now, 20000)
				took += time.Since(start)
				b.StopTimer()
				<-done
				if failed > 0 {
					b.Fatalf("%d captures failed", failed)
				}
				captured += ok
			}
			b.ReportMetric(float64(captured)/took.Seconds(), "subs/s")
		})
	}
}
