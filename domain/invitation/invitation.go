// Package invitation models an invitation to join a workspace: an email, a role, a single-use
// token kept only as a hash, valid for seven days.
package invitation

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/user"
)

// Validity is how long an invitation may be accepted.
const Validity = 7 * 24 * time.Hour

// ErrNotUsable means the invitation expired, was accepted or withdrawn. It is also what an
// unknown token gives, so a guess learns nothing.
var ErrNotUsable = errors.New("this invitation has expired or was already used")

// HashToken is the form of an accept token kept at rest (tokens carry 256 random bits).
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Invitation is one pending (or spent) invitation.
type Invitation struct {
	id          string
	workspaceID string
	email       string
	role        member.Role
	tokenHash   []byte
	invitedBy   string
	createdAt   time.Time
	expiresAt   time.Time
	acceptedAt  *time.Time
}

// New checks email and role and builds an invitation valid for seven days.
func New(id, workspaceID, email string, role member.Role, tokenHash []byte, invitedBy string, now time.Time) (*Invitation, error) {
	var vs domain.Violations
	e, err := user.ParseEmail(email)
	if err != nil {
		vs.Add("email", "invalid_email", "email must be a valid address")
	}
	if _, err := member.ParseRole(string(role)); err != nil {
		vs.Add("role", "invalid_value", "role must be one of owner, admin, editor, viewer")
	}
	if len(tokenHash) != sha256.Size {
		vs.Add("token", "invalid_value", "token hash must be a SHA-256 digest")
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	now = now.UTC()
	return &Invitation{id: id, workspaceID: workspaceID, email: e, role: role, tokenHash: tokenHash, invitedBy: invitedBy,
		createdAt: now, expiresAt: now.Add(Validity)}, nil
}

// UnmarshalFromDatabase rebuilds a stored invitation without re-checking it.
func UnmarshalFromDatabase(id, workspaceID, email string, role member.Role, tokenHash []byte, invitedBy string, createdAt, expiresAt time.Time, acceptedAt *time.Time) *Invitation {
	return &Invitation{id: id, workspaceID: workspaceID, email: email, role: role, tokenHash: tokenHash, invitedBy: invitedBy,
		createdAt: createdAt.UTC(), expiresAt: expiresAt.UTC(), acceptedAt: acceptedAt}
}

// Matches compares a presented token with the stored hash in constant time.
func (i *Invitation) Matches(token string) bool {
	return subtle.ConstantTimeCompare(HashToken(token), i.tokenHash) == 1
}

// Usable reports whether the invitation can still be accepted.
func (i *Invitation) Usable(now time.Time) bool {
	return i.acceptedAt == nil && now.Before(i.expiresAt)
}

// Accept spends the invitation; it fails with ErrNotUsable when expired or already used.
func (i *Invitation) Accept(now time.Time) error {
	if !i.Usable(now) {
		return ErrNotUsable
	}
	t := now.UTC()
	i.acceptedAt = &t
	return nil
}

// ID returns the invitation ID (prefix inv_).
func (i *Invitation) ID() string { return i.id }

// WorkspaceID returns the workspace the person is invited to.
func (i *Invitation) WorkspaceID() string { return i.workspaceID }

// Email returns the invited address.
func (i *Invitation) Email() string { return i.email }

// Role returns the role the person gets on accepting.
func (i *Invitation) Role() member.Role { return i.role }

// TokenHash returns the stored hash of the accept token.
func (i *Invitation) TokenHash() []byte { return i.tokenHash }

// InvitedBy returns the ID of the user or key that invited.
func (i *Invitation) InvitedBy() string { return i.invitedBy }

// CreatedAt returns when the invitation was made.
func (i *Invitation) CreatedAt() time.Time { return i.createdAt }

// ExpiresAt returns the end of its validity.
func (i *Invitation) ExpiresAt() time.Time { return i.expiresAt }

// AcceptedAt returns when it was accepted, or nil.
func (i *Invitation) AcceptedAt() *time.Time { return i.acceptedAt }
