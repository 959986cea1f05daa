package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/workspace"
)

// BenchmarkRetentionOfKeyedSubmissions is BenchmarkRetention/sqlite where every expired
// submission was created with an Idempotency-Key whose stored response (300 sealed bytes) is
// still there: each batch then also deletes 1,000 responses. deleted/s compares with
// BenchmarkRetention/sqlite, where no batch finds a key (the usual case).
func BenchmarkRetentionOfKeyedSubmissions(b *testing.B) {
	db := persistencetest.SQLite(b, nil)
	r := newRepos(db)
	now := base.Add(400 * 24 * time.Hour)
	var deleted int64
	var took, cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		w := seedExpired(b, r, now, retentionSeed)
		if _, err := db.SQL().Exec(`INSERT INTO idempotency_keys (workspace_id, scope, key, fingerprint, status, body, created_at, submission_id)
			SELECT workspace_id, 'api', id, randomblob(32), 201, randomblob(300), submitted_at, id FROM submissions WHERE workspace_id = ?`, w.ID()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpuStart := time.Now(), processCPU()
		res, err := retentionJob(r, now).Handle(context.Background(), workspace.RunRetention{})
		took += time.Since(start)
		cpu += processCPU() - cpuStart
		if err != nil {
			b.Fatal(err)
		}
		deleted += res.SubmissionsDeleted
		b.StopTimer()
		if n := count(b, db, "SELECT COUNT(*) FROM idempotency_keys WHERE body IS NOT NULL"); n != 0 {
			b.Fatalf("%d responses left", n)
		}
		b.StartTimer()
	}
	if deleted != int64(b.N)*retentionSeed {
		b.Fatalf("deleted %d, want %d", deleted, int64(b.N)*retentionSeed)
	}
	b.ReportMetric(float64(deleted)/took.Seconds(), "deleted/s")
	b.ReportMetric(float64(deleted)/cpu.Seconds(), "deleted/cpu-s")
}
