package persistence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// InvitationRepository stores invitations; only the hash of an accept token is kept.
type InvitationRepository struct{ db *DB }

var _ ports.InvitationRepository = (*InvitationRepository)(nil)

// NewInvitationRepository returns the invitation repository.
func NewInvitationRepository(db *DB) *InvitationRepository { return &InvitationRepository{db: db} }

// Create stores inv with its audit events; an unknown workspace gives domain.ErrNotFound.
func (r *InvitationRepository) Create(ctx context.Context, inv *invitation.Invitation, events ...audit.Event) error {
	row := invitationFromDomain(inv)
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return mapErr("create invitation", err)
		}
		return writeAudit(tx, events)
	})
}

// Get returns an invitation of the workspace or domain.ErrNotFound.
func (r *InvitationRepository) Get(ctx context.Context, workspaceID, id string) (*invitation.Invitation, error) {
	var row invitationRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&row).Error; err != nil {
		return nil, mapErr("get invitation", err)
	}
	return row.toDomain(), nil
}

// FindByToken returns the invitation whose token hashes to tokenHash or domain.ErrNotFound.
func (r *InvitationRepository) FindByToken(ctx context.Context, tokenHash []byte) (*invitation.Invitation, error) {
	var row invitationRow
	if err := r.db.read(ctx).Where("token_hash = ?", tokenHash).Take(&row).Error; err != nil {
		return nil, mapErr("find invitation", err)
	}
	return row.toDomain(), nil
}

// ListPending returns one page of the workspace's invitations that are neither accepted nor
// expired at now, newest first.
func (r *InvitationRepository) ListPending(ctx context.Context, workspaceID string, now time.Time, page ports.Page) ([]*invitation.Invitation, error) {
	q := r.db.read(ctx).Where("workspace_id = ? AND accepted_at IS NULL AND expires_at > ?", workspaceID, toMillis(now))
	rows, err := newestFirst[invitationRow](q, page, "created_at", "invitations")
	if err != nil {
		return nil, err
	}
	out := make([]*invitation.Invitation, len(rows))
	for i, row := range rows {
		out[i] = row.toDomain()
	}
	return out, nil
}

// Accept spends the invitation whose token hashes to tokenHash. In one write transaction it
// locks the invitation's row (FOR UPDATE on PostgreSQL; the write transaction on SQLite),
// loads the user who already has the invited email, and lets accept decide; accept spends the
// invitation (Invitation.Accept). Then it stores the acceptance time, the new user if any, the
// membership and the events. An unknown, spent or expired invitation gives
// invitation.ErrNotUsable, so of concurrent calls one succeeds and the others get that; a
// membership the person already has gives member.ErrAlreadyMember, an email taken meanwhile
// user.ErrEmailTaken.
func (r *InvitationRepository) Accept(ctx context.Context, tokenHash []byte, accept func(inv *invitation.Invitation, existing *user.User) (ports.InvitationAcceptance, error)) (ports.InvitationAcceptance, error) {
	var out ports.InvitationAcceptance
	err := r.db.tx(ctx, func(tx *gorm.DB) error {
		q := tx.Where("token_hash = ?", tokenHash)
		if r.db.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: lockNoKeyUpdate})
		}
		var row invitationRow
		if err := q.Take(&row).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return invitation.ErrNotUsable
			}
			return mapErr("lock invitation", err)
		}
		if row.AcceptedAt != nil {
			return invitation.ErrNotUsable
		}
		inv := row.toDomain()
		var existing *user.User
		var urow userRow
		switch err := tx.Where("email = ?", inv.Email()).Take(&urow).Error; {
		case err == nil:
			u, err := urow.toDomain()
			if err != nil {
				return err
			}
			existing = u
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return mapErr("load invited user", err)
		}
		acc, err := accept(inv, existing)
		if err != nil {
			return err
		}
		acceptedAt := inv.AcceptedAt()
		if acceptedAt == nil {
			return fmt.Errorf("accept invitation %s: the invitation was not spent", inv.ID())
		}
		res := tx.Exec("UPDATE invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL", toMillis(*acceptedAt), inv.ID())
		if res.Error != nil {
			return mapErr("spend invitation", res.Error)
		}
		if res.RowsAffected != 1 {
			return invitation.ErrNotUsable
		}
		if acc.NewUser != nil {
			urow, err := userFromDomain(acc.NewUser)
			if err != nil {
				return err
			}
			if err := tx.Create(&urow).Error; err != nil {
				return accountErr("create invited user", err)
			}
		}
		if acc.Membership != nil {
			mrow := membershipFromDomain(acc.Membership)
			if err := tx.Create(&mrow).Error; err != nil {
				return accountErr("create membership", err)
			}
		}
		if err := writeAudit(tx, acc.Events); err != nil {
			return err
		}
		out = acc
		return nil
	})
	if err != nil {
		return ports.InvitationAcceptance{}, err
	}
	return out, nil
}

// Delete withdraws a pending invitation with its audit events; an accepted or unknown one gives
// domain.ErrNotFound.
func (r *InvitationRepository) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if err := changedRow("delete invitation", tx.Exec("DELETE FROM invitations WHERE workspace_id = ? AND id = ? AND accepted_at IS NULL", workspaceID, id)); err != nil {
			return err
		}
		return writeAudit(tx, events)
	})
}
