package persistence

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/user"
)

type violation int

const (
	noViolation violation = iota
	uniqueViolation
	foreignKeyViolation
)

// classify recognises constraint violations of both drivers.
func classify(err error) violation {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return uniqueViolation
		case "23503":
			return foreignKeyViolation
		}
		return noViolation
	}
	var sqErr sqlite3.Error
	if errors.As(err, &sqErr) {
		switch int(sqErr.ExtendedCode) {
		case 2067, 1555: // SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY
			return uniqueViolation
		case 787: // SQLITE_CONSTRAINT_FOREIGNKEY
			return foreignKeyViolation
		}
		// Without extended result codes the message still says which constraint failed.
		msg := sqErr.Error()
		switch {
		case strings.Contains(msg, "UNIQUE constraint failed"), strings.Contains(msg, "PRIMARY KEY constraint failed"):
			return uniqueViolation
		case strings.Contains(msg, "FOREIGN KEY constraint failed"):
			return foreignKeyViolation
		}
	}
	return noViolation
}

// uniqueOn names what a unique violation is about: PostgreSQL's constraint name, or SQLite's
// message (which lists the columns, "users.email"); "" for any other error.
func uniqueOn(err error) string {
	if classify(err) != uniqueViolation {
		return ""
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.ConstraintName
	}
	return err.Error()
}

// accountErr is mapErr for writes of users and memberships, whose unique keys a person can
// run into: an email address or a single sign-on identity taken by another account, a
// membership the person already has. Each says so (a *domain.ConflictError).
func accountErr(what string, err error) error {
	switch on := uniqueOn(err); {
	case strings.Contains(on, "oidc_subject"):
		return fmt.Errorf("%s: %w", what, user.ErrIdentityTaken)
	case strings.Contains(on, "email"):
		return fmt.Errorf("%s: %w", what, user.ErrEmailTaken)
	case strings.Contains(on, "user_id"):
		return fmt.Errorf("%s: %w", what, member.ErrAlreadyMember)
	}
	return mapErr(what, err)
}

// mapErr turns driver errors into domain errors: no rows → ErrNotFound, unique violation →
// ErrConflict, a missing parent (foreign key) → ErrNotFound. Anything else is wrapped with what.
func mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, sql.ErrNoRows) {
		return domain.ErrNotFound
	}
	switch classify(err) {
	case uniqueViolation:
		return fmt.Errorf("%s: %w", what, domain.ErrConflict)
	case foreignKeyViolation:
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, unavailable(err))
}

// changedRow checks the result of a statement that must change one row: a failure is mapped as
// what (see mapErr), and no row changed gives domain.ErrNotFound.
func changedRow(what string, res *gorm.DB) error {
	if res.Error != nil {
		return mapErr(what, res.Error)
	}
	if res.RowsAffected == 0 {
		return domain.ErrNotFound
	}
	return nil
}
