package ports

import (
	"context"
	"time"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/domain/workspace"
)

// UserRepository stores the people who sign in. Emails are unique (normalised lower case).
type UserRepository interface {
	// Create stores a new user, with a first membership when m is not nil, and the audit
	// events, in one transaction; a taken email gives user.ErrEmailTaken, a taken single
	// sign-on identity user.ErrIdentityTaken (both conflicts).
	Create(ctx context.Context, u *user.User, m *member.Membership, events ...audit.Event) error
	// Get returns the user or domain.ErrNotFound.
	Get(ctx context.Context, id string) (*user.User, error)
	// FindByEmail returns the user with this normalised email or domain.ErrNotFound.
	FindByEmail(ctx context.Context, email string) (*user.User, error)
	// FindByOIDCSubject returns the user linked to this issuer subject or domain.ErrNotFound.
	FindByOIDCSubject(ctx context.Context, subject string) (*user.User, error)
	// Count returns how many users exist (zero means first run).
	Count(ctx context.Context) (int64, error)
	// Update loads and locks the user, lets change modify it, and stores it with the effects
	// change returns (audit events only: accounts have no outbox), in one transaction; a taken
	// email or identity gives the errors Create gives.
	Update(ctx context.Context, id string, change func(*user.User) (Effects, error)) (*user.User, error)
}

// Member is a membership with the person it belongs to, as lists show it.
type Member struct {
	Membership *member.Membership
	User       *user.User
}

// WorkspaceMembership is one workspace a user belongs to, for the workspace switcher.
type WorkspaceMembership struct {
	Membership *member.Membership
	Workspace  *workspace.Workspace
}

// MembershipRepository stores memberships. Changes that could remove the last owner run under a
// lock on the workspace's memberships, so two concurrent demotions cannot both pass.
type MembershipRepository interface {
	// Create stores a membership with its audit events; a second membership of the same user in
	// the same workspace gives member.ErrAlreadyMember (a conflict).
	Create(ctx context.Context, m *member.Membership, events ...audit.Event) error
	// Get returns one membership of the workspace or domain.ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Member, error)
	// Find returns the user's membership of the workspace or domain.ErrNotFound.
	Find(ctx context.Context, workspaceID, userID string) (*member.Membership, error)
	// List returns the workspace's members, oldest first.
	List(ctx context.Context, workspaceID string, page Page) ([]Member, error)
	// ForUser returns every workspace the user belongs to, oldest membership first.
	ForUser(ctx context.Context, userID string) ([]WorkspaceMembership, error)
	// Update locks the workspace's memberships, passes change the membership and the number of
	// owners, and stores the result with the effects change returns (audit events only:
	// accounts have no outbox).
	Update(ctx context.Context, workspaceID, id string, change func(m *member.Membership, owners int) (Effects, error)) (Member, error)
	// Delete locks as Update does, lets check refuse, then removes the membership, every
	// session of that user in that workspace and their column choices of its responses
	// tables, with the audit events check returns.
	Delete(ctx context.Context, workspaceID, id string, check func(m *member.Membership, owners int) ([]audit.Event, error)) error
	// Count returns the number of members of the workspace.
	Count(ctx context.Context, workspaceID string) (int64, error)
}

// InvitationAcceptance is what accepting an invitation creates: the user when the person has
// no account yet (nil otherwise), the membership and the audit events.
type InvitationAcceptance struct {
	NewUser    *user.User
	Membership *member.Membership
	Events     []audit.Event
}

// InvitationRepository stores invitations (only the hash of their token).
type InvitationRepository interface {
	// Create stores a new invitation with its audit events.
	Create(ctx context.Context, inv *invitation.Invitation, events ...audit.Event) error
	// Get returns an invitation of the workspace or domain.ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (*invitation.Invitation, error)
	// FindByToken returns the invitation whose token hashes to tokenHash or domain.ErrNotFound.
	FindByToken(ctx context.Context, tokenHash []byte) (*invitation.Invitation, error)
	// ListPending returns the workspace's invitations neither accepted nor expired at now, newest first.
	ListPending(ctx context.Context, workspaceID string, now time.Time, page Page) ([]*invitation.Invitation, error)
	// Accept locks the invitation by its token hash, passes it and the existing user with its
	// email (nil when there is none) to accept, and stores the invitation as accepted together
	// with what accept returns, in one transaction. Of concurrent calls, one succeeds; the others
	// see the invitation spent.
	Accept(ctx context.Context, tokenHash []byte, accept func(inv *invitation.Invitation, existing *user.User) (InvitationAcceptance, error)) (InvitationAcceptance, error)
	// Delete withdraws a pending invitation with its audit events; domain.ErrNotFound when absent.
	Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error
}

// SessionRepository stores dashboard sessions, found by the hash of the cookie's token.
type SessionRepository interface {
	Create(ctx context.Context, s *session.Session) error
	// FindByToken returns the session or domain.ErrNotFound.
	FindByToken(ctx context.Context, tokenHash []byte) (*session.Session, error)
	// Touch records activity and, when workspaceID is not empty, switches the workspace.
	Touch(ctx context.Context, id string, at time.Time, workspaceID string) error
	// Delete ends one session.
	Delete(ctx context.Context, id string) error
	// DeleteForUser ends every session of the user except keepID (empty: all).
	DeleteForUser(ctx context.Context, userID, keepID string) error
	// Purge removes sessions whose idle or absolute limit passed before now.
	Purge(ctx context.Context, now time.Time) (int64, error)
}

// AuditQuery filters a workspace's audit log; bounds are exclusive.
type AuditQuery struct {
	Page   Page
	Action string
	// ActorID keeps the events of one actor (a user or API key ID).
	ActorID       string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
}

// AuditLog reads the audit log and appends events that record no other change (sign-ins).
// Events that record a change are written by that change's repository, in its transaction.
type AuditLog interface {
	Append(ctx context.Context, events ...audit.Event) error
	// List returns events newest first.
	List(ctx context.Context, workspaceID string, q AuditQuery) ([]audit.Event, error)
	// Purge removes events created before the time (they are kept 400 days).
	Purge(ctx context.Context, before time.Time) (int64, error)
}

// SignInThrottle counts attempts per subject (an account's email hash, an IP hash) in a
// sliding window shared by every process. An attempt takes its place before it is evaluated
// (a password checked, a reset link asked for), so attempts sent at once cannot all pass the
// count before the first of them is written; an attempt that proves to be no failure gives
// its place back.
type SignInThrottle interface {
	// Reserve counts each subject's places taken after since. When every count is below limit
	// it takes one place at `at` for each subject, all under id, and returns ok. Otherwise it
	// takes none and returns, as freeFrom, the time of the place whose leaving the window frees
	// one (the latest such time over the subjects at the limit). The counts and the taking are
	// one step: of concurrent calls, in one process or many, at most limit get a place.
	Reserve(ctx context.Context, id string, at, since time.Time, limit int, subjects ...string) (ok bool, freeFrom time.Time, err error)
	// Release gives back the places taken under id (the attempt succeeded); none is no error.
	// It reports contested when, since they were taken, one of their subjects refused an
	// attempt (its count was full) or another attempt took a place on the subject watched (the
	// account): this attempt was evaluated during a burst and is to be refused too.
	Release(ctx context.Context, id, watched string) (contested bool, err error)
	// Purge forgets places taken before the time.
	Purge(ctx context.Context, before time.Time) error
}

// QueuedAccountMail is account mail kept in the account mail outbox until a sender sends it
// after the request that asked for it has been answered. Payload is sealed by the application;
// what it holds depends on Kind.
type QueuedAccountMail struct {
	ID      string
	Kind    string
	Payload []byte
	// Attempts is how many sends were tried already.
	Attempts  int
	CreatedAt time.Time
}

// AccountMailOutbox keeps account mail (password links) between the request and its sending,
// in the database, so it survives restarts and several senders may share it.
type AccountMailOutbox interface {
	// Add stores mail due at once.
	Add(ctx context.Context, m QueuedAccountMail) error
	// Claim takes up to limit items due at now, oldest first, and hides them from other
	// senders until now+lease.
	Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]QueuedAccountMail, error)
	// Retry makes a claimed item due again at the time, with the attempts made so far.
	Retry(ctx context.Context, id string, attempts int, at time.Time) error
	// Delete forgets an item: sent, nothing to send, or given up.
	Delete(ctx context.Context, id string) error
}

// PasswordHasher hashes passwords with argon2id and checks them in constant time.
type PasswordHasher interface {
	Hash(password string) (string, error)
	// Verify reports whether password matches the encoded hash; an empty hash never matches
	// but takes the same time.
	Verify(encoded, password string) bool
}

// TOTP makes and checks time-based one-time codes (RFC 6238).
type TOTP interface {
	// Generate returns a new secret and its otpauth:// URL for authenticator apps.
	Generate(issuer, account string) (secret, url string, err error)
	// Validate checks a code against the secret at now (allowing one step of skew).
	Validate(secret, code string, now time.Time) bool
}

// OIDCIdentity is a person the OpenID provider vouched for.
type OIDCIdentity struct {
	Subject string
	Email   string
	Name    string
}

// OIDCProvider runs the authorization code flow with PKCE against the configured issuer.
type OIDCProvider interface {
	// AuthURL returns where to send the browser, for the state, nonce and PKCE verifier.
	AuthURL(state, nonce, verifier string) string
	// Exchange swaps the code for tokens, checks the ID token (signature, audience, nonce)
	// and returns the identity; an unverified email is an error.
	Exchange(ctx context.Context, code, verifier, nonce string) (OIDCIdentity, error)
}

// Mail is one message for a person (invitations, password resets).
type Mail struct {
	To      string
	Subject string
	Text    string
}

// Mailer sends account mail; nil when SMTP is not configured.
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}

// UsageReader measures a workspace against its plan.
type UsageReader interface {
	Usage(ctx context.Context, workspaceID string) (workspace.Usage, error)
}

// Token purposes.
const (
	// TokenSetup creates the first owner (no user yet; UserID is empty).
	TokenSetup = "setup"
	// TokenPassword lets a person set a password (reset, or a scripted install).
	TokenPassword = "password"
	// TokenTwoFactor holds a TOTP secret (sealed, in Data) between setup and confirmation.
	TokenTwoFactor = "two_factor"
)

// UserToken is a one-time token kept only as the hash of its value.
type UserToken struct {
	Purpose   string
	TokenHash []byte
	UserID    string
	Data      []byte
	ExpiresAt time.Time
}

// UserTokenRepository stores one-time tokens for setup, password links and pending two-factor.
type UserTokenRepository interface {
	// Put stores the token, replacing any earlier one of the same purpose and user.
	Put(ctx context.Context, t UserToken) error
	// Peek returns the unexpired token with this purpose and hash, or domain.ErrNotFound.
	Peek(ctx context.Context, purpose string, tokenHash []byte, now time.Time) (UserToken, error)
	// Spend deletes and returns the unexpired token; of concurrent calls one succeeds, the
	// others get domain.ErrNotFound.
	Spend(ctx context.Context, purpose string, tokenHash []byte, now time.Time) (UserToken, error)
	// ForUser returns the user's unexpired token of the purpose, or domain.ErrNotFound.
	ForUser(ctx context.Context, purpose, userID string, now time.Time) (UserToken, error)
}
