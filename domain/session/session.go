// Package session models a signed-in dashboard session: kept server-side, found by the hash of
// the cookie's random token, ended after 12 idle hours or 30 days in all.
package session

import (
	"crypto/sha256"
	"time"
)

// Expiry of every session.
const (
	IdleTimeout     = 12 * time.Hour
	AbsoluteTimeout = 30 * 24 * time.Hour
	// TouchEvery bounds how often a request moves last_seen forward, so reads stay reads.
	TouchEvery = time.Minute
)

// HashToken is the form of a session token kept at rest (tokens carry 256 random bits).
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Session is one signed-in browser.
type Session struct {
	id          string
	tokenHash   []byte
	userID      string
	workspaceID string
	createdAt   time.Time
	lastSeenAt  time.Time
}

// New starts a session for the user in a workspace (empty when the user has none yet).
func New(id string, tokenHash []byte, userID, workspaceID string, now time.Time) *Session {
	now = now.UTC()
	return &Session{id: id, tokenHash: tokenHash, userID: userID, workspaceID: workspaceID, createdAt: now, lastSeenAt: now}
}

// UnmarshalFromDatabase rebuilds a stored session.
func UnmarshalFromDatabase(id string, tokenHash []byte, userID, workspaceID string, createdAt, lastSeenAt time.Time) *Session {
	return &Session{id: id, tokenHash: tokenHash, userID: userID, workspaceID: workspaceID, createdAt: createdAt.UTC(), lastSeenAt: lastSeenAt.UTC()}
}

// Valid reports whether the session is neither idle too long nor too old.
func (s *Session) Valid(now time.Time) bool {
	return now.Before(s.lastSeenAt.Add(IdleTimeout)) && now.Before(s.createdAt.Add(AbsoluteTimeout))
}

// NeedsTouch reports whether last_seen should be written now.
func (s *Session) NeedsTouch(now time.Time) bool { return now.Sub(s.lastSeenAt) >= TouchEvery }

// ExpiresAt is when the session ends if unused: the sooner of the idle and absolute limits.
func (s *Session) ExpiresAt() time.Time {
	idle, abs := s.lastSeenAt.Add(IdleTimeout), s.createdAt.Add(AbsoluteTimeout)
	if idle.Before(abs) {
		return idle
	}
	return abs
}

// ID returns the session ID (prefix ses_, never the cookie's token).
func (s *Session) ID() string { return s.id }

// TokenHash returns the hash of the cookie's token.
func (s *Session) TokenHash() []byte { return s.tokenHash }

// UserID returns who is signed in.
func (s *Session) UserID() string { return s.userID }

// WorkspaceID returns the workspace the person is looking at.
func (s *Session) WorkspaceID() string { return s.workspaceID }

// CreatedAt returns the sign-in time.
func (s *Session) CreatedAt() time.Time { return s.createdAt }

// LastSeenAt returns the last recorded activity.
func (s *Session) LastSeenAt() time.Time { return s.lastSeenAt }
