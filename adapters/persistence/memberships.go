package persistence

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/ports"
)

// MembershipRepository stores who belongs to which workspace, with which role.
type MembershipRepository struct{ db *DB }

var _ ports.MembershipRepository = (*MembershipRepository)(nil)

// NewMembershipRepository returns the membership repository.
func NewMembershipRepository(db *DB) *MembershipRepository { return &MembershipRepository{db: db} }

// Create stores m with its audit events; a second membership of the same user in the same
// workspace gives member.ErrAlreadyMember, an unknown user or workspace domain.ErrNotFound.
func (r *MembershipRepository) Create(ctx context.Context, m *member.Membership, events ...audit.Event) error {
	row := membershipFromDomain(m)
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return accountErr("create membership", err)
		}
		return writeAudit(tx, events)
	})
}

// Get returns one membership of the workspace with its user, or domain.ErrNotFound.
func (r *MembershipRepository) Get(ctx context.Context, workspaceID, id string) (ports.Member, error) {
	db := r.db.read(ctx)
	var row membershipRow
	if err := db.Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&row).Error; err != nil {
		return ports.Member{}, mapErr("get membership", err)
	}
	return withUser(db, row)
}

func withUser(db *gorm.DB, row membershipRow) (ports.Member, error) {
	var u userRow
	if err := db.Where("id = ?", row.UserID).Take(&u).Error; err != nil {
		return ports.Member{}, mapErr("load member's user", err)
	}
	usr, err := u.toDomain()
	if err != nil {
		return ports.Member{}, err
	}
	return ports.Member{Membership: row.toDomain(), User: usr}, nil
}

// Find returns the user's membership of the workspace or domain.ErrNotFound.
func (r *MembershipRepository) Find(ctx context.Context, workspaceID, userID string) (*member.Membership, error) {
	var row membershipRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND user_id = ?", workspaceID, userID).Take(&row).Error; err != nil {
		return nil, mapErr("find membership", err)
	}
	return row.toDomain(), nil
}

// List returns one page of the workspace's members, oldest first: at most page.Limit, strictly
// after page.After in (created_at, id) order.
func (r *MembershipRepository) List(ctx context.Context, workspaceID string, page ports.Page) ([]ports.Member, error) {
	if page.Limit <= 0 {
		return nil, nil
	}
	db := r.db.read(ctx)
	q := db.Where("workspace_id = ?", workspaceID)
	if page.After != nil {
		q = q.Where("(created_at, id) > (?, ?)", toMillis(page.After.CreatedAt), page.After.ID)
	}
	var rows []membershipRow
	if err := q.Order("created_at, id").Limit(page.Limit).Find(&rows).Error; err != nil {
		return nil, mapErr("list members", err)
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.UserID
	}
	users, err := usersByID(db, ids)
	if err != nil {
		return nil, err
	}
	out := make([]ports.Member, 0, len(rows))
	for _, row := range rows {
		u, ok := users[row.UserID]
		if !ok {
			continue // deleted in between: the membership went with it (cascade)
		}
		out = append(out, ports.Member{Membership: row.toDomain(), User: u})
	}
	return out, nil
}

// ForUser returns every workspace the user belongs to, oldest membership first.
func (r *MembershipRepository) ForUser(ctx context.Context, userID string) ([]ports.WorkspaceMembership, error) {
	db := r.db.read(ctx)
	var rows []membershipRow
	if err := db.Where("user_id = ?", userID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, mapErr("list user's memberships", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.WorkspaceID
	}
	var wrows []workspaceRow
	if err := db.Where("id IN ?", ids).Find(&wrows).Error; err != nil {
		return nil, mapErr("load user's workspaces", err)
	}
	byID := make(map[string]workspaceRow, len(wrows))
	for _, w := range wrows {
		byID[w.ID] = w
	}
	out := make([]ports.WorkspaceMembership, 0, len(rows))
	for _, row := range rows {
		w, ok := byID[row.WorkspaceID]
		if !ok {
			continue
		}
		out = append(out, ports.WorkspaceMembership{Membership: row.toDomain(), Workspace: w.toDomain()})
	}
	return out, nil
}

// lockMembers runs fn in a write transaction holding every membership row of the workspace:
// FOR UPDATE on PostgreSQL (in ID order, so lockers never deadlock), the write transaction
// itself on SQLite. fn gets the membership id (domain.ErrNotFound when it is not among them)
// and the number of owners, both as they are under the lock.
func (r *MembershipRepository) lockMembers(ctx context.Context, workspaceID, id string, fn func(tx *gorm.DB, row membershipRow, owners int) error) error {
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		q := tx.Where("workspace_id = ?", workspaceID).Order("id")
		if r.db.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: lockUpdate})
		}
		var rows []membershipRow
		if err := q.Find(&rows).Error; err != nil {
			return mapErr("lock memberships", err)
		}
		owners, found := 0, -1
		for i, row := range rows {
			if member.Role(row.Role) == member.RoleOwner {
				owners++
			}
			if row.ID == id {
				found = i
			}
		}
		if found < 0 {
			return domain.ErrNotFound
		}
		return fn(tx, rows[found], owners)
	})
}

// Update locks the workspace's memberships, passes change the membership and the number of
// owners, and stores the new role with the effects change returns (audit events only).
func (r *MembershipRepository) Update(ctx context.Context, workspaceID, id string, change func(m *member.Membership, owners int) (ports.Effects, error)) (ports.Member, error) {
	var out ports.Member
	err := r.lockMembers(ctx, workspaceID, id, func(tx *gorm.DB, row membershipRow, owners int) error {
		m := row.toDomain()
		fx, err := change(m, owners)
		if err != nil {
			return err
		}
		if err := tx.Exec("UPDATE memberships SET role = ? WHERE id = ?", string(m.Role()), id).Error; err != nil {
			return mapErr("update membership", err)
		}
		if err := writeEffects(ctx, tx, nil, "membership", fx); err != nil {
			return err
		}
		row.Role = string(m.Role())
		out, err = withUser(tx, row)
		return err
	})
	if err != nil {
		return ports.Member{}, err
	}
	return out, nil
}

// Delete locks as Update does, lets check refuse, then removes the membership, the user's
// sessions in that workspace and their column choices there, with the audit events check returns.
func (r *MembershipRepository) Delete(ctx context.Context, workspaceID, id string, check func(m *member.Membership, owners int) ([]audit.Event, error)) error {
	return r.lockMembers(ctx, workspaceID, id, func(tx *gorm.DB, row membershipRow, owners int) error {
		events, err := check(row.toDomain(), owners)
		if err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM memberships WHERE id = ?", id).Error; err != nil {
			return mapErr("delete membership", err)
		}
		if err := tx.Exec("DELETE FROM sessions WHERE user_id = ? AND workspace_id = ?", row.UserID, workspaceID).Error; err != nil {
			return mapErr("end removed member's sessions", err)
		}
		if err := tx.Exec("DELETE FROM response_columns WHERE user_id = ? AND workspace_id = ?", row.UserID, workspaceID).Error; err != nil {
			return mapErr("forget removed member's columns", err)
		}
		return writeAudit(tx, events)
	})
}

// Count returns the number of members of the workspace.
func (r *MembershipRepository) Count(ctx context.Context, workspaceID string) (int64, error) {
	var n int64
	if err := r.db.read(ctx).Model(&membershipRow{}).Where("workspace_id = ?", workspaceID).Count(&n).Error; err != nil {
		return 0, mapErr("count members", err)
	}
	return n, nil
}
