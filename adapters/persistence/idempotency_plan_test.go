package persistence

import (
	"strings"
	"testing"
)

// Deleting submissions finds the keys that created them through idempotency_keys_submission_idx
// (migration 00160), on SQLite: the probe over a batch's range of IDs, the update of its
// keys, and the search for keys whose submission went with a form or a workspace.
func TestForgettingResponsesUsesTheSubmissionIndexOnSQLite(t *testing.T) {
	db := migratedSQLite(t)
	for name, q := range map[string]string{
		"the probe":             strings.ReplaceAll(probeResponsesSQL, "?", "'x'"),
		"the update":            strings.NewReplacer("?", "'x'", "json_each('x')", `json_each('["a","b"]')`).Replace(forgetResponsesSQL(db.gorm)),
		"the orphans of a form": strings.ReplaceAll(forgetOrphanedResponsesSQL, "?", "'x'"),
	} {
		all := strings.Join(queryPlan(t, db, q), "\n")
		if !strings.Contains(all, "INDEX idempotency_keys_submission_idx (workspace_id=? AND submission_id") {
			t.Errorf("%s does not seek idempotency_keys_submission_idx; plan:\n%s", name, all)
		}
	}
}
