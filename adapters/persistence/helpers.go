package persistence

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/ports"
)

// Row lock strengths on PostgreSQL. NO KEY UPDATE serialises updates of a row without blocking
// inserts elsewhere whose foreign key check takes FOR KEY SHARE on it.
const (
	lockUpdate      = "UPDATE"
	lockNoKeyUpdate = "NO KEY UPDATE"
)

// lockedUpdate is the shape of every Update: in one write transaction it loads the row of R
// matching where, locked against concurrent updates (FOR <strength> on PostgreSQL; on SQLite
// the write transaction, BEGIN IMMEDIATE, already serialises writers), and hands it to apply,
// which changes the aggregate and writes it with tx. A missing row gives domain.ErrNotFound
// (as "load <what>"); an error from apply rolls everything back and is returned as is.
func lockedUpdate[R any](ctx context.Context, db *DB, strength, what string, apply func(tx *gorm.DB, row R) error, where string, args ...any) error {
	return db.tx(ctx, func(tx *gorm.DB) error {
		q := tx.Where(where, args...)
		if db.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: strength})
		}
		var row R
		if err := q.Take(&row).Error; err != nil {
			return mapErr("load "+what, err)
		}
		return apply(tx, row)
	})
}

// updateLocked is the whole of most Updates, in lockedUpdate's transaction: toDomain rebuilds
// the aggregate from the locked row, change modifies it, save writes it with tx, and the effects
// change returns are written with it (as writeEffects does for what). It returns the changed
// aggregate; when change fails nothing is written and its error is returned as is.
func updateLocked[R, A any](ctx context.Context, db *DB, c ports.Cipher, strength, what string,
	toDomain func(context.Context, R) (A, error), change func(A) (ports.Effects, error), save func(tx *gorm.DB, a A) error,
	where string, args ...any) (A, error) {
	var updated A
	err := lockedUpdate(ctx, db, strength, what, func(tx *gorm.DB, row R) error {
		a, err := toDomain(ctx, row)
		if err != nil {
			return err
		}
		fx, err := change(a)
		if err != nil {
			return err
		}
		if err := save(tx, a); err != nil {
			return err
		}
		if err := writeEffects(ctx, tx, c, what, fx); err != nil {
			return err
		}
		updated = a
		return nil
	}, where, args...)
	if err != nil {
		var none A
		return none, err
	}
	return updated, nil
}

// allToDomain rebuilds the aggregate of each row with toDomain, in order; the first failure
// is returned.
func allToDomain[R, A any](ctx context.Context, rows []R, toDomain func(context.Context, R) (A, error)) ([]A, error) {
	out := make([]A, 0, len(rows))
	for _, row := range rows {
		a, err := toDomain(ctx, row)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// newestFirst reads one page of rows of q in keyset order: newest first by (timeColumn, id),
// strictly after page.After, at most page.Limit (callers ask for one more than they show, to
// know whether a next page exists).
func newestFirst[R any](q *gorm.DB, page ports.Page, timeColumn, what string) ([]R, error) {
	if page.Limit <= 0 {
		return nil, nil
	}
	if page.After != nil {
		q = q.Where("("+timeColumn+", id) < (?, ?)", toMillis(page.After.CreatedAt), page.After.ID)
	}
	var rows []R
	if err := q.Order(timeColumn + " DESC, id DESC").Limit(page.Limit).Find(&rows).Error; err != nil {
		return nil, mapErr("list "+what, err)
	}
	return rows, nil
}

// idList is a list of IDs passed to SQL as one argument, a JSON array, rather than as one bound
// parameter each: a batch of a thousand IDs costs one bind instead of a thousand, and the
// statement text (and so its prepared statement) does not depend on the batch's size. It selects
// one column, id. Use it as
// "IN (" + idList(tx) + ")" with jsonIDs(ids) as the argument.
func idList(db *gorm.DB) string {
	if db.Dialector.Name() == DialectPostgres {
		return "SELECT json_array_elements_text(CAST(? AS json)) AS id"
	}
	return "SELECT value AS id FROM json_each(?)"
}

// jsonIDs is the argument of idList.
func jsonIDs(ids []string) string {
	if len(ids) == 0 {
		return "[]"
	}
	b, _ := jsoncodec.Marshal(ids) // strings always marshal
	return string(b)
}
