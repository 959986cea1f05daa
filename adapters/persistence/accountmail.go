package persistence

import (
	"context"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// AccountMailOutbox is the account_mail table: account mail waiting to be sent after the
// request that asked for it was answered. The payload arrives sealed and is stored as it is.
type AccountMailOutbox struct{ db *DB }

var _ ports.AccountMailOutbox = (*AccountMailOutbox)(nil)

// NewAccountMailOutbox returns the account mail outbox.
func NewAccountMailOutbox(db *DB) *AccountMailOutbox { return &AccountMailOutbox{db: db} }

type accountMailRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	Kind          string `gorm:"column:kind"`
	Payload       []byte `gorm:"column:payload"`
	Attempts      int    `gorm:"column:attempts"`
	NextAttemptAt int64  `gorm:"column:next_attempt_at"`
	CreatedAt     int64  `gorm:"column:created_at"`
}

func (accountMailRow) TableName() string { return "account_mail" }

// Add stores m due at its creation time.
func (o *AccountMailOutbox) Add(ctx context.Context, m ports.QueuedAccountMail) error {
	return o.db.write(ctx, func(db *gorm.DB) error {
		err := db.Exec("INSERT INTO account_mail (id, kind, payload, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
			m.ID, m.Kind, m.Payload, m.Attempts, toMillis(m.CreatedAt), toMillis(m.CreatedAt)).Error
		return mapErr("queue account mail", err)
	})
}

// Claim moves the next attempt of up to limit due rows to now+lease and returns them, oldest
// first. On PostgreSQL FOR UPDATE SKIP LOCKED lets concurrent senders claim disjoint rows; on
// SQLite the single write transaction does the same.
func (o *AccountMailOutbox) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]ports.QueuedAccountMail, error) {
	if limit <= 0 {
		return nil, nil
	}
	nowMS, leaseMS := toMillis(now), toMillis(now.Add(lease))
	// Senders look every second and mostly find nothing: a read says so without taking the
	// writer (SQLite's one writer is the captures' too).
	var due []string
	if err := o.db.read(ctx).Raw("SELECT id FROM account_mail WHERE next_attempt_at <= ? LIMIT 1", nowMS).Scan(&due).Error; err != nil {
		return nil, mapErr("look for due account mail", err)
	}
	if len(due) == 0 {
		return nil, nil
	}
	var rows []accountMailRow
	err := o.db.tx(ctx, func(tx *gorm.DB) error {
		if o.db.dialect == DialectPostgres {
			return tx.Raw(`UPDATE account_mail SET next_attempt_at = ? WHERE id IN (
				SELECT id FROM account_mail WHERE next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING *`,
				leaseMS, nowMS, limit).Scan(&rows).Error
		}
		var ids []string
		err := tx.Raw("SELECT id FROM account_mail WHERE next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?", nowMS, limit).Scan(&ids).Error
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := tx.Exec("UPDATE account_mail SET next_attempt_at = ? WHERE id IN ?", leaseMS, ids).Error; err != nil {
			return err
		}
		return tx.Where("id IN ?", ids).Find(&rows).Error
	})
	if err != nil {
		return nil, mapErr("claim account mail", err)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].CreatedAt != rows[j].CreatedAt {
			return rows[i].CreatedAt < rows[j].CreatedAt
		}
		return rows[i].ID < rows[j].ID
	})
	out := make([]ports.QueuedAccountMail, len(rows))
	for i, r := range rows {
		out[i] = ports.QueuedAccountMail{ID: r.ID, Kind: r.Kind, Payload: r.Payload, Attempts: r.Attempts, CreatedAt: fromMillis(r.CreatedAt)}
	}
	return out, nil
}

// Retry makes the row due again at the time.
func (o *AccountMailOutbox) Retry(ctx context.Context, id string, attempts int, at time.Time) error {
	return o.db.write(ctx, func(db *gorm.DB) error {
		err := db.Exec("UPDATE account_mail SET attempts = ?, next_attempt_at = ? WHERE id = ?", attempts, toMillis(at), id).Error
		return mapErr("reschedule account mail", err)
	})
}

// Delete removes the row; a row already gone is no error.
func (o *AccountMailOutbox) Delete(ctx context.Context, id string) error {
	return o.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("forget account mail", db.Exec("DELETE FROM account_mail WHERE id = ?", id).Error)
	})
}
