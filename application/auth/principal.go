// Package auth is who acts and what they may do: the principal (an API key or a signed-in
// member, in one workspace), its permissions, and Require, which every use case calls first
// (Load requires, then reads one item of the principal's workspace).
package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/ports"
)

// ErrUnauthenticated means the presented key is missing, malformed, unknown or revoked.
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden means the key is valid but its scope does not grant the permission an action needs.
var ErrForbidden = errors.New("you are not allowed to do this")

// SystemPrincipal is the server acting on its own in a workspace, as an owner: the operator's
// CLI (formward keys create / revoke). Only bootstrap uses it; requests never do.
func SystemPrincipal(workspaceID string) Principal {
	return Principal{WorkspaceID: workspaceID, Actor: audit.System, Role: member.RoleOwner}
}

// Principal is who a request acts as: an API key (with a scope) or a signed-in member (with a
// role), in one workspace. Both are checked against the same permission model (domain/access).
type Principal struct {
	WorkspaceID string
	// Actor is who the audit log names: the key or the user.
	Actor audit.Actor
	// KeyID is the API key's ID, empty for a signed-in member.
	KeyID string
	// Scope is the API key's scope, empty for a signed-in member.
	Scope apikey.Scope
	// Role is the member's role, empty for an API key.
	Role member.Role
	// SessionID is the dashboard session, empty for an API key.
	SessionID string
	// IPHash is the keyed hash of the client's address, for the audit log.
	IPHash string
}

// Allows reports whether the principal holds the permission, through its role or its scope.
func (p Principal) Allows(perm access.Permission) bool {
	if p.Role != "" {
		return p.Role.Allows(perm)
	}
	return p.Scope.Allows(perm)
}

// Require returns ErrForbidden unless the principal holds the permission: reading needs
// access.Read, changing access.Write, account management access.ManageAccount.
func (p Principal) Require(perm access.Permission) error {
	if !p.Allows(perm) {
		if p.Role != "" {
			return fmt.Errorf("%w: the %s role does not grant %s", ErrForbidden, p.Role, perm)
		}
		return fmt.Errorf("%w: %s needs %s", ErrForbidden, p.Scope, perm)
	}
	return nil
}

type principalKey struct{}

// WithPrincipal returns a context that carries who acts. Adapters set it once per request
// (from the API key or the dashboard session); use cases read it with require.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns who acts in ctx; ok is false when nobody was set.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Require fails closed: without a principal in ctx, or one without the permission, the use
// case refuses with ErrForbidden.
func Require(ctx context.Context, perm access.Permission) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return Principal{}, fmt.Errorf("%w: no principal", ErrForbidden)
	}
	return p, p.Require(perm)
}

// Getter reads one item of a workspace by ID, as the repositories' Get does.
type Getter[T any] interface {
	Get(ctx context.Context, workspaceID, id string) (T, error)
}

// Load requires perm, then reads the item id of the principal's workspace from items, so the
// workspace always comes from the principal: domain.ErrNotFound when it has no such item.
func Load[T any](ctx context.Context, perm access.Permission, items Getter[T], id string) (Principal, T, error) {
	p, err := Require(ctx, perm)
	if err != nil {
		var none T
		return p, none, err
	}
	item, err := items.Get(ctx, p.WorkspaceID, id)
	return p, item, err
}

// AuditEvent records an action of the principal in its workspace; the repository that makes
// the change writes it in the same transaction. details hold no secret and no respondent data.
func (p Principal) AuditEvent(ids ports.IDs, now time.Time, action audit.Action, target *audit.Target, details map[string]any) (audit.Event, error) {
	return audit.New(ids.New(ports.PrefixAudit), p.WorkspaceID, action, p.Actor, target, p.IPHash, details, now)
}
