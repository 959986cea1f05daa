package persistence

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// UserRepository stores the people who sign in to the dashboard.
type UserRepository struct{ db *DB }

var _ ports.UserRepository = (*UserRepository)(nil)

// NewUserRepository returns the user repository.
func NewUserRepository(db *DB) *UserRepository { return &UserRepository{db: db} }

// Create stores u, with its first membership when m is not nil, and the audit events, in one
// transaction. A taken email gives user.ErrEmailTaken, a taken OpenID subject
// user.ErrIdentityTaken, a taken ID domain.ErrConflict; a membership of an unknown workspace
// gives domain.ErrNotFound.
func (r *UserRepository) Create(ctx context.Context, u *user.User, m *member.Membership, events ...audit.Event) error {
	row, err := userFromDomain(u)
	if err != nil {
		return err
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		return createUser(tx, row, m, events)
	})
}

func createUser(tx *gorm.DB, row userRow, m *member.Membership, events []audit.Event) error {
	if err := tx.Create(&row).Error; err != nil {
		return accountErr("create user", err)
	}
	if m != nil {
		mrow := membershipFromDomain(m)
		if err := tx.Create(&mrow).Error; err != nil {
			return accountErr("create membership", err)
		}
	}
	return writeAudit(tx, events)
}

// Get returns the user or domain.ErrNotFound.
func (r *UserRepository) Get(ctx context.Context, id string) (*user.User, error) {
	return r.take(ctx, "get user", "id = ?", id)
}

// FindByEmail returns the user with the (normalised) email or domain.ErrNotFound.
func (r *UserRepository) FindByEmail(ctx context.Context, email string) (*user.User, error) {
	return r.take(ctx, "find user by email", "email = ?", strings.ToLower(strings.TrimSpace(email)))
}

// FindByOIDCSubject returns the user linked to the subject or domain.ErrNotFound.
func (r *UserRepository) FindByOIDCSubject(ctx context.Context, subject string) (*user.User, error) {
	if subject == "" {
		return nil, domain.ErrNotFound
	}
	return r.take(ctx, "find user by oidc subject", "oidc_subject = ?", subject)
}

func (r *UserRepository) take(ctx context.Context, what, where string, args ...any) (*user.User, error) {
	var row userRow
	if err := r.db.read(ctx).Where(where, args...).Take(&row).Error; err != nil {
		return nil, mapErr(what, err)
	}
	return row.toDomain()
}

// Count returns how many users exist.
func (r *UserRepository) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := r.db.read(ctx).Model(&userRow{}).Count(&n).Error; err != nil {
		return 0, mapErr("count users", err)
	}
	return n, nil
}

// Update locks the user's row, lets change modify the user, and stores it with the effects
// change returns (audit events only), in one transaction. An email taken by someone else gives user.ErrEmailTaken.
func (r *UserRepository) Update(ctx context.Context, id string, change func(*user.User) (ports.Effects, error)) (*user.User, error) {
	var out *user.User
	err := lockedUpdate(ctx, r.db, lockNoKeyUpdate, "user", func(tx *gorm.DB, row userRow) error {
		u, err := row.toDomain()
		if err != nil {
			return err
		}
		fx, err := change(u)
		if err != nil {
			return err
		}
		next, err := userFromDomain(u)
		if err != nil {
			return err
		}
		if err := tx.Model(&userRow{}).Where("id = ?", id).Select("*").Updates(&next).Error; err != nil {
			return accountErr("update user", err)
		}
		out = u
		return writeEffects(ctx, tx, nil, "user", fx)
	}, "id = ?", id)
	return out, err
}

// usersByID loads the users with the IDs, keyed by ID.
func usersByID(db *gorm.DB, ids []string) (map[string]*user.User, error) {
	out := make(map[string]*user.User, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []userRow
	if err := db.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, mapErr("load users", err)
	}
	for _, row := range rows {
		u, err := row.toDomain()
		if err != nil {
			return nil, err
		}
		out[u.ID()] = u
	}
	return out, nil
}
