package dashboard_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// responsesLoadPage is the page the responses load test compares with the first one.
const responsesLoadPage = 10_000

// TestResponsesTableLoad renders the responses table of one 10-field form holding
// FORMWARD_BENCH_RESPONSES_ROWS submissions (default 1,000,000, imported before the clock
// starts) on both databases: page 1, and page 10,000 reached through its keyset cursor (the
// link a person following "Next" 9,999 times would hold, at the page size the dashboard
// uses). One signed-in person requests the two pages in turn FORMWARD_BENCH_ROUNDS times each
// (default 200) after a warm-up, and it prints p50/p90/p99/max of each. It runs only with
// FORMWARD_BENCH_RESPONSES=1 (make bench-responses) and asserts only that the pages answer 200
// with the rows they should hold: timings are recorded in docs/performance.md, never asserted.
func TestResponsesTableLoad(t *testing.T) {
	if os.Getenv("FORMWARD_BENCH_RESPONSES") != "1" {
		t.Skip("set FORMWARD_BENCH_RESPONSES=1 (make bench-responses)")
	}
	n := envInt(t, "FORMWARD_BENCH_RESPONSES_ROWS", 1_000_000)
	rounds := envInt(t, "FORMWARD_BENCH_ROUNDS", 200)
	const pageSize = 25 // the dashboard's responsesPageSize
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		var subs *persistence.SubmissionRepository
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			subs = d.Submissions.(*persistence.SubmissionRepository)
		})
		owner := h.owner()
		ctx := context.Background()
		ws, err := persistence.NewWorkspaceRepository(db).Oldest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sys := auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID()))
		fv, err := h.app.Commands.CreateForm.Handle(sys, forms.CreateForm{
			Draft: form.Draft{Name: "Big form", Fields: persistencetest.TypicalFields()}})
		if err != nil {
			t.Fatal(err)
		}
		f := fv.Form

		// Submission i is received at at+i ms with ID id(i): newest first, page p (from 1) shows
		// submissions n-1-(p-1)·25 down to n-(p)·25.
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		id := persistencetest.TypicalID
		seedStart := time.Now()
		persistencetest.ImportTypical(t, subs, f, at, n)
		fmt.Printf("responses table load, %s: seeded %d submissions in %s\n", dialect(t), n, time.Since(seedStart).Round(time.Second))

		// The cursor of page p is the position of the last row of page p-1.
		cursor := func(p int) string {
			i := n - (p-1)*pageSize
			return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.Add(time.Duration(i)*time.Millisecond).UnixNano(), 10) + "." + id(i)))
		}
		far := min(responsesLoadPage, n/pageSize)
		if far < 2 {
			t.Fatalf("%d submissions make fewer than 2 pages", n)
		}
		base := "/app/forms/" + f.ID() + "/responses"
		pages := []struct {
			name, path string
			first      int // the newest submission the page shows
		}{
			{"page 1", base, n - 1},
			{fmt.Sprintf("page %d", far), base + "?after=" + cursor(far), n - 1 - (far-1)*pageSize},
		}
		// Page 1's Next link is the cursor the formula gives for page 2: the far page's link is the
		// one a person following Next would reach.
		first := owner.get(base).expect(t, http.StatusOK).body
		if m := nextLink.FindStringSubmatch(first); m == nil || !strings.Contains(html.UnescapeString(m[1]), "after="+cursor(2)) {
			t.Fatalf("page 1's next link %v, want after=%s", m, cursor(2))
		}
		for _, p := range pages {
			body := owner.get(p.path).expect(t, http.StatusOK).body
			rows := rowsOf(body)
			if len(rows) != pageSize || !strings.Contains(rows[0], id(p.first)) || !strings.Contains(rows[pageSize-1], id(p.first-pageSize+1)) {
				t.Fatalf("%s: %d rows, not %s down to %s", p.name, len(rows), id(p.first), id(p.first-pageSize+1))
			}
		}
		explainPage(t, db, ws.ID(), f.ID(), at.Add(time.Duration(n-(far-1)*pageSize)*time.Millisecond).UnixMilli(), id(n-(far-1)*pageSize), pageSize+1)
		for range 20 { // warm-up, not counted
			for _, p := range pages {
				if _, err := timedGet(owner, p.path); err != nil {
					t.Fatal(err)
				}
			}
		}
		samples := make([][]time.Duration, len(pages))
		cpu0 := cpuTime(t)
		for r := 0; r < rounds; r++ {
			for k, p := range pages {
				d, err := timedGet(owner, p.path)
				if err != nil {
					t.Fatal(err)
				}
				samples[k] = append(samples[k], d)
			}
		}
		cpu := cpuTime(t) - cpu0
		fmt.Printf("responses table load, %s: %d submissions, %d requests per page, one person\n", dialect(t), n, rounds)
		fmt.Printf("%-12s %8s %8s %8s %8s\n", "page", "p50_ms", "p90_ms", "p99_ms", "max_ms")
		for k, s := range samples {
			sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
			fmt.Printf("%-12s %8.1f %8.1f %8.1f %8.1f\n", pages[k].name, ms(pct(s, 50)), ms(pct(s, 90)), ms(pct(s, 99)), ms(s[len(s)-1]))
		}
		fmt.Printf("page %d / page 1 at p50: %.2f; CPU of this process %.2f ms per request; load average %s\n",
			far, float64(pct(samples[1], 50))/float64(pct(samples[0], 50)), ms(cpu)/float64(2*rounds), loadAverage())
	})
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		t.Fatalf("%s=%q", name, s)
	}
	return v
}

// explainPage prints the database's plan for the query of a keyset page (the one the
// submission repository runs for a page after a position, newest first).
func explainPage(t *testing.T, db *persistence.DB, workspaceID, formID string, afterMS int64, afterID string, limit int) {
	t.Helper()
	q := "SELECT * FROM submissions WHERE workspace_id = ? AND form_id = ? AND (submitted_at, id) < (?, ?) ORDER BY submitted_at DESC, id DESC LIMIT ?"
	explain := "EXPLAIN QUERY PLAN "
	if db.Dialect() == persistence.DialectPostgres {
		explain = "EXPLAIN (ANALYZE, BUFFERS) "
		q = "SELECT * FROM submissions WHERE workspace_id = $1 AND form_id = $2 AND (submitted_at, id) < ($3, $4) ORDER BY submitted_at DESC, id DESC LIMIT $5"
	}
	rows, err := db.SQL().QueryContext(context.Background(), explain+q, workspaceID, formID, afterMS, afterID, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("plan of a keyset page, %s:\n", dialect(t))
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("  %v\n", vals[len(vals)-1])
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
