package application

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/formward/formward/domain"
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

// CreateAPIKey asks for a new key in the principal's workspace.
type CreateAPIKey struct {
	Name  string
	Scope string
}

// CreatedAPIKey is the new key and its full token, which is shown once and never stored.
type CreatedAPIKey struct {
	Key   *apikey.Key
	Token string
}

// CreateAPIKeyHandler creates keys.
type CreateAPIKeyHandler struct {
	workspaces ports.WorkspaceRepository
	keys       ports.APIKeyRepository
	ids        ports.IDs
	clock      ports.Clock
}

// NewCreateAPIKeyHandler makes the command.
func NewCreateAPIKeyHandler(workspaces ports.WorkspaceRepository, keys ports.APIKeyRepository, ids ports.IDs, clock ports.Clock) CreateAPIKeyHandler {
	return CreateAPIKeyHandler{workspaces: workspaces, keys: keys, ids: ids, clock: clock}
}

// Handle creates the key in the principal's workspace, which must exist, and records
// api_key.created naming who created it.
func (h CreateAPIKeyHandler) Handle(ctx context.Context, cmd CreateAPIKey) (CreatedAPIKey, error) {
	p, err := require(ctx, access.ManageAccount)
	if err != nil {
		return CreatedAPIKey{}, err
	}
	if _, err := h.workspaces.Get(ctx, p.WorkspaceID); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return CreatedAPIKey{}, domain.Validation("workspace_id", "not_found", "no workspace "+p.WorkspaceID)
		}
		return CreatedAPIKey{}, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return CreatedAPIKey{}, fmt.Errorf("generate key secret: %w", err)
	}
	secret := base64.RawURLEncoding.EncodeToString(raw)
	now := h.clock.Now()
	k, err := apikey.New(h.ids.New(PrefixAPIKey), p.WorkspaceID, cmd.Name, apikey.Scope(cmd.Scope), apikey.HashSecret(secret), p.Actor, now)
	if err != nil {
		return CreatedAPIKey{}, err
	}
	e, err := p.auditEvent(h.ids, now, audit.APIKeyCreated, &audit.Target{Type: "api_key", ID: k.ID()},
		map[string]any{"name": k.Name(), "scope": string(k.Scope())})
	if err != nil {
		return CreatedAPIKey{}, err
	}
	if err := h.keys.Create(ctx, k, e); err != nil {
		return CreatedAPIKey{}, fmt.Errorf("store key: %w", err)
	}
	return CreatedAPIKey{Key: k, Token: apikey.FormatToken(k.ID(), secret)}, nil
}

// RevokeAPIKey revokes a key of the principal's workspace by ID.
type RevokeAPIKey struct{ ID string }

// RevokeAPIKeyHandler revokes keys.
type RevokeAPIKeyHandler struct {
	keys  ports.APIKeyRepository
	ids   ports.IDs
	clock ports.Clock
}

// NewRevokeAPIKeyHandler makes the command.
func NewRevokeAPIKeyHandler(keys ports.APIKeyRepository, ids ports.IDs, clock ports.Clock) RevokeAPIKeyHandler {
	return RevokeAPIKeyHandler{keys: keys, ids: ids, clock: clock}
}

// Handle revokes the key and records api_key.revoked; it is rejected from the next request on,
// in every process. A key of another workspace, or one already revoked, is not found.
func (h RevokeAPIKeyHandler) Handle(ctx context.Context, cmd RevokeAPIKey) error {
	p, err := require(ctx, access.ManageAccount)
	if err != nil {
		return err
	}
	k, err := h.keys.Get(ctx, cmd.ID)
	if err != nil {
		return err
	}
	if k.WorkspaceID() != p.WorkspaceID || !k.Active() {
		return domain.ErrNotFound
	}
	now := h.clock.Now()
	e, err := p.auditEvent(h.ids, now, audit.APIKeyRevoked, &audit.Target{Type: "api_key", ID: k.ID()},
		map[string]any{"name": k.Name(), "scope": string(k.Scope())})
	if err != nil {
		return err
	}
	return h.keys.Revoke(ctx, p.WorkspaceID, k.ID(), now, e)
}

// ListAPIKeys reads a page of the principal's workspace's keys, newest first. Revoked keys are
// left out unless IncludeRevoked (the operator's CLI list) asks for them.
type ListAPIKeys struct {
	Page           ports.Page
	IncludeRevoked bool
}

// ListAPIKeysHandler lists keys.
type ListAPIKeysHandler struct{ keys ports.APIKeyRepository }

// NewListAPIKeysHandler makes the query.
func NewListAPIKeysHandler(keys ports.APIKeyRepository) ListAPIKeysHandler {
	return ListAPIKeysHandler{keys: keys}
}

// Handle returns up to Page.Limit keys (never their secrets, which are not stored) and whether
// more exist. A workspace holds few keys, so the page is cut here.
func (h ListAPIKeysHandler) Handle(ctx context.Context, q ListAPIKeys) ([]*apikey.Key, bool, error) {
	p, err := require(ctx, access.ManageAccount)
	if err != nil {
		return nil, false, err
	}
	all, err := h.keys.List(ctx, p.WorkspaceID)
	if err != nil {
		return nil, false, err
	}
	keys := make([]*apikey.Key, 0, len(all))
	for _, k := range all {
		if (k.Active() || q.IncludeRevoked) && (q.Page.After == nil || before(k.CreatedAt(), k.ID(), *q.Page.After)) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b *apikey.Key) int {
		if c := b.CreatedAt().Compare(a.CreatedAt()); c != 0 {
			return c
		}
		return strings.Compare(b.ID(), a.ID())
	})
	limit := q.Page.Limit
	if limit <= 0 {
		limit = len(keys)
	}
	if len(keys) > limit {
		return keys[:limit], true, nil
	}
	return keys, false, nil
}

// before reports whether (at, id) comes after pos in a newest-first list.
func before(at time.Time, id string, pos ports.Position) bool {
	if c := at.Compare(pos.CreatedAt); c != 0 {
		return c < 0
	}
	return id < pos.ID
}

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

// require fails closed: without a principal in ctx, or one without the permission, the use
// case refuses with ErrForbidden.
func require(ctx context.Context, perm access.Permission) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return Principal{}, fmt.Errorf("%w: no principal", ErrForbidden)
	}
	return p, p.Require(perm)
}

// Authenticate checks a presented bearer token.
type Authenticate struct{ Token string }

// AuthenticateHandler resolves tokens to principals. It reads the key on every request, so a
// revocation made by another process takes effect on the next request.
type AuthenticateHandler struct {
	keys  ports.APIKeyRepository
	clock ports.Clock
}

// NewAuthenticateHandler makes the query.
func NewAuthenticateHandler(keys ports.APIKeyRepository, clock ports.Clock) AuthenticateHandler {
	return AuthenticateHandler{keys: keys, clock: clock}
}

// Handle returns the principal or ErrUnauthenticated.
func (h AuthenticateHandler) Handle(ctx context.Context, q Authenticate) (Principal, error) {
	id, secret, err := apikey.ParseToken(q.Token)
	if err != nil {
		return Principal{}, ErrUnauthenticated
	}
	k, err := h.keys.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		// Compare anyway so unknown and wrong keys take the same time.
		apikey.UnmarshalFromDatabase("", "", "", "", make([]byte, 32), audit.Actor{}, h.clock.Now(), nil, nil).Matches(secret)
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("load key: %w", err)
	}
	if !k.Matches(secret) || !k.Active() {
		return Principal{}, ErrUnauthenticated
	}
	if now := h.clock.Now(); k.NeedsUse(now) {
		// At most once a minute per key, so reads stay reads; a failed write only leaves
		// last_used_at older, it never refuses the request.
		_ = h.keys.MarkUsed(ctx, k.ID(), now)
	}
	return Principal{KeyID: k.ID(), WorkspaceID: k.WorkspaceID(), Scope: k.Scope(),
		Actor: audit.Actor{Type: audit.ActorAPIKey, ID: k.ID(), Name: k.Name()}}, nil
}
