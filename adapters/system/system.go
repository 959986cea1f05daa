// Package system holds the adapters that talk to the machine itself: the wall clock and the
// random source behind resource IDs.
package system

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"time"

	"github.com/formward/formward/ports"
)

var (
	_ ports.Clock = Clock{}
	_ ports.IDs   = (*IDs)(nil)
)

// Clock is the wall clock, in UTC and truncated to milliseconds, the precision the API shows.
// Truncating here keeps a value read back from the database equal to the one written.
type Clock struct{}

// Now returns the current time in UTC, truncated to milliseconds.
func (Clock) Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// crockford is Crockford's base32 alphabet. Its characters are in ASCII order, so encoded IDs sort
// like the bytes they encode.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var encoding = base32.NewEncoding(crockford).WithPadding(base32.NoPadding)

const (
	timeBytes   = 6                       // big-endian Unix milliseconds, good until the year 10889
	randomBytes = 12                      // 96 random bits
	rawBytes    = timeBytes + randomBytes // 18
	// EncodedLen is the length of the part of an ID after "<prefix>_".
	EncodedLen = (rawBytes*8 + 4) / 5 // 29
)

// IDs makes resource IDs such as "frm_01JD7X…": the prefix, an underscore and 29 characters of
// Crockford base32 encoding 6 bytes of Unix milliseconds and 12 random bytes. IDs made in different
// milliseconds sort by time; within one millisecond their order is random.
type IDs struct {
	now func() time.Time // replaced in tests
}

// NewIDs returns an ID generator reading the wall clock and crypto/rand.
func NewIDs() *IDs { return &IDs{now: time.Now} }

// New returns a fresh ID with the given prefix.
func (g *IDs) New(prefix string) string {
	now := time.Now
	if g != nil && g.now != nil {
		now = g.now
	}
	var raw [rawBytes]byte
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now().UnixMilli()))
	copy(raw[:timeBytes], ms[8-timeBytes:])
	rand.Read(raw[timeBytes:]) // never fails; it crashes the program instead

	var b strings.Builder
	b.Grow(len(prefix) + 1 + EncodedLen)
	b.WriteString(prefix)
	b.WriteByte('_')
	var enc [EncodedLen]byte
	encoding.Encode(enc[:], raw[:])
	b.Write(enc[:])
	return b.String()
}

// Valid reports whether id has the shape of an ID made by New with this prefix: the prefix, an
// underscore and 29 characters of upper-case Crockford base32 whose unused last bit is zero.
// Handlers use it to answer 404 for a malformed ID without a database query.
func Valid(prefix, id string) bool {
	if len(id) != len(prefix)+1+EncodedLen || !strings.HasPrefix(id, prefix) || id[len(prefix)] != '_' {
		return false
	}
	body := id[len(prefix)+1:]
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(crockford, body[i]) < 0 {
			return false
		}
	}
	// 18 bytes are 144 bits; the 29th character carries 4 of them and one padding bit, which
	// New always leaves at zero. Rejecting a set padding bit keeps one ID per byte string.
	return strings.IndexByte(crockford, body[EncodedLen-1])&1 == 0
}

// Time returns the creation time encoded in an ID of the given prefix, to the millisecond, and
// false when the ID is not Valid.
func Time(prefix, id string) (time.Time, bool) {
	if !Valid(prefix, id) {
		return time.Time{}, false
	}
	var raw [rawBytes]byte
	if _, err := encoding.Decode(raw[:], []byte(id[len(prefix)+1:])); err != nil {
		return time.Time{}, false
	}
	var ms [8]byte
	copy(ms[8-timeBytes:], raw[:timeBytes])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(ms[:]))).UTC(), true
}
