package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/backup"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// BackupConfig is where backups and the tombstone log go and how often serve takes them
// (adapters/backup).
type BackupConfig struct {
	BackupDir       string
	BackupInterval  time.Duration
	BackupRetention time.Duration
	PGDump          string
	PGRestore       string
}

// tombstoneShipInterval is how often serve copies the tombstones the database recorded to the
// log beside the backups even when no commit of this process signalled any (another process's
// deletions, or a copy that failed).
const tombstoneShipInterval = 5 * time.Second

// bindBackup registers the backup settings (serve and the backup commands).
func bindBackup(b *binder, c *Config) {
	b.String(&c.BackupDir, "backup-dir", "", "directory of the backups and the tombstone log (default <data dir>/backups); with S3 configured they go under backups/ in the bucket instead")
	b.Duration(&c.BackupInterval, "backup-interval", 24*time.Hour, "how often serve takes a backup; 0 turns scheduled backups off")
	b.Duration(&c.BackupRetention, "backup-retention", backup.MaxRetention, "how long backups are kept, at most 720h (30 days)")
	b.String(&c.PGDump, "pg-dump", "", "pg_dump to use with PostgreSQL, looked up when a backup runs (default: pg_dump on the PATH, else in the newest /usr/lib/postgresql/*/bin)")
	b.String(&c.PGRestore, "pg-restore", "", "pg_restore to use with PostgreSQL, looked up when a verify or restore runs (default: found like pg_dump)")
}

func (c BackupConfig) validate(v *validator) {
	v.check(c.BackupInterval >= 0, "backup-interval", "must be 0 (off) or a positive duration such as 24h")
	v.check(c.BackupRetention > 0 && c.BackupRetention <= backup.MaxRetention, "backup-retention",
		"must be a positive duration of at most 720h (30 days): a deletion must reach every backup within 30 days")
}

// newBackups builds the backup service of the configuration: the bucket when S3 is
// configured, else the backup directory.
func newBackups(ctx context.Context, cfg Config, ring *crypto.Keyring, clock ports.Clock) (*backup.Backups, error) {
	var (
		store backup.Store
		log   ports.Tombstones
	)
	if cfg.S3Endpoint != "" {
		s3, err := objectstore.NewS3(ctx, objectstore.S3Config{
			Endpoint: cfg.S3Endpoint, Bucket: cfg.S3Bucket, AccessKey: cfg.S3AccessKey, SecretKey: cfg.S3SecretKey,
			Region: cfg.S3Region, UseSSL: cfg.S3UseSSL, CAFile: cfg.S3CAFile,
		})
		if err != nil {
			return nil, fmt.Errorf("backup storage: %w", err)
		}
		bucket := backup.NewBucket(s3)
		store, log = bucket, backup.NewStoreTombstones(bucket, clock)
	} else {
		root := cfg.BackupDir
		if root == "" {
			root = filepath.Join(cfg.DataDir, "backups")
		}
		dir, err := backup.NewDir(root)
		if err != nil {
			return nil, err
		}
		local, err := backup.NewLocalTombstones(dir.Root(), clock)
		if err != nil {
			return nil, err
		}
		store, log = dir, local
	}
	bcfg := backup.Config{Store: store, Tombstones: log, Keyring: ring, Clock: clock, Retention: cfg.BackupRetention,
		Database: persistence.Config{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir, MaxConns: cfg.DBMaxConns, GroupCommitMax: cfg.GroupCommitMax}}
	if cfg.DatabaseURL != "" {
		// Looked up when a backup runs, not here: serve starts without the tools, and a
		// scheduled backup that cannot find them is logged, counted and retried.
		bcfg.PGDump = backup.Tool{Path: cfg.PGDump, Setting: envName("pg-dump")}
		bcfg.PGRestore = backup.Tool{Path: cfg.PGRestore, Setting: envName("pg-restore")}
	}
	return backup.New(bcfg)
}

// startBackups runs serve's share of the backups: the tombstone shipper, always, and, when
// the interval is not 0, the scheduled backup and prune under the backup lease (one process
// at a time). The returned stop waits for both.
func startBackups(ctx context.Context, cfg Config, rt *Runtime) (stop func(), err error) {
	b, err := newBackups(ctx, cfg, rt.Keyring, rt.Clock)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	log := rt.Log.Named("backup")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.Shipper(rt.DB).Run(ctx, tombstoneShipInterval, rt.DB.TombstonesRecorded(), func(err error) {
			log.Warn("copying tombstones to the log failed; they stay in the database and are retried", zap.Error(err))
		})
	}()
	if cfg.BackupInterval > 0 {
		sched := backupSchedule{backups: b, db: rt.DB, lease: persistence.NewBackupLease(rt.DB), clock: rt.Clock,
			interval: cfg.BackupInterval, log: log, observe: rt.Metrics.ObserveBackup, wait: sleep}
		wg.Go(func() { sched.run(ctx) })
	}
	log.Info("backups", zap.String("to", b.Where()), zap.Duration("interval", cfg.BackupInterval), zap.Duration("retention", b.Retention()))
	return func() {
		cancel()
		wg.Wait()
		// The last deletions before the shutdown reach the log now, not at the next start.
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if _, err := b.Shipper(rt.DB).Ship(sctx); err != nil {
			log.Warn("copying tombstones to the log at shutdown failed; the next start copies them", zap.Error(err))
		}
	}, nil
}

// backupRetryMax bounds the wait after a failed scheduled backup.
const backupRetryMax = 10 * time.Minute

// backupSchedule takes serve's scheduled backups: it waits for the backup lease, then takes a
// backup whenever the newest one is interval old (at once when there is none), pruning after
// each. A backup that fails (the database, the store, or a PostgreSQL client tool missing) is
// logged with the reason, counted as formward_backups_total{outcome="error"} and retried after
// min(interval, 10m).
type backupSchedule struct {
	backups  *backup.Backups
	db       *persistence.DB
	lease    ports.Lease
	clock    ports.Clock
	interval time.Duration
	log      *zap.Logger
	// observe counts each scheduled backup by its outcome.
	observe func(err error)
	// wait waits d, or less when ctx ends first, and reports whether ctx is still live.
	wait func(ctx context.Context, d time.Duration) bool
}

func (s backupSchedule) run(ctx context.Context) {
	release, err := s.lease.Acquire(ctx)
	if err != nil {
		return
	}
	defer release()
	s.log.Info("backup lease acquired: this process takes the scheduled backups")
	wait := time.Duration(0)
	if list, err := s.backups.List(ctx); err == nil && len(list) > 0 {
		wait = max(0, list[0].CreatedAt.Add(s.interval).Sub(s.clock.Now()))
	}
	for s.wait(ctx, wait) {
		m, err := s.backups.Create(ctx, s.db)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.observe(err)
			wait = min(s.interval, backupRetryMax)
			s.log.Error("scheduled backup failed", zap.Error(err), zap.Duration("retry_in", wait))
			continue
		}
		s.observe(nil)
		s.log.Info("backup taken", zap.String("id", m.ID), zap.Int64("bytes", m.EncryptedSize))
		deleted, err := s.backups.Prune(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error("backup prune failed", zap.Error(err))
		} else if len(deleted) > 0 {
			s.log.Info("backups pruned", zap.Strings("ids", deleted))
		}
		wait = s.interval
	}
}

// sleep waits d, or less when ctx ends first; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (c *cli) backupCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "backup", Short: "Take, list, verify, restore and prune encrypted database backups"}
	withBackups := func(ctx context.Context, fn func(*Runtime, *backup.Backups) error) error {
		return c.withRuntime(ctx, func(rt *Runtime) error {
			b, err := newBackups(ctx, c.cfg, rt.Keyring, rt.Clock)
			if err != nil {
				return err
			}
			return fn(rt, b)
		})
	}
	create := &cobra.Command{Use: "create", Short: "Take a backup now; prints its manifest", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBackups(cmd.Context(), func(rt *Runtime, b *backup.Backups) error {
				m, err := b.Create(cmd.Context(), rt.DB)
				if err != nil {
					return err
				}
				return c.printJSON(m)
			})
		}}
	var asJSON bool
	list := &cobra.Command{Use: "list", Short: "List the backups, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBackups(cmd.Context(), func(_ *Runtime, b *backup.Backups) error {
				ms, err := b.List(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					if ms == nil {
						ms = []backup.Manifest{}
					}
					return c.printJSON(ms)
				}
				tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tCREATED\tDATABASE\tBYTES\tSUBMISSIONS")
				for _, m := range ms {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", m.ID, domain.FormatTime(m.CreatedAt), m.Database, m.EncryptedSize, m.Tables["submissions"])
				}
				return tw.Flush()
			})
		}}
	c.flags(list.Flags(), "backup-list-").Bool(&asJSON, "json", false, "print the manifests as JSON")
	verify := &cobra.Command{Use: "verify ID", Short: "Prove a backup decrypts and is complete, without restoring it", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBackups(cmd.Context(), func(_ *Runtime, b *backup.Backups) error {
				m, err := b.Verify(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				var rows int64
				for _, n := range m.Tables {
					rows += n
				}
				fmt.Fprintf(c.stdout, "backup %s verified: decrypts, %d bytes with SHA-256 %s, %d tables, %d rows as recorded\n",
					m.ID, m.Size, m.SHA256, len(m.Tables), rows)
				return nil
			})
		}}
	var yes bool
	restore := &cobra.Command{Use: "restore ID", Short: "Replace the database with a backup, then re-apply every deletion made since (stop the servers first)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.restore(cmd.Context(), args[0], yes)
		}}
	c.flags(restore.Flags(), "restore-").Bool(&yes, "yes", false, "confirm that the database is to be replaced by the backup")
	prune := &cobra.Command{Use: "prune", Short: "Delete the backups older than the retention; prints their IDs", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBackups(cmd.Context(), func(_ *Runtime, b *backup.Backups) error {
				deleted, err := b.Prune(cmd.Context())
				if err != nil {
					return err
				}
				if deleted == nil {
					deleted = []string{}
				}
				return c.printJSON(map[string]any{"deleted": deleted})
			})
		}}
	for _, sub := range []*cobra.Command{create, list, verify, restore, prune} {
		bindBackup(c.flags(sub.Flags(), ""), &c.cfg)
	}
	cmd.AddCommand(create, list, verify, restore, prune)
	return cmd
}

// restore runs without the runtime: the database it would open is the one being replaced.
func (c *cli) restore(ctx context.Context, id string, yes bool) error {
	if !yes {
		return errors.New("restore replaces the whole database with the backup (deletions made since are re-applied); " +
			"stop every formward process using it, then pass --yes (or FORMWARD_RESTORE_YES=true)")
	}
	dir, err := filepath.Abs(c.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if strings.TrimSpace(c.cfg.MasterKey) == "" && !exists(filepath.Join(dir, crypto.MasterKeyFile)) {
		return fmt.Errorf("restore needs the master key the backup was encrypted under: set FORMWARD_MASTER_KEY or put %s in %s",
			crypto.MasterKeyFile, dir)
	}
	log, flush, err := c.startLogger()
	if err != nil {
		return err
	}
	defer flush()
	ring, err := loadKeyring(c.cfg, log)
	if err != nil {
		return err
	}
	b, err := newBackups(ctx, c.cfg, ring, system.Clock{})
	if err != nil {
		return err
	}
	database := "sqlite " + filepath.Join(dir, persistence.SQLiteFile)
	if c.cfg.DatabaseURL != "" {
		database = "postgres " + redactedDatabase(c.cfg.DatabaseURL)
	}
	fmt.Fprintf(c.stderr, "formward: restoring backup %s from %s into %s\n", id, b.Where(), database)
	res, err := b.Restore(ctx, id)
	for _, w := range res.Warnings {
		fmt.Fprintln(c.stderr, "formward: warning:", w)
	}
	if err != nil {
		return err
	}
	return c.printJSON(map[string]any{
		"restored": res.Backup.ID, "backup_created_at": domain.FormatTime(res.Backup.CreatedAt),
		"tombstones_copied_before_restore": res.TombstonesShipped, "tombstones_read": res.TombstonesRead,
		"submissions_deleted": res.Reapplied.Submissions, "forms_deleted": res.Reapplied.Forms,
		"workspaces_deleted": res.Reapplied.Workspaces,
	})
}
