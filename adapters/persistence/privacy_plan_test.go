package persistence

import (
	"context"
	"strings"
	"testing"
)

// On SQLite a privacy lookup reads the narrow index of email hashes in ID order, never the
// submissions table itself (whose rows carry the sealed answers): migration 00130 counts on it.
func TestPrivacyLookupReadsTheScanIndexOnSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var plan []struct {
		Detail string `gorm:"column:detail"`
	}
	hash := make([]byte, 32)
	if err := db.read(ctx).Raw("EXPLAIN QUERY PLAN "+findByEmailSQL, hash, "wsp_x", hash, "wsp_x").Scan(&plan).Error; err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, p := range plan {
		details = append(details, p.Detail)
	}
	all := strings.Join(details, "\n")
	if !strings.Contains(all, "SCAN s USING INDEX submissions_email_scan_idx") {
		t.Errorf("the lookup does not read submissions_email_scan_idx; plan:\n%s", all)
	}
	for _, d := range details {
		if strings.TrimSpace(d) == "SCAN s" {
			t.Errorf("the lookup scans the submissions table; plan:\n%s", all)
		}
	}
}
