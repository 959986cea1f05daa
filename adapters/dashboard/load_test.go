package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// loadPages are the signed-in pages the load test renders, each in turn.
var loadPages = []string{
	"/app/forms",
	"/app/settings/api-keys",
	"/app/settings/members",
	"/app/settings/billing",
	"/app/settings/audit-log",
	"/app/settings/profile",
}

// TestDashboardLoad renders every signed-in dashboard page with 16 signed-in people at once
// (16 sessions, one goroutine and one keep-alive connection each) against the real router over
// real persistence, and prints p50/p99 per page. It runs only with FORMWARD_BENCH_DASHBOARD=1
// (make bench-dashboard); FORMWARD_BENCH_ROUNDS sets how many times each person walks through
// the pages (default 40: 16 × 40 = 640 requests per page); FORMWARD_BENCH_CPUPROFILE=file writes
// a CPU profile of the measured part to file.sqlite and file.postgres. It asserts only that every page
// answers 200: timings are recorded in docs/performance.md, never asserted.
//
// Passwords are hashed with the production argon2id parameters, so a hash or a verification
// in the request path would show in the figures.
func TestDashboardLoad(t *testing.T) {
	if os.Getenv("FORMWARD_BENCH_DASHBOARD") != "1" {
		t.Skip("set FORMWARD_BENCH_DASHBOARD=1 (make bench-dashboard)")
	}
	rounds := 40
	if s := os.Getenv("FORMWARD_BENCH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("FORMWARD_BENCH_ROUNDS=%q", s)
		}
		rounds = n
	}
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			d.Passwords = crypto.NewPasswordHasher()
		})
		people := seedWorkspace(t, h)
		const users = 16
		if len(people) != users {
			t.Fatalf("%d signed-in people, want %d", len(people), users)
		}
		for _, b := range people {
			b.client.Transport = &http.Transport{MaxIdleConnsPerHost: 1}
			for _, p := range loadPages { // warm-up, not counted
				b.get(p).expect(t, http.StatusOK)
			}
		}

		samples := make([][]time.Duration, len(loadPages))
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make(chan error, users)
		if out := os.Getenv("FORMWARD_BENCH_CPUPROFILE"); out != "" {
			f, err := os.Create(out + "." + path.Base(t.Name()))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				t.Fatal(err)
			}
			defer pprof.StopCPUProfile()
		}
		cpu0 := cpuTime(t)
		start := time.Now()
		for i, b := range people {
			wg.Add(1)
			go func(i int, b *browser) {
				defer wg.Done()
				local := make([][]time.Duration, len(loadPages))
				for r := 0; r < rounds; r++ {
					for j := range loadPages {
						k := (i + j) % len(loadPages) // each person starts on a different page
						d, err := timedGet(b, loadPages[k])
						if err != nil {
							errs <- err
							return
						}
						local[k] = append(local[k], d)
					}
				}
				mu.Lock()
				for k := range local {
					samples[k] = append(samples[k], local[k]...)
				}
				mu.Unlock()
			}(i, b)
		}
		wg.Wait()
		elapsed := time.Since(start)
		cpu := cpuTime(t) - cpu0
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		total := 0
		fmt.Printf("dashboard load, %s: %d sessions, %d requests per page\n", dialect(t), users, users*rounds)
		fmt.Printf("%-26s %8s %8s %8s %8s\n", "page", "p50_ms", "p90_ms", "p99_ms", "max_ms")
		for k, s := range samples {
			total += len(s)
			sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
			fmt.Printf("%-26s %8.1f %8.1f %8.1f %8.1f\n", loadPages[k], ms(pct(s, 50)), ms(pct(s, 90)), ms(pct(s, 99)), ms(s[len(s)-1]))
		}
		fmt.Printf("%d requests in %.1f s: %.0f requests/s; CPU of this process (server and clients) %.2f ms per request, %.0f%% of one core; load average %s\n",
			total, elapsed.Seconds(), float64(total)/elapsed.Seconds(), ms(cpu)/float64(total), 100*cpu.Seconds()/elapsed.Seconds(), loadAverage())
	})
}

func dialect(t *testing.T) string { return path.Base(t.Name()) }

func timedGet(b *browser, path string) (time.Duration, error) {
	start := time.Now()
	resp, err := b.client.Get(b.h.server.URL + path)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %d", path, resp.StatusCode)
	}
	return d, nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	if i > 0 {
		i--
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// seedWorkspace makes a workspace the size of a busy team's: the owner and 15 admins (so every
// settings page shows to everyone), 5 open invitations, 30 forms, 20 API keys, and the audit
// events all of that wrote. It returns the 16 people's signed-in browsers.
func seedWorkspace(t *testing.T, h *harness) []*browser {
	t.Helper()
	owner := h.owner()
	people := []*browser{owner}
	for i := 1; i <= 15; i++ {
		people = append(people, h.member(owner, fmt.Sprintf("admin%02d@example.org", i), "admin"))
	}
	for i := 1; i <= 5; i++ {
		owner.postFollow("/app/settings/invitations", url.Values{"email": {fmt.Sprintf("pending%02d@example.org", i)}, "role": {"viewer"}})
	}
	for i := 1; i <= 20; i++ {
		owner.postFollow("/app/settings/api-keys", url.Values{"name": {fmt.Sprintf("Integration %02d", i)}, "scope": {"read-write"}})
	}
	token := ""
	for _, c := range owner.client.Jar.Cookies(mustURL(t, h.server.URL+"/app")) {
		if c.Name == dashboard.SessionCookie {
			token = c.Value
		}
	}
	sp, err := h.app.Queries.AuthenticateSession.Handle(context.Background(), accounts.AuthenticateSession{Token: token, IP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := auth.WithPrincipal(context.Background(), sp.Principal)
	for i := 1; i <= 30; i++ {
		_, err := h.app.Commands.CreateForm.Handle(ctx, forms.CreateForm{Draft: form.Draft{
			Name: fmt.Sprintf("Survey %02d", i),
			Fields: []form.FieldSpec{
				{Label: "Name", Type: "text", Required: true},
				{Label: "Email", Type: "email"},
				{Label: "Topics", Type: "checkbox", Options: []string{"sales", "support", "press"}},
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return people
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the machine's 1-minute load average, which says how much of the two cores the
// other processes took during the run.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(raw)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
