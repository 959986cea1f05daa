package apptest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/formward/formward/ports"
)

// Passwords is a password hasher (the harness's caller passes the real one) that remembers
// which hashes Verify was asked about, so tests can see that every path does the same work.
type Passwords struct {
	ports.PasswordHasher
	mu       sync.Mutex
	verified []string
	entered  chan struct{} // see Hold
	release  chan struct{}
}

func (h *Passwords) Verify(encoded, password string) bool {
	h.mu.Lock()
	h.verified = append(h.verified, encoded)
	entered, release := h.entered, h.release
	h.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
		<-release
	}
	return h.PasswordHasher.Verify(encoded, password)
}

// Hold makes every Verify from now on announce itself on the returned channel and wait until
// the returned release is called (at the latest when the test ends; Verify no longer waits
// after it), so a test sees how many passwords are being checked at once.
func (h *Passwords) Hold(t *testing.T) (entered <-chan struct{}, release func()) {
	ch, rel := make(chan struct{}, 100), make(chan struct{})
	h.mu.Lock()
	h.entered, h.release = ch, rel
	h.mu.Unlock()
	release = sync.OnceFunc(func() {
		h.mu.Lock()
		h.entered, h.release = nil, nil
		h.mu.Unlock()
		close(rel)
	})
	t.Cleanup(release)
	return ch, release
}

func (h *Passwords) Reset() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.verified
	h.verified = nil
	return v
}

// OIDC stands in for the identity provider: each code maps to an identity, or to an error
// (as an unverified email is).
type OIDC struct {
	Identities map[string]ports.OIDCIdentity
	Refusals   map[string]error
	// down makes AuthURL return "", as the adapter does while discovery fails.
	Down bool
}

func (f *OIDC) AuthURL(state, nonce, verifier string) string {
	if f.Down {
		return ""
	}
	return "https://idp.example/authorize?state=" + state + "&nonce=" + nonce + "&challenge-of=" + verifier
}

func (f *OIDC) Exchange(_ context.Context, code, verifier, nonce string) (ports.OIDCIdentity, error) {
	if verifier == "" || nonce == "" {
		return ports.OIDCIdentity{}, errors.New("missing verifier or nonce")
	}
	if err, ok := f.Refusals[code]; ok {
		return ports.OIDCIdentity{}, err
	}
	id, ok := f.Identities[code]
	if !ok {
		return ports.OIDCIdentity{}, errors.New("invalid_grant")
	}
	return id, nil
}

// Mailer keeps the mail it sends.
type Mailer struct {
	mu   sync.Mutex
	Sent []ports.Mail
	// refuse is how many of the next sends fail, as a relay that is down does.
	Refuse int
}

func (m *Mailer) Send(_ context.Context, mail ports.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Refuse > 0 {
		m.Refuse--
		return errors.New("451 try again later")
	}
	m.Sent = append(m.Sent, mail)
	return nil
}
