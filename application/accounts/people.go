package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Validity of the one-time links.
const (
	// SetupTokenValidity is how long the first-run setup link works.
	SetupTokenValidity = 24 * time.Hour
	// SetPasswordValidity is how long a link made by `formward users create` works.
	SetPasswordValidity = 24 * time.Hour
	// PasswordResetValidity is how long an emailed reset link works.
	PasswordResetValidity = time.Hour
)

// ErrSetupClosed means the first-run setup is over (a user exists) or its link is wrong or
// expired.
var ErrSetupClosed = errors.New("setup is closed or this setup link is not valid")

// ErrLinkNotUsable means a password link expired, was already used, or never existed.
var ErrLinkNotUsable = errors.New("this link has expired or was already used")

// IssueSetupToken asks for the first-run setup link's token.
type IssueSetupToken struct{}

// IssueSetupTokenHandler issues setup tokens.
type IssueSetupTokenHandler struct {
	users  ports.UserRepository
	tokens ports.UserTokenRepository
	clock  ports.Clock
}

// NewIssueSetupTokenHandler makes the command.
func NewIssueSetupTokenHandler(users ports.UserRepository, tokens ports.UserTokenRepository, clock ports.Clock) IssueSetupTokenHandler {
	return IssueSetupTokenHandler{users: users, tokens: tokens, clock: clock}
}

// Handle returns a fresh setup token valid for 24 hours (replacing any earlier one) while no
// user exists; issued is false, and nothing is stored, once somebody has an account.
func (h IssueSetupTokenHandler) Handle(ctx context.Context, _ IssueSetupToken) (token string, issued bool, err error) {
	n, err := h.users.Count(ctx)
	if err != nil {
		return "", false, fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return "", false, nil
	}
	token, err = newSecretToken()
	if err != nil {
		return "", false, err
	}
	err = h.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenSetup, TokenHash: hashToken(token),
		ExpiresAt: h.clock.Now().Add(SetupTokenValidity)})
	if err != nil {
		return "", false, fmt.Errorf("store setup token: %w", err)
	}
	return token, true, nil
}

// SetupFirstOwner creates the first account, from the setup link.
type SetupFirstOwner struct {
	Token         string
	Email         string
	Name          string
	Password      string
	WorkspaceName string
	IP            string
}

// SetupFirstOwnerHandler runs the first-run setup.
type SetupFirstOwnerHandler struct {
	users       ports.UserRepository
	workspaces  ports.WorkspaceRepository
	tokens      ports.UserTokenRepository
	passwords   ports.PasswordHasher
	ids         ports.IDs
	clock       ports.Clock
	defaultPlan workspace.Plan
	starter     sessionStarter
}

// NewSetupFirstOwnerHandler makes the command; defaultPlan is the plan of the workspace it
// creates when there is none yet.
func NewSetupFirstOwnerHandler(users ports.UserRepository, memberships ports.MembershipRepository, workspaces ports.WorkspaceRepository,
	sessions ports.SessionRepository, tokens ports.UserTokenRepository, auditLog ports.AuditLog, passwords ports.PasswordHasher,
	ids ports.IDs, clock ports.Clock, ipHasher ports.IPHasher, defaultPlan workspace.Plan) SetupFirstOwnerHandler {
	return SetupFirstOwnerHandler{users: users, workspaces: workspaces, tokens: tokens, passwords: passwords, ids: ids,
		clock: clock, defaultPlan: defaultPlan, starter: newSessionStarter(sessions, memberships, auditLog, ids, clock, ipHasher)}
}

// Handle creates the owner of the oldest workspace (created, named WorkspaceName, when there is
// none; renamed to WorkspaceName when one exists and a name is given) and signs them in. It
// works once: the token is spent, and it refuses as soon as any user exists.
func (h SetupFirstOwnerHandler) Handle(ctx context.Context, cmd SetupFirstOwner) (SignedIn, error) {
	now := h.clock.Now()
	if n, err := h.users.Count(ctx); err != nil {
		return SignedIn{}, fmt.Errorf("count users: %w", err)
	} else if n > 0 {
		return SignedIn{}, ErrSetupClosed
	}
	if cmd.Token == "" {
		return SignedIn{}, ErrSetupClosed
	}
	if _, err := h.tokens.Peek(ctx, ports.TokenSetup, hashToken(cmd.Token), now); errors.Is(err, domain.ErrNotFound) {
		return SignedIn{}, ErrSetupClosed
	} else if err != nil {
		return SignedIn{}, fmt.Errorf("check setup token: %w", err)
	}
	u, err := user.New(h.ids.New(ports.PrefixUser), cmd.Email, cmd.Name, now)
	vs, _ := domain.ViolationsOf(err)
	pw, _ := domain.ViolationsOf(user.CheckPassword(cmd.Password))
	vs = append(vs, pw...)
	name := strings.TrimSpace(cmd.WorkspaceName)
	if name != "" {
		_, err := workspace.New("check", name, h.defaultPlan, now)
		ws, _ := domain.ViolationsOf(err)
		for _, v := range ws {
			vs.Add("workspace_name", v.Code, v.Message)
		}
	}
	if err := vs.Err(); err != nil {
		return SignedIn{}, err
	}
	hash, err := h.passwords.Hash(cmd.Password)
	if err != nil {
		return SignedIn{}, fmt.Errorf("hash password: %w", err)
	}
	u.SetPasswordHash(hash, now)
	// Spending is atomic: of two people racing through the link, one gets on.
	if _, err := h.tokens.Spend(ctx, ports.TokenSetup, hashToken(cmd.Token), now); errors.Is(err, domain.ErrNotFound) {
		return SignedIn{}, ErrSetupClosed
	} else if err != nil {
		return SignedIn{}, fmt.Errorf("spend setup token: %w", err)
	}
	w, err := h.ownWorkspace(ctx, name, now)
	if err != nil {
		return SignedIn{}, err
	}
	m, err := member.New(h.ids.New(ports.PrefixMembership), w.ID(), u.ID(), member.RoleOwner, now)
	if err != nil {
		return SignedIn{}, err
	}
	joined, err := audit.New(h.ids.New(ports.PrefixAudit), w.ID(), audit.MemberJoined, userActor(u),
		&audit.Target{Type: "membership", ID: m.ID()}, hashIP(h.starter.ipHasher, cmd.IP),
		map[string]any{"role": string(m.Role()), "via": "setup"}, now)
	if err != nil {
		return SignedIn{}, err
	}
	if err := h.users.Create(ctx, u, m, joined); err != nil {
		return SignedIn{}, fmt.Errorf("create first owner: %w", err)
	}
	return h.starter.start(ctx, u, w.ID(), cmd.IP)
}

// ownWorkspace returns the workspace the first owner gets: the oldest (renamed when a name is
// given), or a new one.
func (h SetupFirstOwnerHandler) ownWorkspace(ctx context.Context, name string, now time.Time) (*workspace.Workspace, error) {
	w, err := h.workspaces.Oldest(ctx)
	if errors.Is(err, domain.ErrNotFound) {
		if name == "" {
			name = workspace.DefaultName
		}
		w, err = workspace.New(h.ids.New(ports.PrefixWorkspace), name, h.defaultPlan, now)
		if err != nil {
			return nil, err
		}
		if err := h.workspaces.Create(ctx, w); err != nil {
			return nil, fmt.Errorf("create workspace: %w", err)
		}
		return w, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find workspace: %w", err)
	}
	if name == "" || name == w.Name() {
		return w, nil
	}
	return h.workspaces.Update(ctx, w.ID(), func(w *workspace.Workspace) (ports.Effects, error) {
		changed, err := w.Change(workspace.Settings{Name: &name}, now)
		if err != nil {
			return ports.Effects{}, err
		}
		e, err := audit.New(h.ids.New(ports.PrefixAudit), w.ID(), audit.WorkspaceUpdated, audit.System, &audit.Target{Type: "workspace", ID: w.ID()},
			"", map[string]any{"changed": changed, "via": "setup"}, now)
		return ports.Effects{Audit: []audit.Event{e}}, err
	})
}

// CreateUser creates an account from the command line, optionally as a member of a workspace.
// It is an operator's command (the CLI), not offered over HTTP.
type CreateUser struct {
	Email string
	Name  string
	// WorkspaceID is the workspace to join; empty means the oldest one (none: no membership).
	WorkspaceID string
	// Role in that workspace; empty means owner.
	Role string
}

// CreatedUser is the account and the one-time token of its set-password link (24 hours).
type CreatedUser struct {
	User             *user.User
	SetPasswordToken string
	// SetPasswordURL is <public URL>/app/reset-password?token=….
	SetPasswordURL string
}

// CreateUserHandler creates accounts for scripted installs.
type CreateUserHandler struct {
	users       ports.UserRepository
	memberships ports.MembershipRepository
	workspaces  ports.WorkspaceRepository
	tokens      ports.UserTokenRepository
	ids         ports.IDs
	clock       ports.Clock
	publicURL   string
}

// NewCreateUserHandler makes the command; publicURL is the base of the link it prints.
func NewCreateUserHandler(users ports.UserRepository, memberships ports.MembershipRepository, workspaces ports.WorkspaceRepository,
	tokens ports.UserTokenRepository, ids ports.IDs, clock ports.Clock, publicURL string) CreateUserHandler {
	return CreateUserHandler{users: users, memberships: memberships, workspaces: workspaces, tokens: tokens, ids: ids,
		clock: clock, publicURL: publicURL}
}

// Handle creates the user (or finds the one with that email), adds the membership when it is
// missing, and issues a set-password link.
func (h CreateUserHandler) Handle(ctx context.Context, cmd CreateUser) (CreatedUser, error) {
	now := h.clock.Now()
	role := member.RoleOwner
	if cmd.Role != "" {
		r, err := member.ParseRole(cmd.Role)
		if err != nil {
			return CreatedUser{}, err
		}
		role = r
	}
	u, err := user.New(h.ids.New(ports.PrefixUser), cmd.Email, cmd.Name, now)
	if err != nil {
		return CreatedUser{}, err
	}
	workspaceID := cmd.WorkspaceID
	if workspaceID == "" {
		w, err := h.workspaces.Oldest(ctx)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return CreatedUser{}, fmt.Errorf("find workspace: %w", err)
		}
		if w != nil {
			workspaceID = w.ID()
		}
	} else if _, err := h.workspaces.Get(ctx, workspaceID); errors.Is(err, domain.ErrNotFound) {
		return CreatedUser{}, domain.Validation("workspace_id", "not_found", "no workspace "+workspaceID)
	} else if err != nil {
		return CreatedUser{}, fmt.Errorf("find workspace: %w", err)
	}
	existing, err := h.users.FindByEmail(ctx, u.Email())
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return CreatedUser{}, fmt.Errorf("find user: %w", err)
	}
	if existing != nil {
		u = existing
	}
	var m *member.Membership
	var events []audit.Event
	if workspaceID != "" {
		_, err := h.memberships.Find(ctx, workspaceID, u.ID())
		switch {
		case errors.Is(err, domain.ErrNotFound):
			if m, err = member.New(h.ids.New(ports.PrefixMembership), workspaceID, u.ID(), role, now); err != nil {
				return CreatedUser{}, err
			}
			e, err := audit.New(h.ids.New(ports.PrefixAudit), workspaceID, audit.MemberJoined, audit.System,
				&audit.Target{Type: "membership", ID: m.ID()}, "", map[string]any{"role": string(role), "via": "cli"}, now)
			if err != nil {
				return CreatedUser{}, err
			}
			events = append(events, e)
		case err != nil:
			return CreatedUser{}, fmt.Errorf("find membership: %w", err)
		}
	}
	switch {
	case existing == nil:
		if err := h.users.Create(ctx, u, m, events...); err != nil {
			return CreatedUser{}, fmt.Errorf("create user: %w", err)
		}
	case m != nil:
		if err := h.memberships.Create(ctx, m, events...); err != nil {
			return CreatedUser{}, fmt.Errorf("add membership: %w", err)
		}
	}
	token, err := newSecretToken()
	if err != nil {
		return CreatedUser{}, err
	}
	err = h.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenPassword, TokenHash: hashToken(token), UserID: u.ID(),
		ExpiresAt: now.Add(SetPasswordValidity)})
	if err != nil {
		return CreatedUser{}, fmt.Errorf("store set-password token: %w", err)
	}
	return CreatedUser{User: u, SetPasswordToken: token, SetPasswordURL: passwordLink(h.publicURL, token)}, nil
}

// ChangePassword changes the signed-in user's password.
type ChangePassword struct {
	Current string
	New     string
}

// ChangePasswordHandler changes passwords.
type ChangePasswordHandler struct {
	users       ports.UserRepository
	memberships ports.MembershipRepository
	sessions    ports.SessionRepository
	passwords   ports.PasswordHasher
	throttle    signInThrottle
	ids         ports.IDs
	clock       ports.Clock
}

// NewChangePasswordHandler makes the command.
func NewChangePasswordHandler(users ports.UserRepository, memberships ports.MembershipRepository, sessions ports.SessionRepository,
	throttle ports.SignInThrottle, passwords ports.PasswordHasher, ids ports.IDs, clock ports.Clock) ChangePasswordHandler {
	return ChangePasswordHandler{users: users, memberships: memberships, sessions: sessions, passwords: passwords,
		throttle: signInThrottle{throttle: throttle, ids: ids, clock: clock}, ids: ids, clock: clock}
}

// Handle checks the current password (each guess takes its place in the account's count of
// failed sign-ins first, and a right one gives it back), stores the new one, records
// user.password_changed and ends every other session.
func (h ChangePasswordHandler) Handle(ctx context.Context, cmd ChangePassword) error {
	p, u, err := signedInAccount(ctx, h.users)
	if err != nil {
		return err
	}
	now := h.clock.Now()
	attempt, err := h.throttle.reserve(ctx, signInRule, h.throttle.subjects(u.Email(), ""))
	if err != nil {
		return err
	}
	if u.PasswordHash() == "" || !h.passwords.Verify(u.PasswordHash(), cmd.Current) {
		return domain.Validation("current", "invalid_password", "the current password is wrong")
	}
	if err := h.throttle.release(ctx, signInRule, attempt); err != nil {
		return err
	}
	if err := user.CheckPassword(cmd.New); err != nil {
		return err
	}
	hash, err := h.passwords.Hash(cmd.New)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	if err := setPassword(ctx, h.users, h.memberships, h.ids, u.ID(), hash, p.IPHash, "change", now); err != nil {
		return err
	}
	if err := h.sessions.DeleteForUser(ctx, u.ID(), p.SessionID); err != nil {
		return fmt.Errorf("end other sessions: %w", err)
	}
	return nil
}

// setPassword stores a new password hash with user.password_changed in each of the user's
// workspaces.
func setPassword(ctx context.Context, users ports.UserRepository, memberships ports.MembershipRepository, ids ports.IDs,
	userID, hash, ipHash, via string, now time.Time) error {
	ms, err := memberships.ForUser(ctx, userID)
	if err != nil {
		return fmt.Errorf("load memberships: %w", err)
	}
	_, err = users.Update(ctx, userID, func(u *user.User) (ports.Effects, error) {
		u.SetPasswordHash(hash, now)
		events, err := userEvents(ids, ms, audit.UserPasswordChanged, u, ipHash, map[string]any{"via": via}, now)
		return ports.Effects{Audit: events}, err
	})
	if err != nil {
		return fmt.Errorf("store password: %w", err)
	}
	return nil
}

// RequestPasswordReset asks for a reset link by email.
type RequestPasswordReset struct {
	Email string
	// IP is the client's address; requests count per IP hash as well as per email.
	IP string
}

// RequestPasswordResetHandler queues reset links in the account mail outbox.
type RequestPasswordResetHandler struct {
	outbox   ports.AccountMailOutbox
	throttle signInThrottle
	cipher   ports.Cipher
	ids      ports.IDs
	clock    ports.Clock
	wake     func()
}

// NewRequestPasswordResetHandler makes the command; outbox is nil when no mail can be sent
// (SMTP is not configured), and then nothing is queued. wake tells the sender that mail was
// queued.
func NewRequestPasswordResetHandler(outbox ports.AccountMailOutbox, throttle ports.SignInThrottle, cipher ports.Cipher,
	ids ports.IDs, clock ports.Clock, ipHasher ports.IPHasher, wake func()) RequestPasswordResetHandler {
	if wake == nil {
		wake = func() {}
	}
	return RequestPasswordResetHandler{outbox: outbox, throttle: signInThrottle{throttle: throttle, ids: ids, clock: clock, ipHasher: ipHasher},
		cipher: cipher, ids: ids, clock: clock, wake: wake}
}

// Handle queues the request in the account mail outbox, with the address sealed, and returns:
// it never looks the address up, so it does the same work, and answers the same, whether or
// not the address has an account. The AccountMailSender looks it up after the answer and
// mails a one-time link valid for an hour when there is an account. Requests count
// PasswordResetLimit per PasswordResetWindow per address and per IP hash; one over the limit
// queues nothing and returns nil all the same.
func (h RequestPasswordResetHandler) Handle(ctx context.Context, cmd RequestPasswordReset) error {
	if h.outbox == nil {
		return nil
	}
	email := normaliseEmail(cmd.Email)
	subjects := h.throttle.subjects(email, cmd.IP)
	for i, s := range subjects {
		subjects[i] = "reset-" + s
	}
	if _, err := h.throttle.reserve(ctx, passwordResetRule, subjects); err != nil {
		if errors.Is(err, ErrThrottled) {
			return nil
		}
		return err
	}
	id := h.ids.New(PrefixAccountMail)
	sealed, err := h.cipher.Seal(ctx, accountsKeyScope, []byte(email), accountMailAAD(id))
	if err != nil {
		return fmt.Errorf("seal password link request: %w", err)
	}
	err = h.outbox.Add(ctx, ports.QueuedAccountMail{ID: id, Kind: accountMailPasswordLink, Payload: sealed, CreatedAt: h.clock.Now()})
	if err != nil {
		return fmt.Errorf("queue password link: %w", err)
	}
	h.wake()
	return nil
}

// ResetPassword sets a new password through a one-time link (a reset, or a link from
// `formward users create`).
type ResetPassword struct {
	Token    string
	Password string
	// IP is the client's address, kept only as its hash in the audit log.
	IP string
}

// ResetPasswordHandler sets passwords from links.
type ResetPasswordHandler struct {
	users       ports.UserRepository
	memberships ports.MembershipRepository
	sessions    ports.SessionRepository
	tokens      ports.UserTokenRepository
	passwords   ports.PasswordHasher
	ids         ports.IDs
	clock       ports.Clock
	ipHasher    ports.IPHasher
}

// NewResetPasswordHandler makes the command.
func NewResetPasswordHandler(users ports.UserRepository, memberships ports.MembershipRepository, sessions ports.SessionRepository,
	tokens ports.UserTokenRepository, passwords ports.PasswordHasher, ids ports.IDs, clock ports.Clock, ipHasher ports.IPHasher) ResetPasswordHandler {
	return ResetPasswordHandler{users: users, memberships: memberships, sessions: sessions, tokens: tokens, passwords: passwords,
		ids: ids, clock: clock, ipHasher: ipHasher}
}

// Handle checks the new password, spends the link (once), stores the password and ends every
// session of the user.
func (h ResetPasswordHandler) Handle(ctx context.Context, cmd ResetPassword) error {
	now := h.clock.Now()
	if cmd.Token == "" {
		return ErrLinkNotUsable
	}
	if _, err := h.tokens.Peek(ctx, ports.TokenPassword, hashToken(cmd.Token), now); errors.Is(err, domain.ErrNotFound) {
		return ErrLinkNotUsable
	} else if err != nil {
		return fmt.Errorf("check link: %w", err)
	}
	if err := user.CheckPassword(cmd.Password); err != nil {
		return err
	}
	hash, err := h.passwords.Hash(cmd.Password)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	t, err := h.tokens.Spend(ctx, ports.TokenPassword, hashToken(cmd.Token), now)
	if errors.Is(err, domain.ErrNotFound) {
		return ErrLinkNotUsable
	}
	if err != nil {
		return fmt.Errorf("spend link: %w", err)
	}
	if err := setPassword(ctx, h.users, h.memberships, h.ids, t.UserID, hash, hashIP(h.ipHasher, cmd.IP), "link", now); err != nil {
		return err
	}
	if err := h.sessions.DeleteForUser(ctx, t.UserID, ""); err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	return nil
}

// newSecretToken returns 256 random bits, URL-safe base64: session cookies, setup, password and
// invitation links, API key secrets. Only a hash of it is stored.
func newSecretToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// hashToken is the form of a one-time token kept at rest.
func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// passwordLink is the set-password page for a token.
func passwordLink(publicURL, token string) string {
	return strings.TrimRight(publicURL, "/") + "/app/reset-password?token=" + url.QueryEscape(token)
}

// normaliseEmail is the lookup form of a typed address (ParseEmail without the shape check, so
// a malformed address is simply unknown).
func normaliseEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// hashIP returns the keyed hash of ip, or "" when there is no address or no hasher.
func hashIP(h ports.IPHasher, ip string) string {
	if ip == "" || h == nil {
		return ""
	}
	return h.Hash(ip)
}

// userActor names a person in the audit log.
func userActor(u *user.User) audit.Actor {
	name := u.Name()
	if name == "" {
		name = u.Email()
	}
	return audit.Actor{Type: audit.ActorUser, ID: u.ID(), Name: name}
}

// userEvents builds one event about u, acted by u, in each workspace u belongs to.
func userEvents(ids ports.IDs, memberships []ports.WorkspaceMembership, action audit.Action, u *user.User, ipHash string,
	details map[string]any, now time.Time) ([]audit.Event, error) {
	events := make([]audit.Event, 0, len(memberships))
	for _, wm := range memberships {
		d := make(map[string]any, len(details))
		for k, v := range details {
			d[k] = v
		}
		e, err := audit.New(ids.New(ports.PrefixAudit), wm.Membership.WorkspaceID(), action, userActor(u),
			&audit.Target{Type: "user", ID: u.ID()}, ipHash, d, now)
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	return events, nil
}
