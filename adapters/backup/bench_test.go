package backup_test

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
)

// TestBackupOfAMillionSubmissions is the backup benchmark, opt-in (FORMWARD_BACKUP_BENCH=1,
// rows in FORMWARD_BACKUP_BENCH_ROWS, default 1,000,000): it fills a SQLite database, measures
// the capture latency under load (16 capturers through the capture use case and group commit)
// without a backup, then while `backup create` runs, and verifies the backup. Run with -v -timeout 30m.
func TestBackupOfAMillionSubmissions(t *testing.T) {
	if os.Getenv("FORMWARD_BACKUP_BENCH") != "1" {
		t.Skip("opt-in: FORMWARD_BACKUP_BENCH=1")
	}
	rows := 1_000_000
	if v := os.Getenv("FORMWARD_BACKUP_BENCH_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		noErr(t, err)
		rows = n
	}
	ctx := context.Background()
	cfg := persistence.Config{DataDir: t.TempDir()}
	a := openApp(t, cfg)
	defer a.close(t)
	f := a.form(t, a.workspace(t))
	seed := a.mustSubmit(t, f, "a respondent's answer of a typical length, sealed like every other")

	start := time.Now()
	// Copies of a real sealed submission under new IDs, in transactions of 100,000.
	for done := 0; done < rows; done += 100_000 {
		n := min(100_000, rows-done)
		_, err := a.db.SQL().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO submissions (id, workspace_id, form_id, submitted_at, updated_at, sealed)
			SELECT 'sub_bench' || printf('%09d', ? + i), s.workspace_id, s.form_id, s.submitted_at - ? - i, s.updated_at, s.sealed
			FROM n, submissions s WHERE s.id = ?`, n, done, done, seed)
		noErr(t, err)
	}
	st, err := os.Stat(cfg.DataDir + "/formward.db")
	noErr(t, err)
	t.Logf("filled %d submissions in %s (database file %d MB before checkpoint)", rows, time.Since(start).Round(time.Millisecond), st.Size()>>20)

	b, _, _ := localBackups(t, cfg, system.Clock{})
	load := func(during func()) (p50, p99 time.Duration, n int) {
		stop := make(chan struct{})
		var from atomic.Int64 // captures that start before this are the warm-up
		from.Store(math.MaxInt64)
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for {
					select {
					case <-stop:
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
						return
					default:
					}
					t0 := time.Now()
					if _, err := a.submit(ctx, f, "during the benchmark"); err != nil {
						t.Errorf("capture: %v", err)
					}
					if t0.UnixNano() >= from.Load() {
						mine = append(mine, time.Since(t0))
					}
				}
			}()
		}
		time.Sleep(500 * time.Millisecond) // warm-up, left out of the measurement
		from.Store(time.Now().UnixNano())
		during()
		close(stop)
		wg.Wait()
		slices.Sort(lat)
		if len(lat) == 0 {
			return 0, 0, 0
		}
		return lat[len(lat)/2], lat[len(lat)*99/100], len(lat)
	}

	var took time.Duration
	var size int64
	withP50, withP99, withN := load(func() {
		t0 := time.Now()
		m, err := b.Create(ctx, a.db)
		noErr(t, err)
		took, size = time.Since(t0), m.EncryptedSize
		if m.Tables["submissions"] < int64(rows) {
			t.Errorf("backup holds %d submissions", m.Tables["submissions"])
		}
	})
	baseP50, baseP99, baseN := load(func() { time.Sleep(took) })
	t.Logf("backup create: %d submissions, %d MB encrypted, %s", rows, size>>20, took.Round(time.Millisecond))
	t.Logf("capture without backup: %d captures in %s, p50 %s, p99 %s", baseN, took.Round(time.Millisecond), baseP50, baseP99)
	t.Logf("capture during backup:  %d captures in %s, p50 %s, p99 %s (%.2fx)", withN, took.Round(time.Millisecond), withP50, withP99,
		float64(withP99)/float64(baseP99))

	list, err := b.List(ctx)
	noErr(t, err)
	t0 := time.Now()
	_, err = b.Verify(ctx, list[0].ID)
	noErr(t, err)
	t.Logf("backup verify: %s", time.Since(t0).Round(time.Millisecond))
}
