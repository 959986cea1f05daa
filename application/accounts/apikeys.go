package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

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
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return CreatedAPIKey{}, err
	}
	if _, err := h.workspaces.Get(ctx, p.WorkspaceID); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return CreatedAPIKey{}, domain.Validation("workspace_id", "not_found", "no workspace "+p.WorkspaceID)
		}
		return CreatedAPIKey{}, err
	}
	secret, err := newSecretToken()
	if err != nil {
		return CreatedAPIKey{}, fmt.Errorf("generate key secret: %w", err)
	}
	now := h.clock.Now()
	k, err := apikey.New(h.ids.New(ports.PrefixAPIKey), p.WorkspaceID, cmd.Name, apikey.Scope(cmd.Scope), apikey.HashSecret(secret), p.Actor, now)
	if err != nil {
		return CreatedAPIKey{}, err
	}
	e, err := p.AuditEvent(h.ids, now, audit.APIKeyCreated, &audit.Target{Type: "api_key", ID: k.ID()},
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
	p, err := auth.Require(ctx, access.ManageAccount)
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
	e, err := p.AuditEvent(h.ids, now, audit.APIKeyRevoked, &audit.Target{Type: "api_key", ID: k.ID()},
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
	p, err := auth.Require(ctx, access.ManageAccount)
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
func (h AuthenticateHandler) Handle(ctx context.Context, q Authenticate) (auth.Principal, error) {
	id, secret, err := apikey.ParseToken(q.Token)
	if err != nil {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	k, err := h.keys.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		// Compare anyway so unknown and wrong keys take the same time.
		apikey.UnmarshalFromDatabase("", "", "", "", make([]byte, 32), audit.Actor{}, h.clock.Now(), nil, nil).Matches(secret)
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	if err != nil {
		return auth.Principal{}, fmt.Errorf("load key: %w", err)
	}
	if !k.Matches(secret) || !k.Active() {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	if now := h.clock.Now(); k.NeedsUse(now) {
		// At most once a minute per key, so reads stay reads; a failed write only leaves
		// last_used_at older, it never refuses the request.
		_ = h.keys.MarkUsed(ctx, k.ID(), now)
	}
	return auth.Principal{KeyID: k.ID(), WorkspaceID: k.WorkspaceID(), Scope: k.Scope(),
		Actor: audit.Actor{Type: audit.ActorAPIKey, ID: k.ID(), Name: k.Name()}}, nil
}
