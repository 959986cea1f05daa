package persistence

import (
	"context"
	"strings"
	"testing"
)

// On SQLite a form's submissions are indexed by time in ascending order (migration 00150:
// captures append to it), and every query that walks them in time order, either way, reads
// that index without sorting. A retention batch's delete, which names the form too, seeks its
// IDs instead of walking the form.
func TestSubmissionTimeQueriesReadTheAscendingIndexOnSQLite(t *testing.T) {
	db := migratedSQLite(t)
	var cols []struct {
		Name string `gorm:"column:name"`
		Desc int    `gorm:"column:desc"`
		Key  int    `gorm:"column:key"`
	}
	if err := db.read(context.Background()).Raw("PRAGMA index_xinfo('submissions_form_submitted_idx')").Scan(&cols).Error; err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range cols {
		if c.Key == 1 {
			keys = append(keys, c.Name)
			if c.Desc != 0 {
				t.Errorf("column %s of submissions_form_submitted_idx is descending", c.Name)
			}
		}
	}
	if strings.Join(keys, ",") != "form_id,submitted_at,id" {
		t.Errorf("submissions_form_submitted_idx is on %v", keys)
	}
	del := strings.NewReplacer("?", "'x'", "json_each('x')", `json_each('["a"]')`).Replace(deleteSubmissionsSQL(db.gorm))
	if plan := queryPlan(t, db, del); len(plan) == 0 || !strings.Contains(plan[0], "USING INDEX sqlite_autoindex_submissions_1 (id=?)") {
		t.Errorf("a retention batch's delete does not seek its IDs; plan: %q", plan)
	}
	for name, q := range map[string]string{
		"newest first, after a position": "SELECT * FROM submissions WHERE workspace_id = 'w' AND form_id = 'f' AND (submitted_at, id) < (1, 'x') ORDER BY submitted_at DESC, id DESC LIMIT 50",
		"the count rule's edge":          "SELECT submitted_at, id FROM submissions WHERE form_id = 'f' AND workspace_id = 'w' ORDER BY submitted_at DESC, id DESC LIMIT 1 OFFSET 99",
		"expired, oldest first":          "SELECT id, submitted_at FROM submissions WHERE form_id = 'f' AND workspace_id = 'w' AND submitted_at < 5 ORDER BY submitted_at, id LIMIT 1001",
	} {
		all := strings.Join(queryPlan(t, db, q), "\n")
		if !strings.Contains(all, "USING INDEX submissions_form_submitted_idx") || strings.Contains(all, "TEMP B-TREE") {
			t.Errorf("%s: not read in the index's order; plan:\n%s", name, all)
		}
	}
}

// The due counts the metrics read at every scrape search the partial indexes of unfinished
// deliveries and runs: their cost follows the backlog, never the history kept.
func TestDueCountsReadThePartialIndexesOnSQLite(t *testing.T) {
	db := migratedSQLite(t)
	for q, index := range map[string]string{deliveriesDueSQL: "deliveries_due_idx", runsDueSQL: "runs_due_idx"} {
		all := strings.Join(queryPlan(t, db, q, 1), "\n")
		if !strings.Contains(all, "USING COVERING INDEX "+index) && !strings.Contains(all, "USING INDEX "+index) {
			t.Errorf("%s: does not search %s; plan:\n%s", q, index, all)
		}
	}
}
