package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/ports"
)

// serveRetentionRest paces serve's passes: after a deletion transaction during which captures
// were written, the next waits three times as long as the last held the writer, so captures
// have the writer at least three quarters of the time (as backups are paced); with no capture
// about it runs at full speed.
const serveRetentionRest = 3.0

// serveRetentionBatch is how many submissions one of serve's deletion transactions takes.
const serveRetentionBatch = 1000

// retentionJob runs the retention job every interval in the process that holds the retention
// lease (one at a time across every serve process), after backfilling the privacy index of
// submissions stored before it existed.
type retentionJob struct {
	app      *application.Application
	lease    ports.Lease
	interval time.Duration
	log      *zap.Logger
}

// start runs the job in the background until stop is called.
func (j retentionJob) start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		j.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

func (j retentionJob) run(ctx context.Context) {
	release, err := j.lease.Acquire(ctx)
	if err != nil {
		return // ctx ended while another process held the lease
	}
	defer release()
	j.log.Info("retention lease acquired: this process runs the retention job", zap.Duration("interval", j.interval))
	if n, err := j.app.Commands.ReindexPrivacy.Handle(ctx, workspace.ReindexPrivacy{}); err != nil {
		if !errors.Is(err, context.Canceled) {
			j.log.Warn("privacy index backfill stopped; it resumes at the next start", zap.Error(err))
		}
	} else if n > 0 {
		j.log.Info("privacy index backfilled", zap.Int("submissions", n))
	}
	t := time.NewTicker(j.interval)
	defer t.Stop()
	for {
		j.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (j retentionJob) pass(ctx context.Context) {
	start := time.Now()
	r, err := j.app.Commands.RunRetention.Handle(ctx, workspace.RunRetention{Rest: serveRetentionRest, Batch: serveRetentionBatch})
	if err != nil && ctx.Err() != nil {
		return
	}
	fields := []zap.Field{zap.Int64("submissions_deleted", r.SubmissionsDeleted), zap.Int64("files_deleted", r.FilesDeleted),
		zap.Int64("workspaces_deleted", r.WorkspacesDeleted), zap.Duration("took", time.Since(start))}
	if err != nil {
		j.log.Warn("retention pass failed; the next pass retries", append(fields, zap.Error(err))...)
		return
	}
	if r == (workspace.RetentionResult{}) {
		j.log.Debug("retention pass", fields...)
		return
	}
	j.log.Info("retention pass", fields...)
}

// startRetention starts serve's retention job unless FORMWARD_RETENTION_INTERVAL is 0.
func startRetention(cfg Config, rt *Runtime) (stop func()) {
	if cfg.RetentionInterval <= 0 {
		rt.Log.Info("retention job off (FORMWARD_RETENTION_INTERVAL=0)")
		return func() {}
	}
	return retentionJob{app: rt.App, lease: persistence.NewRetentionLease(rt.DB), interval: cfg.RetentionInterval,
		log: rt.Log.Named("retention")}.start()
}

func (c *cli) retentionCommand() *cobra.Command {
	r := &cobra.Command{Use: "retention", Short: "The retention job: plans' retention and pending deletions"}
	run := &cobra.Command{Use: "run", Short: "Run one retention pass now and print what it deleted as JSON", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				res, err := rt.App.Commands.RunRetention.Handle(cmd.Context(), workspace.RunRetention{})
				// What was deleted before a failure is reported too.
				fmt.Fprintf(c.stdout, "{\"submissions_deleted\": %d, \"files_deleted\": %d, \"workspaces_deleted\": %d}\n",
					res.SubmissionsDeleted, res.FilesDeleted, res.WorkspacesDeleted)
				return err
			})
		}}
	r.AddCommand(run)
	return r
}

func (c *cli) privacyCommand() *cobra.Command {
	p := &cobra.Command{Use: "privacy", Short: "Respondent privacy requests' index"}
	reindex := &cobra.Command{Use: "reindex", Short: "Build the email index of submissions stored before it existed or under another master key (resumable)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				n, err := rt.App.Commands.ReindexPrivacy.Handle(cmd.Context(), workspace.ReindexPrivacy{})
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "indexed %d submissions\n", n)
				return nil
			})
		}}
	p.AddCommand(reindex)
	return p
}
