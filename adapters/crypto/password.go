package crypto

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/formward/formward/ports"
)

var _ ports.PasswordHasher = (*PasswordHasher)(nil)

// Argon2Params are the argon2id cost parameters of new hashes. Stored hashes carry their own
// parameters, so raising these later keeps old hashes verifiable.
type Argon2Params struct {
	// Memory in KiB.
	Memory  uint32
	Time    uint32
	Threads uint8
	SaltLen int
	KeyLen  uint32
}

// RFC9106Params is the second recommended option of RFC 9106 (section 4): 64 MiB of memory,
// three passes, four lanes, a 16-byte salt and a 32-byte tag.
var RFC9106Params = Argon2Params{Memory: 64 * 1024, Time: 3, Threads: 4, SaltLen: 16, KeyLen: 32}

// Bounds on parameters read back from a stored hash, so a damaged or hostile row cannot make
// Verify allocate gigabytes or spin for minutes.
const (
	maxArgonMemory  = 1 << 20 // 1 GiB
	maxArgonTime    = 16
	maxArgonThreads = 64
	maxArgonKeyLen  = 128
)

// PasswordHasher hashes passwords with argon2id and encodes them in the PHC string format
// ($argon2id$v=19$m=65536,t=3,p=4$salt$hash, unpadded standard base64). Each hash takes the
// configured memory, so at most one hash per CPU runs at a time; the others wait.
type PasswordHasher struct {
	params Argon2Params
	slots  chan struct{}
	dummy  string
}

// NewPasswordHasher returns a hasher with the RFC 9106 parameters.
func NewPasswordHasher() *PasswordHasher { return NewPasswordHasherWithParams(RFC9106Params) }

// NewPasswordHasherWithParams returns a hasher with other parameters (tests use cheap ones).
func NewPasswordHasherWithParams(p Argon2Params) *PasswordHasher {
	if p.Memory == 0 || p.Time == 0 || p.Threads == 0 || p.SaltLen < 8 || p.KeyLen < 16 {
		panic("crypto: argon2id parameters out of range")
	}
	h := &PasswordHasher{params: p, slots: make(chan struct{}, max(1, runtime.NumCPU()))}
	// The hash Verify checks against when the stored one is empty or unreadable: same
	// parameters, so a missing password costs what a wrong one does.
	h.dummy = h.encode(p, make([]byte, p.SaltLen), make([]byte, p.KeyLen))
	return h
}

// Hash returns the PHC-encoded argon2id hash of password with a fresh random salt.
func (h *PasswordHasher) Hash(password string) (string, error) {
	salt := make([]byte, h.params.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := h.derive(password, salt, h.params)
	return h.encode(h.params, salt, key), nil
}

// Verify reports whether password matches the encoded hash, comparing in constant time. An
// empty or malformed hash never matches, after the same work as a real one.
func (h *PasswordHasher) Verify(encoded, password string) bool {
	p, salt, want, err := decodePHC(encoded)
	ok := err == nil
	if !ok {
		p, salt, want, _ = decodePHC(h.dummy)
	}
	got := h.derive(password, salt, p)
	return subtle.ConstantTimeCompare(got, want) == 1 && ok
}

func (h *PasswordHasher) derive(password string, salt []byte, p Argon2Params) []byte {
	h.slots <- struct{}{}
	defer func() { <-h.slots }()
	return argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
}

func (h *PasswordHasher) encode(p Argon2Params, salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

var errBadHash = errors.New("crypto: not an argon2id hash this server can read")

// decodePHC parses $argon2id$v=19$m=…,t=…,p=…$salt$hash.
func decodePHC(s string) (Argon2Params, []byte, []byte, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return Argon2Params{}, nil, nil, errBadHash
	}
	var p Argon2Params
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, found := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if !found || err != nil {
			return Argon2Params{}, nil, nil, errBadHash
		}
		switch k {
		case "m":
			p.Memory = uint32(n)
		case "t":
			p.Time = uint32(n)
		case "p":
			if n > maxArgonThreads {
				return Argon2Params{}, nil, nil, errBadHash
			}
			p.Threads = uint8(n)
		default:
			return Argon2Params{}, nil, nil, errBadHash
		}
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 || len(key) > maxArgonKeyLen ||
		p.Memory < 8*uint32(p.Threads) || p.Memory > maxArgonMemory || p.Time < 1 || p.Time > maxArgonTime || p.Threads < 1 {
		return Argon2Params{}, nil, nil, errBadHash
	}
	p.SaltLen, p.KeyLen = len(salt), uint32(len(key))
	return p, salt, key, nil
}
