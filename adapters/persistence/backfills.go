package persistence

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// BackfillStore keeps the progress of event backfills.
type BackfillStore struct{ db *DB }

var _ ports.BackfillStore = (*BackfillStore)(nil)

// NewBackfillStore returns the store.
func NewBackfillStore(db *DB) *BackfillStore { return &BackfillStore{db: db} }

type eventBackfillRow struct {
	ID         string  `gorm:"column:id;primaryKey"`
	Topic      string  `gorm:"column:topic"`
	Scope      string  `gorm:"column:scope"`
	FormID     *string `gorm:"column:form_id"`
	AfterAt    *int64  `gorm:"column:after_at"`
	AfterID    *string `gorm:"column:after_id"`
	Published  int64   `gorm:"column:published"`
	Status     string  `gorm:"column:status"`
	StartedAt  int64   `gorm:"column:started_at"`
	UpdatedAt  int64   `gorm:"column:updated_at"`
	FinishedAt *int64  `gorm:"column:finished_at"`
}

func (eventBackfillRow) TableName() string { return "event_backfills" }

// Running returns the unfinished backfill of topic and scope, or nil.
func (s *BackfillStore) Running(ctx context.Context, topic, scope string) (*ports.Backfill, error) {
	var row eventBackfillRow
	err := s.db.read(ctx).Where("topic = ? AND scope = ? AND status = 'running'", topic, scope).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr("read backfill", err)
	}
	b := &ports.Backfill{ID: row.ID, Topic: row.Topic, Scope: row.Scope, FormID: emptyIfNull(row.FormID), Published: row.Published,
		StartedAt: fromMillis(row.StartedAt)}
	if row.AfterAt != nil && row.AfterID != nil {
		b.After = &ports.Position{CreatedAt: fromMillis(*row.AfterAt), ID: *row.AfterID}
	}
	return b, nil
}

// Start records a new backfill.
func (s *BackfillStore) Start(ctx context.Context, b *ports.Backfill) error {
	now := toMillis(b.StartedAt)
	err := s.db.insert(ctx, "start backfill", &eventBackfillRow{ID: b.ID, Topic: b.Topic, Scope: b.Scope, Status: "running", StartedAt: now, UpdatedAt: now})
	if errors.Is(err, domain.ErrConflict) {
		return domain.Conflict("a backfill of " + b.Scope + " to " + b.Topic + " is already running")
	}
	return err
}

// Save records the backfill's progress.
func (s *BackfillStore) Save(ctx context.Context, b *ports.Backfill, now time.Time) error {
	var at *int64
	var id *string
	if b.After != nil {
		ms := toMillis(b.After.CreatedAt)
		at, id = &ms, &b.After.ID
	}
	return s.db.write(ctx, func(db *gorm.DB) error {
		return changedRow("save backfill", db.Exec("UPDATE event_backfills SET form_id = ?, after_at = ?, after_id = ?, published = ?, updated_at = ? WHERE id = ? AND status = 'running'",
			nullIfEmpty(b.FormID), at, id, b.Published, toMillis(now), b.ID))
	})
}

// Finish marks the backfill done, or abandoned.
func (s *BackfillStore) Finish(ctx context.Context, id string, done bool, now time.Time) error {
	status := "abandoned"
	if done {
		status = "done"
	}
	return s.db.write(ctx, func(db *gorm.DB) error {
		return changedRow("finish backfill", db.Exec("UPDATE event_backfills SET status = ?, finished_at = ?, updated_at = ? WHERE id = ? AND status = 'running'",
			status, toMillis(now), toMillis(now), id))
	})
}
