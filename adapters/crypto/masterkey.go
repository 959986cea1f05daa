// Package crypto seals data at rest and keys other secrets.
//
// Envelope encryption: each workspace has a random 32-byte data key (DEK) that seals submission
// data and metadata with AES-256-GCM. DEKs are stored wrapped (AES-256-GCM again) by a master key
// that never touches the database: FORMWARD_MASTER_KEY, or the key file generated in the data dir.
// Every ciphertext names its DEK and every wrapped DEK names its master key, so both can change
// without re-encrypting data; see RotateMaster for the master key procedure.
package crypto

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/formward/formward/ports"
)

// MasterKeySize is the length of a master key in bytes (AES-256).
const MasterKeySize = 32

// MasterKeyFile is the name of the generated master key file inside the data dir.
const MasterKeyFile = "master.key"

// MasterKey is a 32-byte key that wraps data keys, with its ID: the lowercase hex of the first
// 8 bytes of its SHA-256, which is safe to store and log. Printing a MasterKey with %v or %s
// shows only the ID.
type MasterKey struct {
	id  string
	key [MasterKeySize]byte
}

func newMasterKey(raw []byte) MasterKey {
	var k MasterKey
	copy(k.key[:], raw)
	sum := sha256.Sum256(k.key[:])
	k.id = hex.EncodeToString(sum[:8])
	return k
}

// GenerateMasterKey returns a new random master key.
func GenerateMasterKey() MasterKey {
	var raw [MasterKeySize]byte
	rand.Read(raw[:]) // never fails; it crashes the program instead
	return newMasterKey(raw[:])
}

// ParseMasterKey reads a master key written as base64 (standard or URL alphabet, with or without
// padding; surrounding whitespace is ignored). It must decode to exactly 32 bytes. Errors never
// repeat the input.
func ParseMasterKey(b64 string) (MasterKey, error) {
	s := strings.TrimSpace(b64)
	if s == "" {
		return MasterKey{}, errors.New("master key is empty")
	}
	var raw []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			raw = b
			break
		}
	}
	if raw == nil {
		return MasterKey{}, errors.New("master key is not valid base64")
	}
	if len(raw) != MasterKeySize {
		return MasterKey{}, fmt.Errorf("master key decodes to %d bytes, want %d (generate one with: openssl rand -base64 32)", len(raw), MasterKeySize)
	}
	return newMasterKey(raw), nil
}

// ID returns the key's public identifier (16 lowercase hex digits).
func (k MasterKey) ID() string { return k.id }

// IsZero reports whether k is the zero value rather than a parsed or generated key.
func (k MasterKey) IsZero() bool { return k.id == "" }

// Base64 returns the key material in standard base64. It exists to write a new key out once
// (the key file, `formward keys generate-master`); never log it.
func (k MasterKey) Base64() string { return base64.StdEncoding.EncodeToString(k.key[:]) }

// String shows the key's ID only, so a key printed by mistake does not leak.
func (k MasterKey) String() string { return "master key " + k.id }

// GoString shows the key's ID only, for %#v.
func (k MasterKey) GoString() string { return "crypto.MasterKey{id: " + k.id + "}" }

// LoadOrCreateMasterKey returns the master key: parsed from fromEnv when it is set (the value of
// FORMWARD_MASTER_KEY), else read from <dataDir>/master.key. When that file does not exist it
// generates a key and writes it there with mode 0600 (creating dataDir with mode 0700) and
// returns generated = true, so the caller can warn that the key must be backed up. A key file
// readable or writable by anyone but its owner is refused.
func LoadOrCreateMasterKey(dataDir, fromEnv string) (key MasterKey, generated bool, err error) {
	if strings.TrimSpace(fromEnv) != "" {
		key, err = ParseMasterKey(fromEnv)
		if err != nil {
			return MasterKey{}, false, fmt.Errorf("FORMWARD_MASTER_KEY: %w", err)
		}
		return key, false, nil
	}
	path := filepath.Join(dataDir, MasterKeyFile)
	key, err = readMasterKeyFile(path)
	if err == nil {
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return MasterKey{}, false, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return MasterKey{}, false, fmt.Errorf("create data dir for the master key: %w", err)
	}
	key = GenerateMasterKey()
	won, err := writeNewFile(path, []byte(key.Base64()+"\n"))
	if err != nil {
		return MasterKey{}, false, fmt.Errorf("write master key file %s: %w", path, err)
	}
	if !won {
		// Another process created the file first; use its key, as it may already wrap data keys.
		key, err = readMasterKeyFile(path)
		return key, false, err
	}
	return key, true, nil
}

func readMasterKeyFile(path string) (MasterKey, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return MasterKey{}, err
		}
		return MasterKey{}, fmt.Errorf("open master key file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return MasterKey{}, fmt.Errorf("stat master key file %s: %w", path, err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm()&^0o600 != 0 {
		return MasterKey{}, fmt.Errorf("master key file %s has mode %#o, want 0600 (chmod 600 it)", path, info.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return MasterKey{}, fmt.Errorf("read master key file %s: %w", path, err)
	}
	key, err := ParseMasterKey(string(b))
	if err != nil {
		return MasterKey{}, fmt.Errorf("master key file %s: %w", path, err)
	}
	return key, nil
}

// writeNewFile writes data to path, mode 0600, unless path already exists (won = false). The file
// appears complete or not at all: it is written under a temporary name and hard-linked into place,
// so a process starting at the same moment never reads half a key.
func writeNewFile(path string, data []byte) (won bool, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return false, err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	err = os.Link(tmp.Name(), path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	}
	// Some file systems have no hard links: fall back to an exclusive create.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return false, err
	}
	return true, f.Close()
}

// Keyring holds the primary master key, which wraps new data keys, and the previous ones, which
// still unwrap data keys wrapped before a rotation.
type Keyring struct {
	primary MasterKey
	byID    map[string]MasterKey
}

// NewKeyring returns a keyring that wraps with primary and unwraps with primary or any of previous.
func NewKeyring(primary MasterKey, previous ...MasterKey) *Keyring {
	if primary.IsZero() {
		panic("crypto: NewKeyring with a zero master key")
	}
	r := &Keyring{primary: primary, byID: make(map[string]MasterKey, 1+len(previous))}
	for _, k := range previous {
		if !k.IsZero() {
			r.byID[k.id] = k
		}
	}
	r.byID[primary.id] = primary
	return r
}

// ParsePreviousKeys reads a comma-separated list of base64 master keys (the value of
// FORMWARD_PREVIOUS_MASTER_KEYS). Empty entries are skipped; an empty string gives no keys.
func ParsePreviousKeys(commaSeparated string) ([]MasterKey, error) {
	var keys []MasterKey
	for i, part := range strings.Split(commaSeparated, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, err := ParseMasterKey(part)
		if err != nil {
			return nil, fmt.Errorf("previous master key #%d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Primary returns the key that wraps new data keys.
func (r *Keyring) Primary() MasterKey { return r.primary }

// Get returns the key with the given ID, when the ring holds it.
func (r *Keyring) Get(id string) (MasterKey, bool) {
	k, ok := r.byID[id]
	return k, ok
}

// IDs lists the IDs of every key in the ring, the primary first.
func (r *Keyring) IDs() []string {
	others := make([]string, 0, len(r.byID)-1)
	for id := range r.byID {
		if id != r.primary.id {
			others = append(others, id)
		}
	}
	slices.Sort(others)
	return append([]string{r.primary.id}, others...)
}

// MasterKeyMismatchError means stored data keys are wrapped by master keys that no key in the
// keyring unwraps: the process was given another key than the one the data was written
// under, or a rotation's previous key is missing. Every capture and read of those workspaces
// would fail, so a process stops at start instead.
type MasterKeyMismatchError struct {
	// Stored are the IDs of the master keys that wrap stored data keys, sorted.
	Stored []string
	// Configured are the IDs of the keyring's keys, the primary first.
	Configured []string
	// Missing are the stored IDs that no configured key unwraps, sorted.
	Missing []string
}

func (e *MasterKeyMismatchError) Error() string {
	return fmt.Sprintf("crypto: no configured master key unwraps the data keys wrapped by master key %s "+
		"(stored data keys are wrapped by %s; configured master keys: %s)",
		strings.Join(e.Missing, ", "), strings.Join(e.Stored, ", "), strings.Join(e.Configured, ", "))
}

// CheckMasterKeys proves that ring unwraps stored, the data keys already in the database:
// every one of them must unwrap with the ring's key of its master key ID. A caller at start
// passes one data key per master key ID (a key's ID is a hash of the key, so one data key
// proves the others wrapped by the same key); a database with no data keys passes. The
// failure is a *MasterKeyMismatchError naming the key IDs found and configured.
func CheckMasterKeys(ring *Keyring, stored []ports.WrappedKey) error {
	found := map[string]bool{}
	missing := map[string]bool{}
	for _, wk := range stored {
		found[wk.MasterKeyID] = true
		master, ok := ring.Get(wk.MasterKeyID)
		if !ok {
			missing[wk.MasterKeyID] = true
			continue
		}
		if _, err := unwrapKey(master, wk); err != nil {
			missing[wk.MasterKeyID] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &MasterKeyMismatchError{
		Stored:     slices.Sorted(maps.Keys(found)),
		Configured: ring.IDs(),
		Missing:    slices.Sorted(maps.Keys(missing)),
	}
}
