package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/ports"
)

// ListMembers reads a page of the principal's workspace's members.
type ListMembers struct{ Page ports.Page }

// ListMembersHandler lists members.
type ListMembersHandler struct{ members ports.MembershipRepository }

// NewListMembersHandler makes the query.
func NewListMembersHandler(members ports.MembershipRepository) ListMembersHandler {
	return ListMembersHandler{members: members}
}

// Handle returns up to Page.Limit members with their users and whether more exist.
func (h ListMembersHandler) Handle(ctx context.Context, q ListMembers) ([]ports.Member, bool, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]ports.Member, error) {
		return h.members.List(ctx, p.WorkspaceID, page)
	})
}

// ChangeMemberRole gives a member of the principal's workspace another role.
type ChangeMemberRole struct {
	ID   string
	Role string
}

// ChangeMemberRoleHandler changes roles and records member.role_changed.
type ChangeMemberRoleHandler struct {
	members ports.MembershipRepository
	ids     ports.IDs
	clock   ports.Clock
}

// NewChangeMemberRoleHandler makes the command.
func NewChangeMemberRoleHandler(members ports.MembershipRepository, ids ports.IDs, clock ports.Clock) ChangeMemberRoleHandler {
	return ChangeMemberRoleHandler{members: members, ids: ids, clock: clock}
}

// Handle changes the role under the lock on the workspace's memberships: the last owner keeps
// it (member.ErrLastOwner, a conflict), and only an owner grants or takes the owner role
// (ErrForbidden otherwise).
func (h ChangeMemberRoleHandler) Handle(ctx context.Context, cmd ChangeMemberRole) (ports.Member, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return ports.Member{}, err
	}
	to, err := member.ParseRole(cmd.Role)
	if err != nil {
		return ports.Member{}, err
	}
	return h.members.Update(ctx, p.WorkspaceID, cmd.ID, func(m *member.Membership, owners int) (ports.Effects, error) {
		from := m.Role()
		// The last owner keeps the role whoever asks: a conflict with the workspace, not a
		// question of permission.
		if from == member.RoleOwner && to != member.RoleOwner && owners <= 1 {
			return ports.Effects{}, member.ErrLastOwner
		}
		if err := m.ChangeRole(to, p, owners); err != nil {
			return ports.Effects{}, ownersOnly(err)
		}
		if from == to {
			return ports.Effects{}, nil
		}
		e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.MemberRoleChanged, &audit.Target{Type: "membership", ID: m.ID()},
			map[string]any{"user_id": m.UserID(), "from": string(from), "to": string(to)})
		if err != nil {
			return ports.Effects{}, err
		}
		return ports.Effects{Audit: []audit.Event{e}}, nil
	})
}

// RemoveMember ends a membership of the principal's workspace.
type RemoveMember struct{ ID string }

// RemoveMemberHandler removes members and records member.removed.
type RemoveMemberHandler struct {
	members ports.MembershipRepository
	ids     ports.IDs
	clock   ports.Clock
}

// NewRemoveMemberHandler makes the command.
func NewRemoveMemberHandler(members ports.MembershipRepository, ids ports.IDs, clock ports.Clock) RemoveMemberHandler {
	return RemoveMemberHandler{members: members, ids: ids, clock: clock}
}

// Handle removes the membership and every session of that person in the workspace; the last
// owner is never removed (a conflict), another owner only by an owner.
func (h RemoveMemberHandler) Handle(ctx context.Context, cmd RemoveMember) error {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return err
	}
	return h.members.Delete(ctx, p.WorkspaceID, cmd.ID, func(m *member.Membership, owners int) ([]audit.Event, error) {
		if m.Role() == member.RoleOwner && owners <= 1 {
			return nil, member.ErrLastOwner
		}
		if err := m.CheckRemoval(p, owners); err != nil {
			return nil, ownersOnly(err)
		}
		e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.MemberRemoved, &audit.Target{Type: "membership", ID: m.ID()},
			map[string]any{"user_id": m.UserID(), "role": string(m.Role())})
		if err != nil {
			return nil, err
		}
		return []audit.Event{e}, nil
	})
}

// ownersOnly turns the membership's owners-only rule into a refusal of the caller.
func ownersOnly(err error) error {
	if errors.Is(err, member.ErrOwnersOnly) {
		return fmt.Errorf("%w: %v", auth.ErrForbidden, err)
	}
	return err
}
