package web

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/formward/formward/ports"
)

// A render token proves the post follows a page view of this form: "issued.nonce.mac" with
// mac = HMAC-SHA256(key, form ID + issued + nonce). Its nonce is spent on the first post.
var (
	errTokenMissing = ports.ErrTokenMissing
	errTokenInvalid = ports.ErrTokenInvalid
	errTokenExpired = ports.ErrTokenExpired
)

// renderTokens verify the render tokens this adapter issues (ports.RenderTokens).
type renderTokens struct {
	key []byte
	ttl time.Duration
}

// Verify checks the token's signature and age; it does not spend the nonce.
func (r renderTokens) Verify(formID, token string, now time.Time) (ports.RenderToken, error) {
	t, err := parseToken(r.key, formID, token, now, r.ttl)
	if err != nil {
		return ports.RenderToken{}, err
	}
	return ports.RenderToken{Issued: t.Issued, Nonce: t.Nonce, ExpiresAt: t.Issued.Add(r.ttl)}, nil
}

type renderToken struct {
	Issued time.Time
	Nonce  string
}

func issueToken(key []byte, formID string, now time.Time) (string, renderToken, error) {
	return issueTokenFor(key, formID, now, "")
}

// issueTokenFor issues a token with the given nonce (a fresh one when empty): the pages of one
// visit (a multi-page form's steps, a form drawn again after a refused post) keep the nonce of
// its first page, so its start and the pages it reached count once per visit.
func issueTokenFor(key []byte, formID string, now time.Time, nonce string) (string, renderToken, error) {
	if nonce == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", renderToken{}, err
		}
		nonce = base64.RawURLEncoding.EncodeToString(b)
	}
	issued := strconv.FormatInt(now.Unix(), 10)
	return issued + "." + nonce + "." + tokenMAC(key, formID, issued, nonce), renderToken{Issued: time.Unix(now.Unix(), 0), Nonce: nonce}, nil
}

func tokenMAC(key []byte, formID, issued, nonce string) string {
	pool := macPoolFor(key)
	m := pool.Get().(hash.Hash)
	m.Reset()
	_, _ = io.WriteString(m, formID)
	_, _ = m.Write([]byte{0})
	_, _ = io.WriteString(m, issued)
	_, _ = m.Write([]byte{0})
	_, _ = io.WriteString(m, nonce)
	var sum [sha256.Size]byte
	mac := base64.RawURLEncoding.EncodeToString(m.Sum(sum[:0]))
	pool.Put(m)
	return mac
}

// macPool keeps HMACs of one key, its padded key hashed once (hmac's Reset restores that
// state): the token key is the same for every token of the process.
type macPool struct {
	key  []byte
	pool sync.Pool
}

var lastMACPool atomic.Pointer[macPool]

// macPoolFor is the pool of key's HMACs.
func macPoolFor(key []byte) *sync.Pool {
	if p := lastMACPool.Load(); p != nil && bytes.Equal(p.key, key) {
		return &p.pool
	}
	k := bytes.Clone(key)
	p := &macPool{key: k}
	p.pool.New = func() any { return hmac.New(sha256.New, k) }
	lastMACPool.Store(p)
	return &p.pool
}

// parseToken checks the signature and the age; it does not spend the nonce.
func parseToken(key []byte, formID, s string, now time.Time, ttl time.Duration) (renderToken, error) {
	if s == "" {
		return renderToken{}, errTokenMissing
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || !hmac.Equal([]byte(tokenMAC(key, formID, parts[0], parts[1])), []byte(parts[2])) {
		return renderToken{}, errTokenInvalid
	}
	sec, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return renderToken{}, errTokenInvalid
	}
	t := renderToken{Issued: time.Unix(sec, 0), Nonce: parts[1]}
	if now.Sub(t.Issued) > ttl || t.Issued.After(now.Add(time.Minute)) {
		return t, errTokenExpired
	}
	return t, nil
}
