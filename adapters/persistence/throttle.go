package persistence

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// SignInThrottle counts the places attempts took per subject in the database, so every
// process sees the same window.
//
// Reserve counts and inserts in one write transaction, serialised per subject: on SQLite by
// the database's single writer (BEGIN IMMEDIATE), on PostgreSQL by a transaction advisory lock
// per subject, taken in sorted order so two attempts naming the same subjects cannot deadlock.
// Each count runs after the lock is held, so it sees every place committed before: the count
// is exact however many requests or processes race. A refusal is remembered per full subject
// (the latest time only), so Release can tell a burst from an honest last try.
type SignInThrottle struct{ db *DB }

var _ ports.SignInThrottle = (*SignInThrottle)(nil)

// NewSignInThrottle returns the sign-in throttle store.
func NewSignInThrottle(db *DB) *SignInThrottle { return &SignInThrottle{db: db} }

// Reserve takes one place at `at` for each subject under id when every subject has fewer than
// limit places strictly after since; otherwise it takes none and returns the time of the place
// whose leaving frees one.
func (s *SignInThrottle) Reserve(ctx context.Context, id string, at, since time.Time, limit int, subjects ...string) (bool, time.Time, error) {
	subjects = slices.Compact(slices.Sorted(slices.Values(subjects)))
	if len(subjects) == 0 {
		return true, time.Time{}, nil
	}
	sinceMS := toMillis(since)
	var (
		ok       bool
		freeFrom time.Time
		full     []string
	)
	err := s.db.tx(ctx, func(tx *gorm.DB) error {
		ok, freeFrom, full = true, time.Time{}, full[:0]
		if s.db.dialect == DialectPostgres {
			for _, subject := range subjects {
				if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "sign_in_failures/"+subject).Error; err != nil {
					return mapErr("lock sign-in failures", err)
				}
			}
		}
		for _, subject := range subjects {
			var n int64
			if err := tx.Raw("SELECT COUNT(*) FROM sign_in_failures WHERE subject = ? AND at > ?", subject, sinceMS).Scan(&n).Error; err != nil {
				return mapErr("count sign-in failures", err)
			}
			if n < int64(limit) {
				continue
			}
			ok = false
			full = append(full, subject)
			// The place that frees one when it leaves: the (n-limit+1)-th oldest.
			var freeAt int64
			err := tx.Raw("SELECT at FROM sign_in_failures WHERE subject = ? AND at > ? ORDER BY at LIMIT 1 OFFSET ?",
				subject, sinceMS, n-int64(max(limit, 0))).Scan(&freeAt).Error
			if err != nil {
				return mapErr("read sign-in failures", err)
			}
			if t := fromMillis(freeAt); t.After(freeFrom) {
				freeFrom = t
			}
		}
		ms := toMillis(at)
		if !ok {
			for _, subject := range full {
				err := tx.Exec(`INSERT INTO sign_in_refusals (subject, at) VALUES (?, ?)
					ON CONFLICT (subject) DO UPDATE SET at = CASE WHEN excluded.at > sign_in_refusals.at THEN excluded.at ELSE sign_in_refusals.at END`,
					subject, ms).Error
				if err != nil {
					return mapErr("record sign-in refusal", err)
				}
			}
			return nil
		}
		for _, subject := range subjects {
			if err := tx.Exec("INSERT INTO sign_in_failures (subject, at, attempt_id) VALUES (?, ?, ?)", subject, ms, id).Error; err != nil {
				return mapErr("record sign-in attempt", err)
			}
		}
		return nil
	})
	if err != nil {
		return false, time.Time{}, err
	}
	return ok, freeFrom, nil
}

// Release deletes the places taken under id and reports contested when one of their subjects
// refused an attempt at or after the time they were taken, or another attempt took a place on
// the watched subject after it (a later millisecond: times are kept in milliseconds).
func (s *SignInThrottle) Release(ctx context.Context, id, watched string) (bool, error) {
	if id == "" {
		return false, nil
	}
	var contested bool
	err := s.db.tx(ctx, func(tx *gorm.DB) error {
		var n int64
		err := tx.Raw(`SELECT
				(SELECT COUNT(*) FROM sign_in_failures f JOIN sign_in_refusals r ON r.subject = f.subject
					WHERE f.attempt_id = ? AND r.at >= f.at)
				+ (SELECT COUNT(*) FROM sign_in_failures f JOIN sign_in_failures o ON o.subject = f.subject
					WHERE f.attempt_id = ? AND f.subject = ? AND o.at > f.at)`,
			id, id, watched).Scan(&n).Error
		if err != nil {
			return mapErr("read sign-in refusals", err)
		}
		contested = n > 0
		return mapErr("give back sign-in attempt", tx.Exec("DELETE FROM sign_in_failures WHERE attempt_id = ?", id).Error)
	})
	if err != nil {
		return false, err
	}
	return contested, nil
}

// Purge forgets the places taken before the time.
func (s *SignInThrottle) Purge(ctx context.Context, before time.Time) error {
	return s.db.write(ctx, func(db *gorm.DB) error {
		if err := db.Exec("DELETE FROM sign_in_failures WHERE at < ?", toMillis(before)).Error; err != nil {
			return mapErr("purge sign-in failures", err)
		}
		return mapErr("purge sign-in refusals", db.Exec("DELETE FROM sign_in_refusals WHERE at < ?", toMillis(before)).Error)
	})
}
