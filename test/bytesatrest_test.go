package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBytesAtRestPerSubmission measures issue 28's "bytes at rest per submission" row: SQLite,
// a form of 10 text fields answered with ~80 characters each, one webhook that answers 200.
// It stores N submissions through the API, waits until the receiver got every delivery and the
// server recorded them, stops the server (a checkpoint) and prints the database's size and
// the bytes of each table and index (dbstat, through the sqlite3 command) divided by N. It only
// runs with FORMWARD_MEASURE_BYTES_AT_REST=1 (N from FORMWARD_MEASURE_N, default 2000).
func TestBytesAtRestPerSubmission(t *testing.T) {
	if os.Getenv("FORMWARD_MEASURE_BYTES_AT_REST") != "1" {
		t.Skip("set FORMWARD_MEASURE_BYTES_AT_REST=1 to measure")
	}
	n := 2000
	if v := os.Getenv("FORMWARD_MEASURE_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	in, rc := newPipelineInstance(t)
	key := in.cli("keys", "create", "--name", "bytes", "--scope", "admin")
	in.startServe()

	fields := make([]map[string]any, 10)
	for i := range fields {
		fields[i] = map[string]any{"label": fmt.Sprintf("Question %d", i+1), "type": "text", "required": true}
	}
	r := in.do("POST", "/v1/forms", key, map[string]any{"name": "Ten answers", "fields": fields})
	r.expect(t, http.StatusCreated)
	formID := r.str(t, "id")
	var ids []string
	for _, f := range objects(r.obj["fields"]) {
		ids = append(ids, f["id"].(string))
	}
	registerWebhook(t, in, key, rc.url("/ok"), formID, newSecret(t), "submission.created")

	answer := func(s, i int) string {
		v := fmt.Sprintf("submission %d answer %d: ", s, i)
		return v + strings.Repeat("lorem ipsum ", 7)[:80-len(v)]
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				data := map[string]any{}
				for i, id := range ids {
					data[id] = answer(s, i)
				}
				in.do("POST", "/v1/forms/"+formID+"/submissions", key, map[string]any{"data": data}).expect(t, http.StatusCreated)
			}
		}()
	}
	for s := range n {
		next <- s
	}
	close(next)
	wg.Wait()
	eventually(t, 120*time.Second, "every delivery received", func() bool { return len(rc.requests("/ok")) >= n })
	db := filepath.Join(in.dataDir, "formward.db")
	// The server records each delivery right after its answer: wait until none is pending.
	eventually(t, 30*time.Second, "every delivery recorded", func() bool {
		out, err := exec.Command("sqlite3", db, "SELECT COUNT(*) FROM deliveries WHERE status != 'delivered'").Output()
		return err == nil && strings.TrimSpace(string(out)) == "0"
	})
	in.stopServe()

	out, err := exec.Command("sqlite3", db, "PRAGMA wal_checkpoint(TRUNCATE);",
		"SELECT 'total', page_count * page_size FROM pragma_page_count, pragma_page_size;",
		"SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name HAVING SUM(pgsize) > 8192 ORDER BY 2 DESC;").CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	t.Logf("bytes at rest per submission (N=%d): pages, and the rows' own bytes in them", n)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 2 {
			continue
		}
		var pages, payload float64
		fmt.Sscan(cols[1], &pages)
		if len(cols) > 2 {
			fmt.Sscan(cols[2], &payload)
		}
		t.Logf("  %-34s %6.0f B %6.0f B", cols[0], pages/float64(n), payload/float64(n))
	}
}
