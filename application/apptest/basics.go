package apptest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// Now is the harnesses' starting time.
var Now = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// Clock is a clock that moves only when a test sets At.
type Clock struct{ At time.Time }

func (c *Clock) Now() time.Time { return c.At }

// IDs hands out sequential IDs: prefix_0001, prefix_0002, …
type IDs struct {
	mu sync.Mutex
	n  int
}

func (s *IDs) New(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("%s_%04d", prefix, s.n)
}

// IPHasher is a keyed hash of IP addresses that remembers what it hashed.
type IPHasher struct {
	Key   []byte
	mu    sync.Mutex
	calls []string
}

func (h *IPHasher) Hash(ip string) string {
	h.mu.Lock()
	h.calls = append(h.calls, ip)
	h.mu.Unlock()
	m := hmac.New(sha256.New, h.Key)
	m.Write([]byte(ip))
	return hex.EncodeToString(m.Sum(nil))
}

// Calls returns the addresses hashed so far.
func (h *IPHasher) Calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// PageCase is one case of a list's answer to a page: so many items stored, asked for with a
// limit, WantN of them returned and WantMore saying whether more follow.
type PageCase struct {
	Stored, Limit, WantN int
	WantMore             bool
}

func (c PageCase) String() string { return fmt.Sprintf("%d stored, limit %d", c.Stored, c.Limit) }
