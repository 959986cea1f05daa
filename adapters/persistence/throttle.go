package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// SignInThrottle counts failed sign-ins per subject in the database, so every process sees the
// same window.
type SignInThrottle struct{ db *DB }

var _ ports.SignInThrottle = (*SignInThrottle)(nil)

// NewSignInThrottle returns the sign-in throttle store.
func NewSignInThrottle(db *DB) *SignInThrottle { return &SignInThrottle{db: db} }

// Failures returns how many failures the subject had strictly after since, and the oldest of
// them (zero when none).
func (s *SignInThrottle) Failures(ctx context.Context, subject string, since time.Time) (int, time.Time, error) {
	var row struct {
		N      int64  `gorm:"column:n"`
		Oldest *int64 `gorm:"column:oldest"`
	}
	err := s.db.read(ctx).Raw("SELECT COUNT(*) AS n, MIN(at) AS oldest FROM sign_in_failures WHERE subject = ? AND at > ?",
		subject, toMillis(since)).Scan(&row).Error
	if err != nil {
		return 0, time.Time{}, mapErr("count sign-in failures", err)
	}
	if row.N == 0 || row.Oldest == nil {
		return 0, time.Time{}, nil
	}
	return int(row.N), fromMillis(*row.Oldest), nil
}

// RecordFailure notes one failure at the time for each subject.
func (s *SignInThrottle) RecordFailure(ctx context.Context, at time.Time, subjects ...string) error {
	if len(subjects) == 0 {
		return nil
	}
	ms := toMillis(at)
	return s.db.tx(ctx, func(tx *gorm.DB) error {
		for _, subject := range subjects {
			if err := tx.Exec("INSERT INTO sign_in_failures (subject, at) VALUES (?, ?)", subject, ms).Error; err != nil {
				return mapErr("record sign-in failure", err)
			}
		}
		return nil
	})
}

// Purge forgets the failures older than the time.
func (s *SignInThrottle) Purge(ctx context.Context, before time.Time) error {
	return s.db.write(ctx, func(db *gorm.DB) error {
		return mapErr("purge sign-in failures", db.Exec("DELETE FROM sign_in_failures WHERE at < ?", toMillis(before)).Error)
	})
}
