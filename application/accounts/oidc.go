package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// ErrOIDCNotConfigured means OpenID Connect sign-in is off (no issuer configured).
var ErrOIDCNotConfigured = errors.New("single sign-on is not configured")

// ErrOIDCRefused means the identity provider's answer was not accepted: the exchange failed,
// the email is missing or unverified, or the account is linked to another identity.
var ErrOIDCRefused = errors.New("the identity provider's sign-in was not accepted")

// ErrNoAccount means the identity provider vouched for a person who has no account here.
// Sign-up is by invitation: accepting one creates the account, after which single sign-on works.
var ErrNoAccount = errors.New("there is no account for this email; ask for an invitation")

// StartOIDC begins an OpenID Connect sign-in.
type StartOIDC struct{}

// OIDCStart is where to send the browser and what to keep (in a short-lived signed cookie)
// until the provider sends it back: State to match the callback, Nonce for the ID token, and
// the PKCE Verifier.
type OIDCStart struct {
	URL      string
	State    string
	Nonce    string
	Verifier string
}

// StartOIDCHandler begins OpenID Connect sign-ins.
type StartOIDCHandler struct{ oidc ports.OIDCProvider }

// NewStartOIDCHandler makes the command; oidc is nil when single sign-on is not configured.
func NewStartOIDCHandler(oidc ports.OIDCProvider) StartOIDCHandler {
	return StartOIDCHandler{oidc: oidc}
}

// Handle makes fresh random state, nonce and verifier (256 bits each) and the provider's URL.
func (h StartOIDCHandler) Handle(_ context.Context, _ StartOIDC) (OIDCStart, error) {
	if h.oidc == nil {
		return OIDCStart{}, ErrOIDCNotConfigured
	}
	var values [3]string
	for i := range values {
		v, err := newSecretToken()
		if err != nil {
			return OIDCStart{}, err
		}
		values[i] = v
	}
	state, nonce, verifier := values[0], values[1], values[2]
	url := h.oidc.AuthURL(state, nonce, verifier)
	if url == "" {
		// The provider's discovery failed: there is nowhere to send the browser yet.
		return OIDCStart{}, ErrOIDCUnavailable
	}
	return OIDCStart{URL: url, State: state, Nonce: nonce, Verifier: verifier}, nil
}

// ErrOIDCUnavailable means the OpenID provider cannot be reached right now; try again shortly.
var ErrOIDCUnavailable = fmt.Errorf("%w: the single sign-on provider cannot be reached", domain.ErrUnavailable)

// FinishOIDC completes an OpenID Connect sign-in with the provider's code and what StartOIDC
// returned (the adapter has already matched the state).
type FinishOIDC struct {
	Code     string
	Verifier string
	Nonce    string
	IP       string
}

// FinishOIDCHandler completes OpenID Connect sign-ins.
type FinishOIDCHandler struct {
	oidc    ports.OIDCProvider
	users   ports.UserRepository
	starter sessionStarter
}

// NewFinishOIDCHandler makes the command; oidc is nil when single sign-on is not configured.
func NewFinishOIDCHandler(oidc ports.OIDCProvider, users ports.UserRepository, memberships ports.MembershipRepository,
	sessions ports.SessionRepository, auditLog ports.AuditLog, ids ports.IDs, clock ports.Clock, ipHasher ports.IPHasher) FinishOIDCHandler {
	return FinishOIDCHandler{oidc: oidc, users: users, starter: newSessionStarter(sessions, memberships, auditLog, ids, clock, ipHasher)}
}

// Handle exchanges the code and signs in the account linked to the provider's subject, or else
// the account with the provider's verified email (linking the subject to it). A person without
// an account gets ErrNoAccount: single sign-on never creates accounts.
func (h FinishOIDCHandler) Handle(ctx context.Context, cmd FinishOIDC) (SignedIn, error) {
	if h.oidc == nil {
		return SignedIn{}, ErrOIDCNotConfigured
	}
	id, err := h.oidc.Exchange(ctx, cmd.Code, cmd.Verifier, cmd.Nonce)
	if err != nil {
		return SignedIn{}, fmt.Errorf("%w: %w", ErrOIDCRefused, err)
	}
	if id.Subject == "" {
		return SignedIn{}, fmt.Errorf("%w: no subject", ErrOIDCRefused)
	}
	u, err := h.users.FindByOIDCSubject(ctx, id.Subject)
	if err == nil {
		return h.starter.start(ctx, u, "", cmd.IP)
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return SignedIn{}, fmt.Errorf("find user: %w", err)
	}
	email, err := user.ParseEmail(id.Email)
	if err != nil {
		return SignedIn{}, fmt.Errorf("%w: no usable email", ErrOIDCRefused)
	}
	u, err = h.users.FindByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		return SignedIn{}, ErrNoAccount
	}
	if err != nil {
		return SignedIn{}, fmt.Errorf("find user: %w", err)
	}
	if u.OIDCSubject() != "" && u.OIDCSubject() != id.Subject {
		return SignedIn{}, fmt.Errorf("%w: the account is linked to another identity", ErrOIDCRefused)
	}
	u, err = h.users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
		if u.OIDCSubject() != "" && u.OIDCSubject() != id.Subject {
			return ports.Effects{}, fmt.Errorf("%w: the account is linked to another identity", ErrOIDCRefused)
		}
		u.LinkOIDC(id.Subject)
		return ports.Effects{}, nil
	})
	if err != nil {
		return SignedIn{}, fmt.Errorf("link identity: %w", err)
	}
	return h.starter.start(ctx, u, "", cmd.IP)
}
