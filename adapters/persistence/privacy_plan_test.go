package persistence

import (
	"strings"
	"testing"
)

// On SQLite a privacy lookup reads the narrow index of email hashes in ID order, never the
// submissions table itself (whose rows carry the sealed answers): migration 00130 counts on it.
func TestPrivacyLookupReadsTheScanIndexOnSQLite(t *testing.T) {
	hash := make([]byte, 32)
	details := queryPlan(t, migratedSQLite(t), findByEmailSQL, hash, "wsp_x", hash, "wsp_x")
	all := strings.Join(details, "\n")
	if !strings.Contains(all, "SCAN s USING INDEX submissions_email_scan_idx") {
		t.Errorf("the lookup does not read submissions_email_scan_idx; plan:\n%s", all)
	}
	for _, d := range details {
		if d == "SCAN s" {
			t.Errorf("the lookup scans the submissions table; plan:\n%s", all)
		}
	}
}
