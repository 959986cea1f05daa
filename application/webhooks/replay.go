package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// replayIDPrefix is the prefix of replay job IDs (rpl_…).
const replayIDPrefix = "rpl"

// StartReplay re-delivers to one webhook every retained event of a time range.
type StartReplay struct {
	WebhookID string
	Draft     webhook.ReplayDraft
}

// StartReplayHandler queues replays.
type StartReplayHandler struct {
	webhooks  ports.WebhookRepository
	replays   ports.ReplayRepository
	ids       ports.IDs
	clock     ports.Clock
	retention time.Duration
}

// NewStartReplayHandler makes the command; retention is how long published events are kept
// (FORMWARD_OUTBOX_RETENTION), the oldest a range may start. A replay runner (in the process
// that delivers webhooks) takes the job within its poll interval.
func NewStartReplayHandler(webhooks ports.WebhookRepository, replays ports.ReplayRepository, ids ports.IDs, clock ports.Clock,
	retention time.Duration) StartReplayHandler {
	return StartReplayHandler{webhooks: webhooks, replays: replays, ids: ids, clock: clock, retention: retention}
}

// Handle checks the range against the webhook and the retention and queues the job; a job of
// the same webhook still queued or running gives a conflict.
func (h StartReplayHandler) Handle(ctx context.Context, cmd StartReplay) (*webhook.Replay, error) {
	p, w, err := auth.Load(ctx, access.Write, h.webhooks, cmd.WebhookID)
	if err != nil {
		return nil, err
	}
	now := h.clock.Now()
	r, err := webhook.NewReplay(h.ids.New(replayIDPrefix), w, cmd.Draft, h.retention, now)
	if err != nil {
		return nil, err
	}
	types := make([]string, len(r.Types()))
	for i, t := range r.Types() {
		types[i] = string(t)
	}
	details := webhookDetails(w, nil)
	details["replay_id"], details["since"], details["until"], details["types"] = r.ID(), domain.FormatTime(r.Since()), domain.FormatTime(r.Until()), types
	e, err := p.AuditEvent(h.ids, now, audit.WebhookReplayStarted, webhookTarget(w), details)
	if err != nil {
		return nil, err
	}
	if err := h.replays.Create(ctx, r, e); err != nil {
		return nil, err
	}
	return r, nil
}

// GetReplay reads one replay job of a webhook.
type GetReplay struct {
	WebhookID, ID string
}

// GetReplayHandler reads replay jobs.
type GetReplayHandler struct {
	webhooks ports.WebhookRepository
	replays  ports.ReplayRepository
}

// NewGetReplayHandler makes the query.
func NewGetReplayHandler(webhooks ports.WebhookRepository, replays ports.ReplayRepository) GetReplayHandler {
	return GetReplayHandler{webhooks: webhooks, replays: replays}
}

// Handle returns the job with its progress; domain.ErrNotFound for a webhook not in the
// workspace.
func (h GetReplayHandler) Handle(ctx context.Context, q GetReplay) (*webhook.Replay, error) {
	p, _, err := auth.Load(ctx, access.Read, h.webhooks, q.WebhookID)
	if err != nil {
		return nil, err
	}
	return h.replays.Get(ctx, p.WorkspaceID, q.WebhookID, q.ID)
}

// ListReplays lists the replay jobs of a webhook, newest first.
type ListReplays struct {
	WebhookID string
	Page      ports.Page
}

// ListReplaysHandler lists replay jobs.
type ListReplaysHandler struct {
	webhooks ports.WebhookRepository
	replays  ports.ReplayRepository
}

// NewListReplaysHandler makes the query.
func NewListReplaysHandler(webhooks ports.WebhookRepository, replays ports.ReplayRepository) ListReplaysHandler {
	return ListReplaysHandler{webhooks: webhooks, replays: replays}
}

// Handle returns a page of jobs and whether more follow; domain.ErrNotFound for a webhook not
// in the workspace.
func (h ListReplaysHandler) Handle(ctx context.Context, q ListReplays) ([]*webhook.Replay, bool, error) {
	p, _, err := auth.Load(ctx, access.Read, h.webhooks, q.WebhookID)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*webhook.Replay, error) {
		return h.replays.List(ctx, p.WorkspaceID, q.WebhookID, page)
	})
}

// ReplayRunnerConfig tunes the replay runner.
type ReplayRunnerConfig struct {
	// Batch is the most events queued in one transaction (default 500).
	Batch int
	// Lease is how long a claimed job is hidden from other runners between two batches
	// (default 1 minute).
	Lease time.Duration
	// InFlight is the delivery engine's claim lease: a delivery due within it may be being
	// attempted and is not queued again.
	InFlight time.Duration
	// Poll is how often the runner looks for work it was not woken for (default 1 second).
	Poll time.Duration
	// Retention is how long published events are kept (FORMWARD_OUTBOX_RETENTION): a job
	// whose range starts earlier by the time it runs fails.
	Retention time.Duration
}

// ReplayRunner queues the deliveries of replay jobs, batch by batch, and ends the jobs whose
// deliveries are all settled. Several runners (one per worker process) share the jobs through
// the repository's claims; a job resumes from its cursor after a restart.
type ReplayRunner struct {
	replays  ports.ReplayRepository
	webhooks ports.WebhookRepository
	ids      ports.IDs
	clock    ports.Clock
	cfg      ReplayRunnerConfig
	// notify wakes the delivery engine of this process after a batch was queued.
	notify func()
}

// NewReplayRunner makes the runner; notify may be nil.
func NewReplayRunner(replays ports.ReplayRepository, webhooks ports.WebhookRepository, ids ports.IDs, clock ports.Clock,
	cfg ReplayRunnerConfig, notify func()) *ReplayRunner {
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	return &ReplayRunner{replays: replays, webhooks: webhooks, ids: ids, clock: clock, cfg: cfg, notify: notify}
}

// Run works until ctx ends; a failed step is retried at the next poll.
func (r *ReplayRunner) Run(ctx context.Context, failed func(error)) {
	t := time.NewTicker(r.cfg.Poll)
	defer t.Stop()
	for {
		if err := r.Step(ctx); err != nil && ctx.Err() == nil && failed != nil {
			failed(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Step queues the events of every job it can claim, then settles the jobs whose events are
// all queued.
func (r *ReplayRunner) Step(ctx context.Context) error {
	for {
		now := r.clock.Now()
		job, err := r.replays.Claim(ctx, now, r.cfg.Lease, now.Add(-r.cfg.Retention))
		if err != nil {
			return err
		}
		if job == nil {
			break
		}
		if err := r.queue(ctx, job); err != nil {
			return err
		}
	}
	return r.replays.Settle(ctx, r.clock.Now())
}

// queue walks the job's range from its cursor, a batch a transaction.
func (r *ReplayRunner) queue(ctx context.Context, job *ports.ReplayJob) error {
	rp := job.Replay
	w, err := r.webhooks.Get(ctx, rp.WorkspaceID(), rp.WebhookID())
	if errors.Is(err, domain.ErrNotFound) {
		return nil // deleted meanwhile: its replays went with it
	}
	if err != nil {
		return err
	}
	for job.Cursor < job.SeqTo {
		records, cursor, err := r.replays.Events(ctx, job, r.cfg.Batch)
		if err != nil {
			return err
		}
		now := r.clock.Now()
		ds := make([]*webhook.Delivery, 0, len(records))
		for _, rec := range records { // Events returns only what the job re-delivers
			e := rec.Event
			body, err := DeliveryBody(e)
			if err != nil {
				continue // never encodable (see HandleBatch)
			}
			d := webhook.NewEventDelivery(r.ids.New(deliveryIDPrefix), w, e, body, now)
			d.RestoreReplayID(rp.ID())
			ds = append(ds, d)
		}
		if err := r.replays.Queue(ctx, job, ds, cursor, now, r.cfg.Lease, r.cfg.InFlight); err != nil {
			return err
		}
		job.Cursor = cursor
		if len(ds) > 0 && r.notify != nil {
			r.notify()
		}
	}
	return nil
}
