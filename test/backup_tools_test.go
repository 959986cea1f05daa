package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// TestServeOnPostgresWithoutClientTools starts `formward serve` on PostgreSQL where the
// PostgreSQL client tools cannot be found, as in the distroless image: an empty PATH and
// FORMWARD_PG_DUMP / FORMWARD_PG_RESTORE naming paths that do not exist (this machine has the
// tools in /usr/lib/postgresql, which serve would otherwise find). With scheduled backups off it
// starts and answers; with them on it starts too, and the scheduled backup is logged as failed,
// naming the setting, and counted as formward_backups_total{outcome="error"}.
func TestServeOnPostgresWithoutClientTools(t *testing.T) {
	t.Parallel()
	in := newInstance(t, freshPostgresDatabase(t), randomMasterKey(t))
	in.setEnv("PATH", t.TempDir())
	in.setEnv("FORMWARD_PG_DUMP", "/nonexistent/pg_dump")
	in.setEnv("FORMWARD_PG_RESTORE", "/nonexistent/pg_restore")
	metricsAddr := freeAddr(t)
	in.setEnv("FORMWARD_METRICS_ADDR", metricsAddr)

	in.setEnv("FORMWARD_BACKUP_INTERVAL", "0")
	in.startServe()
	if got := scrape(t, metricsAddr).sum("formward_backups_total", "outcome", "error"); got != 0 {
		t.Errorf("backups off: formward_backups_total{outcome=\"error\"} = %v, want 0", got)
	}
	in.stopServe()

	in.setEnv("FORMWARD_BACKUP_INTERVAL", "24h")
	in.startServe()
	eventually(t, 30*time.Second, "the failed scheduled backup to be counted", func() bool {
		return scrape(t, metricsAddr).sum("formward_backups_total", "outcome", "error") >= 1
	})
	in.stopServe()
	logs := in.logs.String()
	if !strings.Contains(logs, "scheduled backup failed") || !strings.Contains(logs, "FORMWARD_PG_DUMP") {
		t.Errorf("the failed backup is not logged with the setting that names pg_dump:\n%s", logs)
	}
}
