package crypto

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

var _ ports.Cipher = (*Cipher)(nil)

// Ciphertext layout (format version 1):
//
//	0x01 | len(dekID) (1 byte) | dekID | nonce (12 bytes) | AES-256-GCM ciphertext and tag (16 bytes)
//
// The GCM additional data is the header (version, length and DEK ID), the workspace ID
// (length-prefixed) and the caller's aad, so a ciphertext opens only in its workspace and row.
const (
	formatV1  = 0x01
	nonceSize = 12
	tagSize   = 16
	dataKeyID = "dek" // prefix of data key IDs
	// wrappedV1 starts a wrapped data key: 0x01 | nonce | GCM(master key, DEK).
	wrappedV1 = 0x01
)

var (
	// ErrMalformed means the bytes are not a ciphertext this package made.
	ErrMalformed = errors.New("crypto: malformed ciphertext")
	// ErrAuthentication means the ciphertext was altered, or opened with another aad or workspace.
	ErrAuthentication = errors.New("crypto: message authentication failed")
	// ErrWrongWorkspace means the ciphertext's data key belongs to another workspace.
	ErrWrongWorkspace = errors.New("crypto: data key belongs to another workspace")
)

// MissingMasterKeyError means a data key is wrapped by a master key the keyring does not hold:
// the key was rotated away too early, or FORMWARD_PREVIOUS_MASTER_KEYS lacks it.
type MissingMasterKeyError struct {
	DataKeyID   string
	MasterKeyID string
}

func (e *MissingMasterKeyError) Error() string {
	return fmt.Sprintf("crypto: data key %s is wrapped by master key %s, which is not in the keyring", e.DataKeyID, e.MasterKeyID)
}

// dataKey is an unwrapped DEK, ready to use. Its fields never change after creation, and
// cipher.AEAD from crypto/cipher is safe for concurrent use.
type dataKey struct {
	id          string
	workspaceID string
	aead        cipher.AEAD
	header      []byte // version | len | id: the first bytes of every ciphertext under this key
}

// Cipher seals and opens data at rest with per-workspace data keys (see the package comment).
// Unwrapped data keys are kept in memory, so after a workspace's first Seal or Open no call reaches
// the repository.
type Cipher struct {
	ring  *Keyring
	keys  ports.DataKeyRepository
	ids   ports.IDs
	clock ports.Clock

	mu      sync.RWMutex
	current map[string]*dataKey // by workspace ID: the key that seals
	byID    map[string]*dataKey // by data key ID: every key seen, for Open
	flight  singleflight.Group  // one repository round trip per missing key, however many callers
}

// NewCipher returns a Cipher that wraps new data keys with ring's primary master key and stores
// them in keys.
func NewCipher(ring *Keyring, keys ports.DataKeyRepository, ids ports.IDs, clock ports.Clock) *Cipher {
	if ring == nil || keys == nil || ids == nil || clock == nil {
		panic("crypto: NewCipher needs a keyring, a data key repository, IDs and a clock")
	}
	return &Cipher{
		ring:    ring,
		keys:    keys,
		ids:     ids,
		clock:   clock,
		current: make(map[string]*dataKey),
		byID:    make(map[string]*dataKey),
	}
}

// Seal encrypts plaintext under the workspace's data key, creating that key on the workspace's
// first Seal. aad is authenticated but not stored: Open needs the same aad.
func (c *Cipher) Seal(ctx context.Context, workspaceID string, plaintext, aad []byte) ([]byte, error) {
	dk, err := c.sealingKey(ctx, workspaceID, "seal")
	if err != nil {
		return nil, err
	}
	h := len(dk.header)
	out := make([]byte, h+nonceSize, h+nonceSize+len(plaintext)+tagSize)
	copy(out, dk.header)
	nonce := out[h:]
	rand.Read(nonce) // never fails; it crashes the program instead
	return dk.aead.Seal(out, nonce, plaintext, sealAAD(dk.header, workspaceID, aad)), nil
}

// EnsureKey makes sure the workspace has a data key, creating it on the workspace's first use,
// so that a later Seal reaches no repository.
func (c *Cipher) EnsureKey(ctx context.Context, workspaceID string) error {
	_, err := c.sealingKey(ctx, workspaceID, "ensure key")
	return err
}

// sealingKey returns the workspace's current data key, loading or creating it when it is not
// in memory; op names the caller in the error for an invalid workspace ID.
func (c *Cipher) sealingKey(ctx context.Context, workspaceID, op string) (*dataKey, error) {
	if workspaceID == "" || len(workspaceID) > 0xFFFF {
		return nil, fmt.Errorf("crypto: %s: workspace ID must be 1 to 65535 bytes", op)
	}
	c.mu.RLock()
	dk := c.current[workspaceID]
	c.mu.RUnlock()
	if dk != nil {
		return dk, nil
	}
	return c.loadCurrent(ctx, workspaceID)
}

// Open decrypts a ciphertext made by Seal for the same workspace and aad. It works for any data
// key the workspace ever had, and for data keys wrapped by any master key in the keyring.
func (c *Cipher) Open(ctx context.Context, workspaceID string, ciphertext, aad []byte) ([]byte, error) {
	if len(ciphertext) < 2 || ciphertext[0] != formatV1 {
		return nil, ErrMalformed
	}
	h := 2 + int(ciphertext[1])
	if ciphertext[1] == 0 || len(ciphertext) < h+nonceSize+tagSize {
		return nil, ErrMalformed
	}
	header := ciphertext[:h]
	id := ciphertext[2:h]

	c.mu.RLock()
	dk := c.byID[string(id)]
	c.mu.RUnlock()
	if dk == nil {
		var err error
		if dk, err = c.loadByID(ctx, string(id)); err != nil {
			return nil, err
		}
	}
	if dk.workspaceID != workspaceID {
		return nil, ErrWrongWorkspace
	}
	plaintext, err := dk.aead.Open(nil, ciphertext[h:h+nonceSize], ciphertext[h+nonceSize:], sealAAD(header, workspaceID, aad))
	if err != nil {
		return nil, ErrAuthentication
	}
	return plaintext, nil
}

// sealAAD is header | uint16 len(workspaceID) | workspaceID | aad. The length prefix keeps
// ("ab", "c") and ("a", "bc") apart.
func sealAAD(header []byte, workspaceID string, aad []byte) []byte {
	b := make([]byte, 0, len(header)+2+len(workspaceID)+len(aad))
	b = append(b, header...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(workspaceID)))
	b = append(b, workspaceID...)
	return append(b, aad...)
}

// loadCurrent finds the workspace's data key, creating it when there is none. Concurrent callers
// for one workspace share one round trip, so a burst of first Seals makes one key; across
// processes, DataKeyRepository.Insert returns the key of whichever process won.
func (c *Cipher) loadCurrent(ctx context.Context, workspaceID string) (*dataKey, error) {
	return c.loadShared("ws\x00"+workspaceID, func() *dataKey { return c.current[workspaceID] }, func() (*dataKey, error) {
		wk, err := c.keys.Current(ctx, workspaceID)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			if wk, err = c.createDataKey(ctx, workspaceID); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, fmt.Errorf("crypto: load data key of workspace %s: %w", workspaceID, err)
		}
		if wk.WorkspaceID != workspaceID {
			return nil, fmt.Errorf("crypto: repository returned data key %s of another workspace", wk.ID)
		}
		dk, err := c.unwrap(wk)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.current[workspaceID] = dk
		c.byID[dk.id] = dk
		c.mu.Unlock()
		return dk, nil
	})
}

// loadShared returns the data key cached says is known, or else the one load finds, which
// load caches; concurrent callers with the same flight key share one load.
func (c *Cipher) loadShared(flight string, cached func() *dataKey, load func() (*dataKey, error)) (*dataKey, error) {
	v, err, _ := c.flight.Do(flight, func() (any, error) {
		c.mu.RLock()
		dk := cached()
		c.mu.RUnlock()
		if dk != nil {
			return dk, nil
		}
		return load()
	})
	if err != nil {
		return nil, err
	}
	return v.(*dataKey), nil
}

func (c *Cipher) createDataKey(ctx context.Context, workspaceID string) (ports.WrappedKey, error) {
	id := c.ids.New(dataKeyID)
	if len(id) == 0 || len(id) > 255 {
		return ports.WrappedKey{}, fmt.Errorf("crypto: data key ID of %d bytes, want 1 to 255", len(id))
	}
	var raw [32]byte
	rand.Read(raw[:])
	primary := c.ring.Primary()
	wrapped, err := wrap(primary, workspaceID, id, raw[:])
	if err != nil {
		return ports.WrappedKey{}, err
	}
	stored, err := c.keys.Insert(ctx, ports.WrappedKey{
		ID:          id,
		WorkspaceID: workspaceID,
		MasterKeyID: primary.ID(),
		Wrapped:     wrapped,
		CreatedAt:   c.clock.Now(),
	})
	if err != nil {
		return ports.WrappedKey{}, fmt.Errorf("crypto: store data key of workspace %s: %w", workspaceID, err)
	}
	return stored, nil
}

// loadByID fetches and unwraps one data key for Open.
func (c *Cipher) loadByID(ctx context.Context, id string) (*dataKey, error) {
	return c.loadShared("id\x00"+id, func() *dataKey { return c.byID[id] }, func() (*dataKey, error) {
		wk, err := c.keys.Get(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			// A ciphertext naming a key that does not exist was not made here.
			return nil, fmt.Errorf("%w: unknown data key", ErrMalformed)
		}
		if err != nil {
			return nil, fmt.Errorf("crypto: load data key %s: %w", id, err)
		}
		if wk.ID != id {
			return nil, fmt.Errorf("crypto: repository returned data key %s for %s", wk.ID, id)
		}
		dk, err := c.unwrap(wk)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.byID[dk.id] = dk
		c.mu.Unlock()
		return dk, nil
	})
}

func (c *Cipher) unwrap(wk ports.WrappedKey) (*dataKey, error) {
	master, ok := c.ring.Get(wk.MasterKeyID)
	if !ok {
		return nil, &MissingMasterKeyError{DataKeyID: wk.ID, MasterKeyID: wk.MasterKeyID}
	}
	raw, err := unwrapKey(master, wk)
	if err != nil {
		return nil, err
	}
	aead, err := newGCM(raw)
	if err != nil {
		return nil, err
	}
	header := make([]byte, 0, 2+len(wk.ID))
	header = append(header, formatV1, byte(len(wk.ID)))
	header = append(header, wk.ID...)
	return &dataKey{id: wk.ID, workspaceID: wk.WorkspaceID, aead: aead, header: header}, nil
}

// wrap seals a data key with a master key. The additional data binds the wrapping to the data
// key's workspace and ID, so a wrapped key copied onto another row does not unwrap.
func wrap(master MasterKey, workspaceID, dekID string, raw []byte) ([]byte, error) {
	aead, err := newGCM(master.key[:])
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+nonceSize, 1+nonceSize+len(raw)+tagSize)
	out[0] = wrappedV1
	rand.Read(out[1:])
	return aead.Seal(out, out[1:], raw, wrapAAD(workspaceID, dekID)), nil
}

func unwrapKey(master MasterKey, wk ports.WrappedKey) ([]byte, error) {
	w := wk.Wrapped
	if len(w) != 1+nonceSize+32+tagSize || w[0] != wrappedV1 {
		return nil, fmt.Errorf("crypto: data key %s: malformed wrapping", wk.ID)
	}
	aead, err := newGCM(master.key[:])
	if err != nil {
		return nil, err
	}
	raw, err := aead.Open(nil, w[1:1+nonceSize], w[1+nonceSize:], wrapAAD(wk.WorkspaceID, wk.ID))
	if err != nil {
		return nil, fmt.Errorf("crypto: data key %s does not unwrap with master key %s", wk.ID, master.ID())
	}
	return raw, nil
}

func wrapAAD(workspaceID, dekID string) []byte {
	b := make([]byte, 0, 4+len(workspaceID)+len(dekID))
	b = binary.BigEndian.AppendUint16(b, uint16(len(workspaceID)))
	b = append(b, workspaceID...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(dekID)))
	return append(b, dekID...)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	return aead, nil
}

// RotateMaster re-wraps under ring's primary master key every data key wrapped by another master
// key, and returns how many it re-wrapped. Data itself is not re-encrypted: only the 32-byte data
// keys are. Running it again re-wraps nothing, so it is safe to repeat after a failure. Keys it
// cannot unwrap (their master key is not in the ring) are reported together at the end, after
// every other key was re-wrapped.
//
// Zero-downtime master key rotation:
//
//  1. Restart every server with the new key in FORMWARD_MASTER_KEY and the old one in
//     FORMWARD_PREVIOUS_MASTER_KEYS (comma-separated). New data keys are now wrapped by the new
//     key; existing ones still unwrap with the old key.
//  2. Run `formward keys rotate-master` (this function), which re-wraps every data key under the
//     new key. Running servers keep their unwrapped data keys in memory and are not disturbed.
//  3. Restart the servers without FORMWARD_PREVIOUS_MASTER_KEYS, and destroy the old key.
//
// Keys derived with DeriveKey change with the master key; the caller decides which of those
// may change (a cursor signing key can; an IP hash key changes every respondent's hash).
func RotateMaster(ctx context.Context, ring *Keyring, keys ports.DataKeyRepository) (rewrapped int, err error) {
	all, err := keys.All(ctx)
	if err != nil {
		return 0, fmt.Errorf("crypto: list data keys: %w", err)
	}
	primary := ring.Primary()
	var errs []error
	for _, wk := range all {
		if wk.MasterKeyID == primary.ID() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rewrapped, err
		}
		master, ok := ring.Get(wk.MasterKeyID)
		if !ok {
			errs = append(errs, &MissingMasterKeyError{DataKeyID: wk.ID, MasterKeyID: wk.MasterKeyID})
			continue
		}
		raw, err := unwrapKey(master, wk)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		wrapped, err := wrap(primary, wk.WorkspaceID, wk.ID, raw)
		if err != nil {
			return rewrapped, err
		}
		if err := keys.Rewrap(ctx, wk.ID, primary.ID(), wrapped); err != nil {
			return rewrapped, fmt.Errorf("crypto: rewrap data key %s: %w", wk.ID, err)
		}
		rewrapped++
	}
	return rewrapped, errors.Join(errs...)
}
