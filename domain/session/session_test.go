package session_test

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/formward/formward/domain/session"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestHashToken(t *testing.T) {
	sum := sha256.Sum256([]byte("tok"))
	if !bytes.Equal(session.HashToken("tok"), sum[:]) || bytes.Equal(session.HashToken("tok"), session.HashToken("tok2")) {
		t.Fatal("HashToken is not SHA-256 of the token")
	}
}

func TestValidity(t *testing.T) {
	s := session.New("ses_1", session.HashToken("tok"), "usr_1", "ws_1", t0.In(time.FixedZone("X", 3600)))
	if s.ID() != "ses_1" || s.UserID() != "usr_1" || s.WorkspaceID() != "ws_1" || !s.CreatedAt().Equal(t0) || !s.LastSeenAt().Equal(t0) ||
		s.CreatedAt().Location() != time.UTC {
		t.Fatalf("session = %+v", s)
	}
	if !s.Valid(t0) || !s.Valid(t0.Add(session.IdleTimeout-time.Millisecond)) {
		t.Fatal("a fresh session is not valid")
	}
	if s.Valid(t0.Add(session.IdleTimeout)) {
		t.Fatal("valid after 12 idle hours")
	}
	if !s.ExpiresAt().Equal(t0.Add(session.IdleTimeout)) {
		t.Fatalf("expires at %v", s.ExpiresAt())
	}

	// Active every few hours: the idle limit moves, the absolute one does not.
	active := session.UnmarshalFromDatabase("ses_2", nil, "usr_1", "", t0, t0.Add(session.AbsoluteTimeout-time.Hour))
	if !active.Valid(t0.Add(session.AbsoluteTimeout - time.Millisecond)) {
		t.Fatal("an active session ended before 30 days")
	}
	if active.Valid(t0.Add(session.AbsoluteTimeout)) {
		t.Fatal("valid after 30 days")
	}
	if !active.ExpiresAt().Equal(t0.Add(session.AbsoluteTimeout)) {
		t.Fatalf("expires at %v, want the absolute limit", active.ExpiresAt())
	}
}

func TestNeedsTouch(t *testing.T) {
	s := session.New("ses_1", session.HashToken("tok"), "usr_1", "", t0)
	if s.NeedsTouch(t0) || s.NeedsTouch(t0.Add(session.TouchEvery-time.Millisecond)) {
		t.Fatal("touch within a minute")
	}
	if !s.NeedsTouch(t0.Add(session.TouchEvery)) {
		t.Fatal("no touch after a minute")
	}
}
