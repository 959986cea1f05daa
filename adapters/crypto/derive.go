package crypto

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"strings"

	"github.com/formward/formward/ports"
)

// Labels for DeriveKey. A label names one use; a new use takes a new label, never an old one.
const (
	LabelCursor = "formward cursor v1"
	LabelIPHash = "formward ip hash v1"
	LabelFiles  = "formward file links v1"
)

// DeriveKey returns a 32-byte subkey of the master key for one use, named by label (HKDF-SHA256,
// the label as info), so one configured secret yields independent keys for cursor signing,
// IP hashing and so on. The subkey changes when the master key does.
func DeriveKey(master MasterKey, label string) []byte {
	if master.IsZero() {
		panic("crypto: DeriveKey with a zero master key")
	}
	key, err := hkdf.Key(sha256.New, master.key[:], nil, label, 32)
	if err != nil {
		panic("crypto: hkdf: " + err.Error()) // only for lengths over 255*32 bytes
	}
	return key
}

var _ ports.IPHasher = (*IPHasher)(nil)

// IPHasher turns a respondent IP into its keyed one-way hash, so rate limits and duplicate checks
// work without storing the address.
type IPHasher struct {
	secret []byte
}

// NewIPHasher returns a hasher keyed with secret (for example DeriveKey(master, LabelIPHash)).
func NewIPHasher(secret []byte) *IPHasher {
	if len(secret) == 0 {
		panic("crypto: NewIPHasher with an empty secret")
	}
	return &IPHasher{secret: append([]byte(nil), secret...)}
}

// Hash returns the lowercase hex HMAC-SHA256 of the IP's canonical form: IPv6 compressed and
// lower-case, an IPv4-mapped IPv6 address as plain IPv4, with no zone, and without a port when one
// is given ("203.0.113.7:443", "[2001:db8::1]:443"). Input that is no IP is hashed as given,
// trimmed of surrounding space.
func (h *IPHasher) Hash(ip string) string {
	mac := hmac.New(sha256.New, h.secret)
	mac.Write([]byte(canonicalIP(ip)))
	return hex.EncodeToString(mac.Sum(nil))
}

func canonicalIP(ip string) string {
	s := strings.TrimSpace(ip)
	addr, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return s
		}
		addr = ap.Addr()
	}
	return addr.Unmap().WithZone("").String()
}
