package persistence

import (
	"context"
	"strings"
	"testing"
)

// migratedSQLite opens a new SQLite database with every migration applied.
func migratedSQLite(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// queryPlan returns the lines of SQLite's EXPLAIN QUERY PLAN for q.
func queryPlan(t *testing.T, db *DB, q string, args ...any) []string {
	t.Helper()
	var plan []struct {
		Detail string `gorm:"column:detail"`
	}
	if err := db.read(context.Background()).Raw("EXPLAIN QUERY PLAN "+q, args...).Scan(&plan).Error; err != nil {
		t.Fatal(err)
	}
	details := make([]string, len(plan))
	for i, p := range plan {
		details[i] = strings.TrimSpace(p.Detail)
	}
	return details
}
