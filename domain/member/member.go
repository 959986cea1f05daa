// Package member models a person's membership of a workspace: a role, and the rule that a
// workspace always keeps at least one owner.
package member

import (
	"errors"
	"slices"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
)

// Role is what a member may do in the workspace.
type Role string

// The four roles, from most to least powerful.
const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleEditor Role = "editor"
	RoleViewer Role = "viewer"
)

// ParseRole accepts one of the four role names.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleOwner, RoleAdmin, RoleEditor, RoleViewer:
		return r, nil
	}
	return "", domain.Validation("role", "invalid_value", "role must be one of owner, admin, editor, viewer")
}

// rolePermissions is what each role grants: an editor is like a read-write key, a viewer like a
// read-only key, an admin like an admin key, and an owner may also manage owners.
var rolePermissions = map[Role][]access.Permission{
	RoleViewer: {access.Read},
	RoleEditor: {access.Read, access.Write},
	RoleAdmin:  {access.Read, access.Write, access.ManageAccount},
	RoleOwner:  {access.Read, access.Write, access.ManageAccount, access.ManageOwners},
}

// Allows reports whether the role grants the permission.
func (r Role) Allows(p access.Permission) bool { return slices.Contains(rolePermissions[r], p) }

// ErrLastOwner means the change would leave the workspace without an owner.
var ErrLastOwner = domain.Conflict("a workspace keeps at least one owner: make another member owner first")

// ErrAlreadyMember means the person is a member of the workspace already.
var ErrAlreadyMember = domain.Conflict("this person is already a member of the workspace")

// ErrOwnersOnly means only an owner may grant, change or take away the owner role.
var ErrOwnersOnly = errors.New("only an owner may grant, change or remove an owner")

// Membership binds a user to a workspace with a role.
type Membership struct {
	id          string
	workspaceID string
	userID      string
	role        Role
	createdAt   time.Time
}

// New checks the role and builds a membership.
func New(id, workspaceID, userID string, role Role, now time.Time) (*Membership, error) {
	if _, err := ParseRole(string(role)); err != nil {
		return nil, err
	}
	if workspaceID == "" || userID == "" {
		return nil, domain.Validation("user_id", "required", "a membership names a workspace and a user")
	}
	return &Membership{id: id, workspaceID: workspaceID, userID: userID, role: role, createdAt: now.UTC()}, nil
}

// UnmarshalFromDatabase rebuilds a stored membership without re-checking it.
func UnmarshalFromDatabase(id, workspaceID, userID string, role Role, createdAt time.Time) *Membership {
	return &Membership{id: id, workspaceID: workspaceID, userID: userID, role: role, createdAt: createdAt.UTC()}
}

// ChangeRole gives the member a new role on behalf of actor. owners is the number of owners the
// workspace has now (read under the same lock). Only an owner may grant or take the owner role,
// and the last owner keeps it.
func (m *Membership) ChangeRole(to Role, actor access.Grant, owners int) error {
	if _, err := ParseRole(string(to)); err != nil {
		return err
	}
	if (to == RoleOwner || m.role == RoleOwner) && to != m.role && !actor.Allows(access.ManageOwners) {
		return ErrOwnersOnly
	}
	if m.role == RoleOwner && to != RoleOwner && owners <= 1 {
		return ErrLastOwner
	}
	m.role = to
	return nil
}

// CheckRemoval says whether actor may remove this membership; owners is the current number of
// owners of the workspace.
func (m *Membership) CheckRemoval(actor access.Grant, owners int) error {
	if m.role == RoleOwner && !actor.Allows(access.ManageOwners) {
		return ErrOwnersOnly
	}
	if m.role == RoleOwner && owners <= 1 {
		return ErrLastOwner
	}
	return nil
}

// ID returns the membership ID (prefix mem_).
func (m *Membership) ID() string { return m.id }

// WorkspaceID returns the workspace.
func (m *Membership) WorkspaceID() string { return m.workspaceID }

// UserID returns the member.
func (m *Membership) UserID() string { return m.userID }

// Role returns the member's role.
func (m *Membership) Role() Role { return m.role }

// CreatedAt returns when the person joined.
func (m *Membership) CreatedAt() time.Time { return m.createdAt }
