// Package apikey models bearer API keys: a scope, a workspace, and a secret kept only as a hash.
package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/text"
)

// Scope is what a key may do.
type Scope string

// The three scopes: read-only reads, read-write also writes, admin also manages the account.
const (
	ScopeReadOnly  Scope = "read-only"
	ScopeReadWrite Scope = "read-write"
	ScopeAdmin     Scope = "admin"
)

// ParseScope accepts one of the three scope names.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(s); sc {
	case ScopeReadOnly, ScopeReadWrite, ScopeAdmin:
		return sc, nil
	}
	return "", domain.Validation("scope", "invalid_value", "scope must be one of read-only, read-write, admin")
}

// scopePermissions is what each scope grants.
var scopePermissions = map[Scope][]access.Permission{
	ScopeReadOnly:  {access.Read},
	ScopeReadWrite: {access.Read, access.Write},
	ScopeAdmin:     {access.Read, access.Write, access.ManageAccount},
}

// Allows reports whether the scope grants the permission.
func (s Scope) Allows(p access.Permission) bool { return slices.Contains(scopePermissions[s], p) }

// TokenPrefix starts every full key, so leaked keys are easy to recognise in code scanners.
const TokenPrefix = "fwk_"

// ErrMalformedToken means the presented key does not have the shape of a Formward key.
var ErrMalformedToken = errors.New("malformed api key")

// FormatToken joins the key ID and its secret into the value shown once to the user.
func FormatToken(id, secret string) string { return TokenPrefix + id + "." + secret }

// ParseToken splits a presented key into key ID and secret.
func ParseToken(token string) (id, secret string, err error) {
	rest, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok {
		return "", "", ErrMalformedToken
	}
	id, secret, ok = strings.Cut(rest, ".")
	if !ok || id == "" || len(secret) < 32 || len(id) > 64 || len(secret) > 128 {
		return "", "", ErrMalformedToken
	}
	return id, secret, nil
}

// HashSecret is the one-way form of a secret kept at rest. Secrets carry 256 random bits,
// so a fast hash is enough: there is nothing to brute-force.
func HashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// Key is one API key.
type Key struct {
	id          string
	workspaceID string
	name        string
	scope       Scope
	secretHash  []byte
	createdBy   audit.Actor
	createdAt   time.Time
	lastUsedAt  *time.Time
	revokedAt   *time.Time
}

// New checks name and scope and builds a key from the hash of its secret.
func New(id, workspaceID, name string, scope Scope, secretHash []byte, createdBy audit.Actor, now time.Time) (*Key, error) {
	var vs domain.Violations
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 || !text.Valid(name) {
		vs.Add("name", "invalid_length", "name must be 1 to 100 characters")
	}
	if _, err := ParseScope(string(scope)); err != nil {
		vs.Add("scope", "invalid_value", "scope must be one of read-only, read-write, admin")
	}
	if workspaceID == "" {
		vs.Add("workspace_id", "required", "a key belongs to one workspace")
	}
	if len(secretHash) != sha256.Size {
		vs.Add("secret", "invalid_value", "secret hash must be a SHA-256 digest")
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	return &Key{id: id, workspaceID: workspaceID, name: name, scope: scope, secretHash: secretHash, createdBy: createdBy, createdAt: now.UTC()}, nil
}

// UnmarshalFromDatabase rebuilds a stored key without re-checking it.
func UnmarshalFromDatabase(id, workspaceID, name string, scope Scope, secretHash []byte, createdBy audit.Actor, createdAt time.Time, lastUsedAt, revokedAt *time.Time) *Key {
	return &Key{id: id, workspaceID: workspaceID, name: name, scope: scope, secretHash: secretHash, createdBy: createdBy,
		createdAt: createdAt.UTC(), lastUsedAt: lastUsedAt, revokedAt: revokedAt}
}

// Matches compares a presented secret with the stored hash in constant time.
func (k *Key) Matches(secret string) bool {
	return subtle.ConstantTimeCompare(HashSecret(secret), k.secretHash) == 1
}

// Revoke marks the key revoked; revoking twice keeps the first time.
func (k *Key) Revoke(now time.Time) {
	if k.revokedAt == nil {
		t := now.UTC()
		k.revokedAt = &t
	}
}

// Active reports whether the key may still be used.
func (k *Key) Active() bool { return k.revokedAt == nil }

// ID returns the key ID (the public half of the token).
func (k *Key) ID() string { return k.id }

// WorkspaceID returns the workspace the key is bound to.
func (k *Key) WorkspaceID() string { return k.workspaceID }

// Name returns the descriptive name.
func (k *Key) Name() string { return k.name }

// Scope returns the key's scope.
func (k *Key) Scope() Scope { return k.scope }

// SecretHash returns the stored hash of the secret.
func (k *Key) SecretHash() []byte { return k.secretHash }

// CreatedAt returns the creation time.
func (k *Key) CreatedAt() time.Time { return k.createdAt }

// CreatedBy returns who created the key.
func (k *Key) CreatedBy() audit.Actor { return k.createdBy }

// LastUsedAt returns when the key last authenticated a request (to the minute), or nil.
func (k *Key) LastUsedAt() *time.Time { return k.lastUsedAt }

// LastUsedEvery bounds how often a request records last_used_at, so reads stay reads.
const LastUsedEvery = time.Minute

// NeedsUse reports whether a request at now should record last_used_at.
func (k *Key) NeedsUse(now time.Time) bool {
	return k.lastUsedAt == nil || now.Sub(*k.lastUsedAt) >= LastUsedEvery
}

// Prefix is the first characters of the full key, shown so a person can recognise it.
func (k *Key) Prefix() string {
	id := k.id
	if len(id) > 12 {
		id = id[:12]
	}
	return TokenPrefix + id
}

// RevokedAt returns when the key was revoked, or nil.
func (k *Key) RevokedAt() *time.Time { return k.revokedAt }
