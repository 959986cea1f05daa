package httpapi_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/form"
)

// BenchmarkExportCSV exports every submission of one 10-field form to CSV through the real
// router, on SQLite and PostgreSQL. The form holds FORMWARD_BENCH_EXPORT_ROWS submissions
// (default 1,000,000), imported through the repository in large transactions before the timer
// starts. It reports rows/s and the growth of the process's peak RSS during the export
// (VmHWM, reset before the export through /proc/self/clear_refs). On PostgreSQL the table is
// vacuumed after the import. Run it alone, once:
//
//	go test ./adapters/http/ -run '^$' -bench BenchmarkExportCSV -benchtime 1x -timeout 60m
func BenchmarkExportCSV(b *testing.B) {
	rows := benchExportRows(b)
	b.Run(persistence.DialectSQLite, func(b *testing.B) { benchmarkExport(b, persistencetest.SQLite(b, nil), "csv", rows) })
	b.Run(persistence.DialectPostgres, func(b *testing.B) { benchmarkExport(b, persistencetest.Postgres(b), "csv", rows) })
}

// BenchmarkExportXLSX is BenchmarkExportCSV to XLSX (typed cells; the workbook is sent when
// complete), with the same rows, figures and environment variables:
//
//	FORMWARD_BENCH_EXPORT_ROWS=200000 go test ./adapters/http/ -run '^$' -bench BenchmarkExportXLSX -benchtime 1x -timeout 60m
func BenchmarkExportXLSX(b *testing.B) {
	rows := benchExportRows(b)
	b.Run(persistence.DialectSQLite, func(b *testing.B) { benchmarkExport(b, persistencetest.SQLite(b, nil), "xlsx", rows) })
	b.Run(persistence.DialectPostgres, func(b *testing.B) { benchmarkExport(b, persistencetest.Postgres(b), "xlsx", rows) })
}

// benchExportRows is FORMWARD_BENCH_EXPORT_ROWS, 1,000,000 when unset.
func benchExportRows(b *testing.B) int {
	rows := 1_000_000
	if s := os.Getenv("FORMWARD_BENCH_EXPORT_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("FORMWARD_BENCH_EXPORT_ROWS=%q", s)
		}
		rows = n
	}
	return rows
}

func benchmarkExport(b *testing.B, db *persistence.DB, format string, rows int) {
	ctx := context.Background()
	cipher := persistencetest.Cipher()
	subs := persistence.NewSubmissionRepository(db, cipher, persistencetest.BlindIndex())
	app := application.New(application.Deps{
		Workspaces: persistence.NewWorkspaceRepository(db), Keys: persistence.NewAPIKeyRepository(db),
		Forms: persistence.NewFormRepository(db, cipher), Submissions: subs, Scanner: subs, Audit: persistence.NewAuditLog(db),
		IDs: system.NewIDs(), Clock: system.Clock{},
	}, application.Settings{})
	ws, err := app.Commands.CreateWorkspace.Handle(ctx, workspace.CreateWorkspace{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	owner := auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID()))
	key, err := app.Commands.CreateAPIKey.Handle(owner, accounts.CreateAPIKey{Name: "bench", Scope: "read-only"})
	if err != nil {
		b.Fatal(err)
	}
	v, err := app.Commands.CreateForm.Handle(owner, forms.CreateForm{
		Draft: form.Draft{Name: "Bench", Fields: persistencetest.TypicalFields()}})
	if err != nil {
		b.Fatal(err)
	}
	f := v.Form

	seedStart := time.Now()
	persistencetest.ImportTypical(b, subs, f, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), rows)
	if db.Dialect() == persistence.DialectPostgres {
		// A table at rest, as exports meet it: without this, autovacuum's pass over the rows
		// just imported (and the first reads' hint-bit writes) run during the export and
		// swing its figure by a fifth from run to run.
		if _, err := db.SQL().ExecContext(ctx, "VACUUM (ANALYZE) submissions"); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: seeded %d submissions in %s", db.Dialect(), rows, time.Since(seedStart).Round(time.Second))

	router := httpapi.NewRouter(httpapi.Deps{App: app, Clock: system.Clock{}, Logger: zap.NewNop(), Ready: db.Ping},
		httpapi.Options{SigningKey: []byte("bench")})
	b.ResetTimer()
	for range b.N {
		// Give the seeding's memory back first, so that the peak measures the export alone.
		debug.FreeOSMemory()
		clearPeakRSS(b)
		heapBefore, heapPeak, stopSampling := sampleHeap()
		before := procStatus(b, "VmRSS")
		w := &countingWriter{header: http.Header{}}
		req := httptest.NewRequest("GET", "/v1/forms/"+f.ID()+"/submissions/export?format="+format, nil)
		req.Header.Set("Authorization", "Bearer "+key.Token)
		stopProfile := exportProfile(b)
		start, cpuStart := time.Now(), cpuTime(b)
		router.ServeHTTP(w, req)
		elapsed, cpu := time.Since(start), cpuTime(b)-cpuStart
		stopProfile()
		stopSampling()
		if w.status != 200 || format == "csv" && w.lines != rows+1 || w.bytes == 0 {
			b.Fatalf("status %d, %d bytes, %d lines, want %d", w.status, w.bytes, w.lines, rows+1)
		}
		growth := procStatus(b, "VmHWM") - before
		b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
		b.ReportMetric(float64(growth)/1024, "peak-RSS-growth-MB")
		b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
		b.ReportMetric(float64(*heapPeak-heapBefore)/(1<<20), "peak-heap-growth-MB")
		b.ReportMetric(float64(w.bytes)/(1<<20), "MB-written")
		b.Logf("%s %s: %d rows in %s (%.0f rows/s; %s of this process's CPU: %.0f rows per CPU-second), %.1f MB written, peak RSS %+.1f MB, peak Go heap %+.1f MB",
			db.Dialect(), format, rows, elapsed.Round(time.Millisecond), float64(rows)/elapsed.Seconds(), cpu.Round(time.Millisecond),
			float64(rows)/cpu.Seconds(), float64(w.bytes)/(1<<20), float64(growth)/1024, float64(*heapPeak-heapBefore)/(1<<20))
	}
}

// exportProfile starts a CPU profile of the export alone (not of the seeding, which -cpuprofile
// would include) when FORMWARD_BENCH_EXPORT_PROFILE names a file; the dialect is appended to
// the name. It returns the function that stops it.
func exportProfile(b *testing.B) func() {
	path := os.Getenv("FORMWARD_BENCH_EXPORT_PROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + "." + b.Name()[strings.LastIndexByte(b.Name(), '/')+1:])
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// countingWriter is a client that reads the export and keeps nothing but counts.
type countingWriter struct {
	header http.Header
	status int
	bytes  int64
	lines  int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.bytes += int64(len(p))
	w.lines += strings.Count(string(p), "\r\n")
	return len(p), nil
}
func (w *countingWriter) Flush() {}

// sampleHeap watches the Go heap in use every 50 ms until stop is called; peak is valid after.
func sampleHeap() (before uint64, peak *uint64, stop func()) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before = ms.HeapInuse
	max := before
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > max {
					max = ms.HeapInuse
				}
			}
		}
	}()
	return before, &max, func() { close(done); <-finished }
}

// cpuTime is the CPU time (user and system) this process used so far; the database server's
// own CPU (PostgreSQL) is not in it.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clearPeakRSS resets VmHWM to the current RSS (Linux: "5" to /proc/self/clear_refs).
func clearPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS (%v): the growth is measured from the process's start", err)
	}
}

// procStatus reads a kB figure of /proc/self/status.
func procStatus(b *testing.B, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
