package application

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/ports"
)

// ErrUnauthenticated means the presented key is missing, malformed, unknown or revoked.
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden means the key is valid but its scope does not grant the permission an action needs.
var ErrForbidden = errors.New("this key's scope does not allow this action")

// CreateAPIKey asks for a new key in a workspace.
type CreateAPIKey struct {
	WorkspaceID string
	Name        string
	Scope       string
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

// Handle creates the key; the workspace must exist.
func (h CreateAPIKeyHandler) Handle(ctx context.Context, cmd CreateAPIKey) (CreatedAPIKey, error) {
	if _, err := h.workspaces.Get(ctx, cmd.WorkspaceID); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return CreatedAPIKey{}, domain.Validation("workspace_id", "not_found", "no workspace "+cmd.WorkspaceID)
		}
		return CreatedAPIKey{}, err
	}
	scope, err := apikey.ParseScope(cmd.Scope)
	if err != nil {
		return CreatedAPIKey{}, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return CreatedAPIKey{}, fmt.Errorf("generate key secret: %w", err)
	}
	secret := base64.RawURLEncoding.EncodeToString(raw)
	k, err := apikey.New(h.ids.New(PrefixAPIKey), cmd.WorkspaceID, cmd.Name, scope, apikey.HashSecret(secret), h.clock.Now())
	if err != nil {
		return CreatedAPIKey{}, err
	}
	if err := h.keys.Create(ctx, k); err != nil {
		return CreatedAPIKey{}, fmt.Errorf("store key: %w", err)
	}
	return CreatedAPIKey{Key: k, Token: apikey.FormatToken(k.ID(), secret)}, nil
}

// RevokeAPIKey revokes a key by ID.
type RevokeAPIKey struct{ ID string }

// RevokeAPIKeyHandler revokes keys.
type RevokeAPIKeyHandler struct {
	keys  ports.APIKeyRepository
	clock ports.Clock
}

// NewRevokeAPIKeyHandler makes the command.
func NewRevokeAPIKeyHandler(keys ports.APIKeyRepository, clock ports.Clock) RevokeAPIKeyHandler {
	return RevokeAPIKeyHandler{keys: keys, clock: clock}
}

// Handle revokes the key; it is rejected from the next request on, in every process.
func (h RevokeAPIKeyHandler) Handle(ctx context.Context, cmd RevokeAPIKey) error {
	return h.keys.Revoke(ctx, cmd.ID, h.clock.Now())
}

// ListAPIKeys lists the keys of one workspace, or of all when WorkspaceID is empty.
type ListAPIKeys struct{ WorkspaceID string }

// ListAPIKeysHandler lists keys.
type ListAPIKeysHandler struct{ keys ports.APIKeyRepository }

// NewListAPIKeysHandler makes the query.
func NewListAPIKeysHandler(keys ports.APIKeyRepository) ListAPIKeysHandler {
	return ListAPIKeysHandler{keys: keys}
}

// Handle lists the keys (never their secrets, which are not stored).
func (h ListAPIKeysHandler) Handle(ctx context.Context, q ListAPIKeys) ([]*apikey.Key, error) {
	return h.keys.List(ctx, q.WorkspaceID)
}

// Principal is who a request acts as.
type Principal struct {
	KeyID       string
	WorkspaceID string
	Scope       apikey.Scope
}

// Require returns ErrForbidden unless the principal's scope grants the permission: reading
// needs apikey.PermRead, changing needs apikey.PermWrite, account management needs
// apikey.PermManageAccount (admin keys only).
func (p Principal) Require(perm apikey.Permission) error {
	if !p.Scope.Allows(perm) {
		return fmt.Errorf("%w: %s needs %s", ErrForbidden, p.Scope, perm)
	}
	return nil
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
		apikey.UnmarshalFromDatabase("", "", "", "", make([]byte, 32), h.clock.Now(), nil).Matches(secret)
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("load key: %w", err)
	}
	if !k.Matches(secret) || !k.Active() {
		return Principal{}, ErrUnauthenticated
	}
	return Principal{KeyID: k.ID(), WorkspaceID: k.WorkspaceID(), Scope: k.Scope()}, nil
}
