package crypto

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// LabelEmailIndex derives the key of the respondents' email blind index.
const LabelEmailIndex = "formward email index v1"

var _ ports.BlindIndex = (*BlindIndex)(nil)

// BlindIndex hashes respondents' email addresses for the privacy index: HMAC-SHA256 of the
// trimmed, lower-cased address under a key of the workspace, itself the HMAC-SHA256 of the
// workspace ID under DeriveKey(master, LabelEmailIndex). The same address gives unrelated
// hashes in two workspaces, and nothing can be computed without the master key.
type BlindIndex struct {
	root    []byte
	version string

	mu   sync.RWMutex
	keys map[string][]byte // workspace ID → its index key
}

// NewBlindIndex returns the index keyed from the master key.
func NewBlindIndex(master MasterKey) *BlindIndex {
	root := DeriveKey(master, LabelEmailIndex)
	// The version names the key without revealing it: a hash of the derived key.
	sum := sha256.Sum256(append([]byte("formward email index version\x00"), root...))
	return &BlindIndex{root: root, version: hex.EncodeToString(sum[:8]), keys: make(map[string][]byte)}
}

// Email returns the blind index of the address in the workspace.
func (b *BlindIndex) Email(workspaceID, email string) []byte {
	mac := hmac.New(sha256.New, b.workspaceKey(workspaceID))
	mac.Write([]byte(submission.NormalizeEmail(email)))
	return mac.Sum(nil)
}

// Version names the derived key; it changes with the master key.
func (b *BlindIndex) Version() string { return b.version }

func (b *BlindIndex) workspaceKey(workspaceID string) []byte {
	b.mu.RLock()
	k, ok := b.keys[workspaceID]
	b.mu.RUnlock()
	if ok {
		return k
	}
	mac := hmac.New(sha256.New, b.root)
	mac.Write([]byte(workspaceID))
	k = mac.Sum(nil)
	b.mu.Lock()
	if len(b.keys) >= 100000 {
		b.keys = make(map[string][]byte)
	}
	b.keys[workspaceID] = k
	b.mu.Unlock()
	return k
}
