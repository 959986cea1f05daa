package persistence

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// ReplayRepository stores webhook replay jobs and walks the retained outbox rows for them.
type ReplayRepository struct {
	db         *DB
	outbox     *Outbox
	deliveries *DeliveryRepository
}

var _ ports.ReplayRepository = (*ReplayRepository)(nil)

// NewReplayRepository returns the replay repository; cipher opens the events and seals the
// bodies of the deliveries it queues.
func NewReplayRepository(db *DB, cipher ports.Cipher) *ReplayRepository {
	return &ReplayRepository{db: db, outbox: NewOutbox(db, cipher), deliveries: NewDeliveryRepository(db, cipher)}
}

type replayRow struct {
	ID           string  `gorm:"column:id;primaryKey"`
	WorkspaceID  string  `gorm:"column:workspace_id"`
	WebhookID    string  `gorm:"column:webhook_id"`
	Since        int64   `gorm:"column:since"`
	Until        int64   `gorm:"column:until"`
	Types        string  `gorm:"column:types"`
	Status       string  `gorm:"column:status"`
	SeqFrom      *int64  `gorm:"column:seq_from"`
	SeqTo        *int64  `gorm:"column:seq_to"`
	Cursor       int64   `gorm:"column:cursor"`
	Queued       int     `gorm:"column:queued"`
	EventsTotal  int     `gorm:"column:events_total"`
	EventsSent   int     `gorm:"column:events_sent"`
	EventsFailed int     `gorm:"column:events_failed"`
	ClaimedUntil *int64  `gorm:"column:claimed_until"`
	Error        *string `gorm:"column:error"`
	CreatedAt    int64   `gorm:"column:created_at"`
	UpdatedAt    int64   `gorm:"column:updated_at"`
	FinishedAt   *int64  `gorm:"column:finished_at"`
}

func (replayRow) TableName() string { return "webhook_replays" }

func (row replayRow) toDomain() (*webhook.Replay, error) {
	var types []event.Type
	if err := jsoncodec.Unmarshal([]byte(row.Types), &types); err != nil {
		return nil, fmt.Errorf("decode types of replay %s: %w", row.ID, err)
	}
	return webhook.UnmarshalReplayFromDatabase(row.ID, row.WorkspaceID, row.WebhookID, fromMillis(row.Since), fromMillis(row.Until), types,
		webhook.ReplayStatus(row.Status), row.EventsTotal, row.EventsSent, row.EventsFailed, fromMillis(row.CreatedAt),
		fromMillisPtr(row.FinishedAt), emptyIfNull(row.Error)), nil
}

// Create stores a queued job with its audit events.
func (r *ReplayRepository) Create(ctx context.Context, rp *webhook.Replay, events ...audit.Event) error {
	types, err := jsoncodec.Marshal(rp.Types())
	if err != nil {
		return fmt.Errorf("encode replay types: %w", err)
	}
	now := toMillis(rp.CreatedAt())
	row := replayRow{ID: rp.ID(), WorkspaceID: rp.WorkspaceID(), WebhookID: rp.WebhookID(), Since: toMillis(rp.Since()),
		Until: toMillis(rp.Until()), Types: string(types), Status: string(rp.Status()), CreatedAt: now, UpdatedAt: now}
	err = r.db.insertWithAudit(ctx, "create replay", &row, events)
	if errors.Is(err, domain.ErrConflict) {
		return domain.Conflict("a replay of this webhook is already queued or running: wait until it is done")
	}
	return err
}

// Get returns the job, its counts read from its deliveries while it runs.
func (r *ReplayRepository) Get(ctx context.Context, workspaceID, webhookID, id string) (*webhook.Replay, error) {
	var row replayRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND webhook_id = ? AND id = ?", workspaceID, webhookID, id).Take(&row).Error; err != nil {
		return nil, mapErr("get replay", err)
	}
	if row.Status == string(webhook.ReplayRunning) {
		c, err := replayCounts(r.db.read(ctx), row.ID)
		if err != nil {
			return nil, err
		}
		row.EventsSent, row.EventsFailed = c.sent, c.failed
	}
	return row.toDomain()
}

// List returns up to page.Limit jobs of the webhook, newest first.
func (r *ReplayRepository) List(ctx context.Context, workspaceID, webhookID string, page ports.Page) ([]*webhook.Replay, error) {
	q := r.db.read(ctx).Where("workspace_id = ? AND webhook_id = ?", workspaceID, webhookID)
	rows, err := newestFirst[replayRow](q, page, "created_at", "replays")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, func(_ context.Context, row replayRow) (*webhook.Replay, error) { return row.toDomain() })
}

// Claim takes the oldest job with events left to queue whose claim has run out.
func (r *ReplayRepository) Claim(ctx context.Context, now time.Time, lease time.Duration, retainedFrom time.Time) (*ports.ReplayJob, error) {
	// A read first: the runner asks every second, and on SQLite a transaction that may write
	// takes the one writer's slot, which captures wait for.
	var open []int
	if err := r.db.read(ctx).Raw("SELECT 1 FROM webhook_replays WHERE status IN ('queued', 'running') AND (seq_to IS NULL OR cursor < seq_to) LIMIT 1").
		Scan(&open).Error; err != nil {
		return nil, mapErr("claim replay", err)
	}
	if len(open) == 0 {
		return nil, nil
	}
	var job *ports.ReplayJob
	err := r.db.tx(ctx, func(tx *gorm.DB) error {
		q := tx.Where("status IN ('queued', 'running') AND (seq_to IS NULL OR cursor < seq_to) AND (claimed_until IS NULL OR claimed_until < ?)", toMillis(now)).
			Order("created_at, id").Limit(1)
		if tx.Dialector.Name() == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
		}
		var row replayRow
		if err := q.Take(&row).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil
			}
			return mapErr("claim replay", err)
		}
		var formID *string
		if err := tx.Raw("SELECT form_id FROM webhooks WHERE id = ?", row.WebhookID).Scan(&formID).Error; err != nil {
			return mapErr("claim replay", err)
		}
		if row.SeqTo == nil {
			if failed, err := r.start(tx, &row, emptyIfNull(formID), now, retainedFrom); err != nil || failed {
				return err
			}
		}
		claimed := toMillis(now.Add(lease))
		if err := tx.Exec("UPDATE webhook_replays SET status = 'running', claimed_until = ?, updated_at = ? WHERE id = ?",
			claimed, toMillis(now), row.ID).Error; err != nil {
			return mapErr("claim replay", err)
		}
		rp, err := row.toDomain()
		if err != nil {
			return err
		}
		job = &ports.ReplayJob{Replay: rp, SeqTo: *row.SeqTo, Cursor: row.Cursor, FormID: emptyIfNull(formID)}
		return nil
	})
	return job, err
}

// start finds the job's range of outbox rows and counts the events it re-delivers; a job that
// waited so long that its range's start is older than the retention (retainedFrom) fails
// instead, reported by failed: the purge may have taken some of its events.
func (r *ReplayRepository) start(tx *gorm.DB, row *replayRow, formID string, now, retainedFrom time.Time) (failed bool, err error) {
	if row.Since < toMillis(retainedFrom) {
		msg := "the events at the start of the range are no longer kept (FORMWARD_OUTBOX_RETENTION): start a replay from a later time"
		return true, mapErr("fail replay", tx.Exec("UPDATE webhook_replays SET status = 'failed', error = ?, finished_at = ?, updated_at = ? WHERE id = ?",
			msg, toMillis(now), toMillis(now), row.ID).Error)
	}
	from, to, err := outboxRange(tx, fromMillis(row.Since), fromMillis(row.Until))
	if err != nil {
		return false, err
	}
	var types []string
	if err := jsoncodec.Unmarshal([]byte(row.Types), &types); err != nil {
		return false, fmt.Errorf("decode types of replay %s: %w", row.ID, err)
	}
	q := tx.Table("outbox").Where("seq >= ? AND seq <= ? AND workspace_id = ? AND type IN ? AND created_at >= ? AND created_at < ? AND length(payload) > 0",
		from, to, row.WorkspaceID, types, row.Since, row.Until)
	if formID != "" {
		q = q.Where("form_id = ?", formID)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return false, mapErr("count replay events", err)
	}
	row.SeqFrom, row.SeqTo, row.Cursor, row.EventsTotal = &from, &to, from-1, int(total)
	return false, mapErr("start replay", tx.Exec("UPDATE webhook_replays SET seq_from = ?, seq_to = ?, cursor = ?, events_total = ? WHERE id = ?",
		from, to, from-1, total, row.ID).Error)
}

// Events returns the job's next events after its cursor and the last seq walked.
func (r *ReplayRepository) Events(ctx context.Context, job *ports.ReplayJob, limit int) ([]ports.OutboxRecord, int64, error) {
	rp := job.Replay
	return r.outbox.Read(ctx, job.Cursor, job.SeqTo, limit, ports.EventFilter{WorkspaceID: rp.WorkspaceID(), FormID: job.FormID,
		Types: rp.Types(), Since: rp.Since(), Until: rp.Until()})
}

// Queue stores the job's deliveries and its cursor in one transaction.
func (r *ReplayRepository) Queue(ctx context.Context, job *ports.ReplayJob, ds []*webhook.Delivery, cursor int64, now time.Time,
	lease, inFlight time.Duration) error {
	rows := make([]deliveryRow, 0, len(ds))
	for _, d := range ds {
		row, err := r.deliveries.toRow(ctx, d)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	rp := job.Replay
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		queued := 0
		if len(rows) > 0 {
			n, err := queueReplayed(tx, rp, rows, now, inFlight)
			if err != nil {
				return err
			}
			queued = n
		}
		return changedRow("advance replay", tx.Exec("UPDATE webhook_replays SET cursor = ?, queued = queued + ?, claimed_until = ?, updated_at = ? WHERE id = ?",
			cursor, queued, toMillis(now.Add(lease)), toMillis(now), rp.ID()))
	})
}

// queueReplayed stores the deliveries of a batch and returns how many it queued: the events
// whose submission was deleted since they were read are dropped (their rows are locked on
// PostgreSQL until this commits, so a deletion waits for it and then finds the deliveries); an
// event the webhook already has a delivery of queues that delivery again.
func queueReplayed(tx *gorm.DB, rp *webhook.Replay, rows []deliveryRow, now time.Time, inFlight time.Duration) (int, error) {
	eventIDs := make([]string, len(rows))
	for i, row := range rows {
		eventIDs[i] = row.EventID
	}
	lock := ""
	if tx.Dialector.Name() == DialectPostgres {
		lock = " FOR SHARE"
	}
	var alive []string
	if err := tx.Raw("SELECT id FROM outbox WHERE id IN ("+idList(tx)+") AND length(payload) > 0"+lock, jsonIDs(eventIDs)).Scan(&alive).Error; err != nil {
		return 0, mapErr("queue replay", err)
	}
	var existing []struct {
		ID            string
		EventID       string
		Status        string
		NextAttemptAt *int64
	}
	if err := tx.Raw("SELECT id, event_id, status, next_attempt_at FROM deliveries WHERE webhook_id = ? AND event_id IN ("+idList(tx)+")",
		rp.WebhookID(), jsonIDs(alive)).Scan(&existing).Error; err != nil {
		return 0, mapErr("queue replay", err)
	}
	have := make(map[string]bool, len(existing))
	var again, tagOnly []string
	busy := toMillis(now.Add(inFlight))
	for _, d := range existing {
		have[d.EventID] = true
		if d.Status == string(webhook.StatusPending) && d.NextAttemptAt != nil && *d.NextAttemptAt <= busy {
			tagOnly = append(tagOnly, d.ID) // due or being attempted: it goes out anyway
		} else {
			again = append(again, d.ID)
		}
	}
	var fresh []deliveryRow
	for _, row := range rows {
		if slices.Contains(alive, row.EventID) && !have[row.EventID] {
			fresh = append(fresh, row)
		}
	}
	ms := toMillis(now)
	if len(again) > 0 {
		if err := tx.Exec("UPDATE deliveries SET status = 'pending', cycle = 0, next_attempt_at = ?, updated_at = ?, replay_id = ? WHERE id IN ("+idList(tx)+")",
			ms, ms, rp.ID(), jsonIDs(again)).Error; err != nil {
			return 0, mapErr("queue replay", err)
		}
	}
	if len(tagOnly) > 0 {
		if err := tx.Exec("UPDATE deliveries SET replay_id = ? WHERE id IN ("+idList(tx)+")", rp.ID(), jsonIDs(tagOnly)).Error; err != nil {
			return 0, mapErr("queue replay", err)
		}
	}
	if len(fresh) > 0 {
		err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "webhook_id"}, {Name: "event_id"}}, DoNothing: true}).Create(&fresh).Error
		if err != nil {
			return 0, mapErr("queue replay", err)
		}
	}
	return len(again) + len(tagOnly) + len(fresh), nil
}

type replayCount struct{ pending, sent, failed int }

// replayCounts counts the job's deliveries by status.
func replayCounts(db *gorm.DB, id string) (replayCount, error) {
	var rows []struct {
		Status string
		N      int
	}
	if err := db.Raw("SELECT status, COUNT(*) AS n FROM deliveries WHERE replay_id = ? GROUP BY status", id).Scan(&rows).Error; err != nil {
		return replayCount{}, mapErr("count replay deliveries", err)
	}
	var c replayCount
	for _, row := range rows {
		switch webhook.Status(row.Status) {
		case webhook.StatusPending:
			c.pending = row.N
		case webhook.StatusDelivered:
			c.sent = row.N
		case webhook.StatusUndeliverable:
			c.failed = row.N
		}
	}
	return c, nil
}

// Settle updates the counts of the running jobs whose events are all queued and ends those
// with no delivery pending.
func (r *ReplayRepository) Settle(ctx context.Context, now time.Time) error {
	var ids []string
	if err := r.db.read(ctx).Raw("SELECT id FROM webhook_replays WHERE status = 'running' AND seq_to IS NOT NULL AND cursor >= seq_to").
		Scan(&ids).Error; err != nil {
		return mapErr("settle replays", err)
	}
	for _, id := range ids {
		c, err := replayCounts(r.db.read(ctx), id)
		if err != nil {
			return err
		}
		ms := toMillis(now)
		q, args := "UPDATE webhook_replays SET events_sent = ?, events_failed = ?, updated_at = ? WHERE id = ? AND status = 'running'",
			[]any{c.sent, c.failed, ms, id}
		if c.pending == 0 {
			// Done: the total is what was queued (events deleted since the start are not sent).
			q, args = "UPDATE webhook_replays SET status = 'done', events_total = queued, events_sent = ?, events_failed = ?, finished_at = ?, updated_at = ? WHERE id = ? AND status = 'running'",
				[]any{c.sent, c.failed, ms, ms, id}
		}
		if err := r.db.write(ctx, func(db *gorm.DB) error { return mapErr("settle replay", db.Exec(q, args...).Error) }); err != nil {
			return err
		}
	}
	return nil
}
