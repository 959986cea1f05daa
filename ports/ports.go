// Package ports declares the interfaces at the hexagon's edge. Application use cases depend on
// these; adapters implement them.
package ports

import (
	"context"
	"time"
)

// Clock tells the time; tests pass a fixed one.
type Clock interface {
	Now() time.Time
}

// Sleep waits for d of wall time, not of a Clock (it paces real work: the relay's backoff, the
// retention job's rests); false when ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// IDs makes new resource IDs: the prefix plus at least 96 random bits, URL-safe.
type IDs interface {
	New(prefix string) string
}

// Cipher seals data at rest with the workspace's data key (AES-256-GCM). The ciphertext names the
// key it was sealed with, so keys can rotate. aad binds a ciphertext to its row.
type Cipher interface {
	Seal(ctx context.Context, workspaceID string, plaintext, aad []byte) ([]byte, error)
	Open(ctx context.Context, workspaceID string, ciphertext, aad []byte) ([]byte, error)
	// EnsureKey makes sure the workspace has a data key, creating it if it has none. Writers
	// call it before a transaction that seals: on SQLite, creating the key inside that
	// transaction would need a second writer.
	EnsureKey(ctx context.Context, workspaceID string) error
}

// IPHasher turns a respondent IP into its keyed one-way hash (HMAC-SHA256, hex).
type IPHasher interface {
	Hash(ip string) string
}

// WrappedKey is a workspace data key sealed by a master key.
type WrappedKey struct {
	ID          string
	WorkspaceID string
	MasterKeyID string
	Wrapped     []byte
	CreatedAt   time.Time
}

// DataKeyRepository stores wrapped data keys.
type DataKeyRepository interface {
	// Current returns the newest data key of the workspace, or domain.ErrNotFound.
	Current(ctx context.Context, workspaceID string) (WrappedKey, error)
	// Get returns one data key by ID, or domain.ErrNotFound.
	Get(ctx context.Context, id string) (WrappedKey, error)
	// Insert stores a new data key; when another process won the race it returns that key instead.
	Insert(ctx context.Context, k WrappedKey) (WrappedKey, error)
	// All lists every data key, for master key rotation.
	All(ctx context.Context) ([]WrappedKey, error)
	// Rewrap replaces a key's wrapping after master key rotation.
	Rewrap(ctx context.Context, id, masterKeyID string, wrapped []byte) error
}
