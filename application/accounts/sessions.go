package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/session"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// Sign-in throttling: an attempt takes its place in the failure count of its account and of
// its IP hash before its password (or two-factor code) is checked, and gives it back when they
// were right. While SignInFailureLimit places are taken within SignInWindow, attempts are
// refused until the oldest leaves the window; attempts sent at once cannot pass together.
const (
	SignInFailureLimit = 10
	SignInWindow       = 15 * time.Minute
)

// "Forgot password" throttling: PasswordResetLimit requests per PasswordResetWindow per email
// and per IP hash; the requests over it are answered alike but send nothing.
const (
	PasswordResetLimit  = 5
	PasswordResetWindow = time.Hour
)

// ErrInvalidCredentials means the email or the password (or the two-factor code) is wrong. An
// unknown email gives the same error after the same work, so nobody learns who has an account.
var ErrInvalidCredentials = errors.New("the email or password is wrong")

// ErrTwoFactorRequired means the password was right and the account asks for a TOTP or recovery
// code; no session was made. Send the same credentials again with a code.
var ErrTwoFactorRequired = errors.New("a two-factor code is required")

// ErrInvalidTwoFactorCode means the code was wrong, or already used within its time window. It
// is also ErrInvalidCredentials.
var ErrInvalidTwoFactorCode = fmt.Errorf("%w: the two-factor code is wrong or was already used", ErrInvalidCredentials)

// ErrThrottled is what every *ThrottledError is (errors.Is).
var ErrThrottled = errors.New("too many failed sign-ins")

// ThrottledError means sign-in is refused for a while after too many failures; over HTTP it is
// 429 with Retry-After.
type ThrottledError struct {
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%s; try again in %s", ErrThrottled, e.RetryAfter.Round(time.Second))
}

// Is makes errors.Is(err, ErrThrottled) hold.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// SignedIn is a new session. Token is the cookie's value: shown once, only its hash is kept.
type SignedIn struct {
	Token   string
	Session *session.Session
	User    *user.User
	// NeedsTwoFactor is true (with ErrTwoFactorRequired and no session) when the password was
	// right and a code is missing.
	NeedsTwoFactor bool
}

// sessionStarter starts a session for a person who just proved who they are (password,
// OpenID Connect, accepting an invitation), records user.signed_in in each of their
// workspaces and returns the cookie's token. Every sign-in makes a new session with a new
// token, so a token planted before sign-in is worthless after it.
//
// start is the one way use cases in this package begin a session; its signature is stable.
type sessionStarter struct {
	sessions    ports.SessionRepository
	memberships ports.MembershipRepository
	auditLog    ports.AuditLog
	ids         ports.IDs
	clock       ports.Clock
	ipHasher    ports.IPHasher
}

func newSessionStarter(sessions ports.SessionRepository, memberships ports.MembershipRepository, auditLog ports.AuditLog,
	ids ports.IDs, clock ports.Clock, ipHasher ports.IPHasher) sessionStarter {
	return sessionStarter{sessions: sessions, memberships: memberships, auditLog: auditLog, ids: ids, clock: clock, ipHasher: ipHasher}
}

// start opens a session for u looking at workspaceID when u is a member there, else at u's
// oldest workspace (none: the session has no workspace, and the dashboard says so). ip is the
// client's address, kept only as its keyed hash in the audit log.
func (s sessionStarter) start(ctx context.Context, u *user.User, workspaceID, ip string) (SignedIn, error) {
	now := s.clock.Now()
	memberships, err := s.memberships.ForUser(ctx, u.ID())
	if err != nil {
		return SignedIn{}, fmt.Errorf("load memberships: %w", err)
	}
	current := ""
	for _, wm := range memberships {
		if wm.Membership.WorkspaceID() == workspaceID {
			current = workspaceID
		}
	}
	if current == "" && len(memberships) > 0 {
		current = memberships[0].Membership.WorkspaceID()
	}
	token, err := newSecretToken()
	if err != nil {
		return SignedIn{}, err
	}
	sess := session.New(s.ids.New(ports.PrefixSession), session.HashToken(token), u.ID(), current, now)
	if err := s.sessions.Create(ctx, sess); err != nil {
		return SignedIn{}, fmt.Errorf("store session: %w", err)
	}
	events, err := userEvents(s.ids, memberships, audit.UserSignedIn, u, hashIP(s.ipHasher, ip), nil, now)
	if err == nil {
		err = s.auditLog.Append(ctx, events...)
	}
	if err != nil {
		// A sign-in the audit log does not show must not happen.
		_ = s.sessions.Delete(ctx, sess.ID())
		return SignedIn{}, fmt.Errorf("record sign-in: %w", err)
	}
	return SignedIn{Token: token, Session: sess, User: u}, nil
}

// SignIn signs in with email and password, plus a TOTP code or a recovery code when the account
// has two-factor on.
type SignIn struct {
	Email        string
	Password     string
	TOTPCode     string
	RecoveryCode string
	IP           string
}

// SignInHandler checks credentials and starts sessions.
type SignInHandler struct {
	users     ports.UserRepository
	passwords ports.PasswordHasher
	throttle  signInThrottle
	codes     totpChecker
	failures  failureRecorder
	starter   sessionStarter
	dummyHash func() (string, error)
}

// NewSignInHandler makes the command.
func NewSignInHandler(users ports.UserRepository, memberships ports.MembershipRepository, sessions ports.SessionRepository,
	tokens ports.UserTokenRepository, auditLog ports.AuditLog, throttle ports.SignInThrottle, passwords ports.PasswordHasher,
	totp ports.TOTP, cipher ports.Cipher, ids ports.IDs, clock ports.Clock, ipHasher ports.IPHasher) SignInHandler {
	return SignInHandler{
		users:     users,
		passwords: passwords,
		throttle:  signInThrottle{throttle: throttle, ids: ids, clock: clock, ipHasher: ipHasher},
		codes:     totpChecker{totp: totp, cipher: cipher, tokens: tokens},
		failures:  failureRecorder{memberships: memberships, auditLog: auditLog, ids: ids, clock: clock, ipHasher: ipHasher},
		starter:   newSessionStarter(sessions, memberships, auditLog, ids, clock, ipHasher),
		dummyHash: dummyPasswordHash(passwords),
	}
}

// Handle takes the attempt's place in the failure counts of the account and the IP (refused
// when either is full), then checks the password (an unknown email is checked against a dummy
// hash, so it costs the same) and the second factor. A wrong one keeps the place as a failure;
// otherwise the place is given back and a session starts.
func (h SignInHandler) Handle(ctx context.Context, cmd SignIn) (SignedIn, error) {
	email := normaliseEmail(cmd.Email)
	attempt, err := h.throttle.reserve(ctx, signInRule, h.throttle.subjects(email, cmd.IP))
	if err != nil {
		return SignedIn{}, err
	}
	u, failed, err := h.check(ctx, email, cmd)
	if failed != "" {
		return SignedIn{}, h.fail(ctx, u, cmd.IP, failed, err)
	}
	if rerr := h.throttle.release(ctx, signInRule, attempt); rerr != nil {
		return SignedIn{}, rerr
	}
	if errors.Is(err, ErrTwoFactorRequired) {
		return SignedIn{NeedsTwoFactor: true}, err
	}
	if err != nil {
		return SignedIn{}, err
	}
	return h.starter.start(ctx, u, "", cmd.IP)
}

// check returns the user whose credentials cmd gives. When they are wrong it names what was
// wrong in failed ("password", "two_factor", "recovery_code") and err says so to the caller;
// ErrTwoFactorRequired (a right password, no code) and storage errors are no failure.
func (h SignInHandler) check(ctx context.Context, email string, cmd SignIn) (u *user.User, failed string, err error) {
	u, err = h.users.FindByEmail(ctx, email)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return nil, "", fmt.Errorf("find user: %w", err)
	}
	if !verifyUserPassword(h.passwords, h.dummyHash, u, cmd.Password) {
		return u, "password", ErrInvalidCredentials
	}
	if !u.TwoFactorEnabled() {
		return u, "", nil
	}
	switch {
	case cmd.TOTPCode != "":
		if err := h.codes.check(ctx, u.ID(), u.TOTPSecret(), cmd.TOTPCode, h.throttle.clock.Now()); err != nil {
			if errors.Is(err, ErrInvalidTwoFactorCode) {
				return u, "two_factor", err
			}
			return u, "", err
		}
		return u, "", nil
	case cmd.RecoveryCode != "":
		updated, err := h.users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
			if !u.UseRecoveryCode(cmd.RecoveryCode) {
				return ports.Effects{}, ErrInvalidTwoFactorCode
			}
			return ports.Effects{}, nil
		})
		if errors.Is(err, ErrInvalidTwoFactorCode) {
			return u, "recovery_code", err
		}
		if err != nil {
			return u, "", fmt.Errorf("spend recovery code: %w", err)
		}
		return updated, "", nil
	default:
		return u, "", ErrTwoFactorRequired
	}
}

// fail records user.sign_in_failed in the account's workspaces (when there is an account) and
// returns err. The attempt's place stays taken: it is the failure's count.
func (h SignInHandler) fail(ctx context.Context, u *user.User, ip, reason string, err error) error {
	if u != nil {
		if rerr := h.failures.record(ctx, u, ip, reason); rerr != nil {
			return rerr
		}
	}
	return err
}

// verifyUserPassword checks password against u's hash, or against the dummy hash when there
// is no user or the user has no password, so each path does one argon2id verification.
func verifyUserPassword(passwords ports.PasswordHasher, dummy func() (string, error), u *user.User, password string) bool {
	if u == nil || u.PasswordHash() == "" {
		hash, _ := dummy()
		passwords.Verify(hash, password)
		return false
	}
	return passwords.Verify(u.PasswordHash(), password)
}

// dummyPasswordHash returns a function that computes, once, the hash unknown emails are checked
// against.
func dummyPasswordHash(passwords ports.PasswordHasher) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		if passwords == nil {
			return "", errors.New("no password hasher")
		}
		secret, err := newSecretToken()
		if err != nil {
			return "", err
		}
		return passwords.Hash(secret)
	})
}

// throttleRule is one throttle's limit: how many places within how long a window.
type throttleRule struct {
	limit  int
	window time.Duration
}

var (
	// signInRule counts failed sign-ins (and wrong current passwords and codes).
	signInRule = throttleRule{limit: SignInFailureLimit, window: SignInWindow}
	// passwordResetRule counts "forgot password" requests.
	passwordResetRule = throttleRule{limit: PasswordResetLimit, window: PasswordResetWindow}
)

// longestThrottleWindow is how long the retention job keeps the places of any throttle.
const LongestThrottleWindow = max(SignInWindow, PasswordResetWindow)

// signInThrottle takes and gives back attempts' places in the counts per account and per IP hash.
type signInThrottle struct {
	throttle ports.SignInThrottle
	ids      ports.IDs
	clock    ports.Clock
	ipHasher ports.IPHasher
}

// attemptIDPrefix names the places one attempt takes, so a success can give them back.
const attemptIDPrefix = "try"

// subjects names what an attempt counts against: the hash of the email (so the table holds no
// address) and the IP hash.
func (t signInThrottle) subjects(email, ip string) []string {
	sum := sha256.Sum256([]byte(email))
	subjects := []string{"email:" + hex.EncodeToString(sum[:])}
	if h := hashIP(t.ipHasher, ip); h != "" {
		subjects = append(subjects, "ip:"+h)
	}
	return subjects
}

// throttleAttempt is the places one attempt took: their ID and the account's subject.
type throttleAttempt struct{ id, account string }

// reserve takes an attempt's place in each subject's count under r before the attempt is
// evaluated (subjects[0] is the account's), and returns what gives them back. When a subject
// is full it takes none and returns a *ThrottledError with the wait until a place frees up.
func (t signInThrottle) reserve(ctx context.Context, r throttleRule, subjects []string) (throttleAttempt, error) {
	now := t.clock.Now()
	id := t.ids.New(attemptIDPrefix)
	ok, freeFrom, err := t.throttle.Reserve(ctx, id, now, now.Add(-r.window), r.limit, subjects...)
	if err != nil {
		return throttleAttempt{}, fmt.Errorf("count sign-in attempt: %w", err)
	}
	if !ok {
		wait := freeFrom.Add(r.window).Sub(now)
		if wait < time.Second {
			wait = time.Second
		}
		return throttleAttempt{}, &ThrottledError{RetryAfter: wait}
	}
	return throttleAttempt{id: id, account: subjects[0]}, nil
}

// release gives back the places of an attempt that was no failure. When the attempt was
// evaluated during a burst (a subject refused an attempt meanwhile, or another attempt on the
// same account took a place meanwhile), it is refused like the others with a *ThrottledError:
// a right password guessed in a burst of wrong ones signs nobody in.
func (t signInThrottle) release(ctx context.Context, r throttleRule, a throttleAttempt) error {
	contested, err := t.throttle.Release(ctx, a.id, a.account)
	if err != nil {
		return fmt.Errorf("give back sign-in attempt: %w", err)
	}
	if contested {
		// The count is full or filling; its oldest place leaves within the window.
		return &ThrottledError{RetryAfter: r.window}
	}
	return nil
}

// failureRecorder writes user.sign_in_failed in every workspace of the account.
type failureRecorder struct {
	memberships ports.MembershipRepository
	auditLog    ports.AuditLog
	ids         ports.IDs
	clock       ports.Clock
	ipHasher    ports.IPHasher
}

func (f failureRecorder) record(ctx context.Context, u *user.User, ip, reason string) error {
	memberships, err := f.memberships.ForUser(ctx, u.ID())
	if err != nil {
		return fmt.Errorf("load memberships: %w", err)
	}
	events, err := userEvents(f.ids, memberships, audit.UserSignInFailed, u, hashIP(f.ipHasher, ip),
		map[string]any{"reason": reason}, f.clock.Now())
	if err != nil {
		return err
	}
	if err := f.auditLog.Append(ctx, events...); err != nil {
		return fmt.Errorf("record failed sign-in: %w", err)
	}
	return nil
}

// SignOut ends the session whose cookie carries Token.
type SignOut struct{ Token string }

// SignOutHandler ends sessions.
type SignOutHandler struct{ sessions ports.SessionRepository }

// NewSignOutHandler makes the command.
func NewSignOutHandler(sessions ports.SessionRepository) SignOutHandler {
	return SignOutHandler{sessions: sessions}
}

// Handle deletes the session; an unknown or empty token is already signed out.
func (h SignOutHandler) Handle(ctx context.Context, cmd SignOut) error {
	if cmd.Token == "" {
		return nil
	}
	s, err := h.sessions.FindByToken(ctx, session.HashToken(cmd.Token))
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find session: %w", err)
	}
	if err := h.sessions.Delete(ctx, s.ID()); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// SignOutEverywhere ends every session of the signed-in user, the current one included.
type SignOutEverywhere struct{}

// SignOutEverywhereHandler ends all of a user's sessions.
type SignOutEverywhereHandler struct{ sessions ports.SessionRepository }

// NewSignOutEverywhereHandler makes the command.
func NewSignOutEverywhereHandler(sessions ports.SessionRepository) SignOutEverywhereHandler {
	return SignOutEverywhereHandler{sessions: sessions}
}

// Handle ends the sessions of the user in ctx.
func (h SignOutEverywhereHandler) Handle(ctx context.Context, _ SignOutEverywhere) error {
	p, err := signedInUser(ctx)
	if err != nil {
		return err
	}
	if err := h.sessions.DeleteForUser(ctx, p.Actor.ID, ""); err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	return nil
}

// AuthenticateSession resolves a session cookie.
type AuthenticateSession struct {
	Token string
	IP    string
}

// SessionPrincipal is who a dashboard request acts as, and what the page needs to know.
type SessionPrincipal struct {
	// Principal has the session's workspace and the user's role there; both are empty when the
	// user belongs to no workspace any more.
	Principal  auth.Principal
	User       *user.User
	Session    *session.Session
	Workspaces []ports.WorkspaceMembership
}

// AuthenticateSessionHandler resolves session cookies.
type AuthenticateSessionHandler struct {
	sessions    ports.SessionRepository
	users       ports.UserRepository
	memberships ports.MembershipRepository
	clock       ports.Clock
	ipHasher    ports.IPHasher
}

// NewAuthenticateSessionHandler makes the query.
func NewAuthenticateSessionHandler(sessions ports.SessionRepository, users ports.UserRepository,
	memberships ports.MembershipRepository, clock ports.Clock, ipHasher ports.IPHasher) AuthenticateSessionHandler {
	return AuthenticateSessionHandler{sessions: sessions, users: users, memberships: memberships, clock: clock, ipHasher: ipHasher}
}

// Handle returns the principal of a live session or ErrUnauthenticated. The role is read from
// the membership on every request, so a role change or a removal takes effect at once. Activity
// is written at most once a minute.
func (h AuthenticateSessionHandler) Handle(ctx context.Context, q AuthenticateSession) (SessionPrincipal, error) {
	if q.Token == "" {
		return SessionPrincipal{}, auth.ErrUnauthenticated
	}
	now := h.clock.Now()
	s, err := h.sessions.FindByToken(ctx, session.HashToken(q.Token))
	if errors.Is(err, domain.ErrNotFound) {
		return SessionPrincipal{}, auth.ErrUnauthenticated
	}
	if err != nil {
		return SessionPrincipal{}, fmt.Errorf("find session: %w", err)
	}
	if !s.Valid(now) {
		if err := h.sessions.Delete(ctx, s.ID()); err != nil {
			return SessionPrincipal{}, fmt.Errorf("end expired session: %w", err)
		}
		return SessionPrincipal{}, auth.ErrUnauthenticated
	}
	u, err := h.users.Get(ctx, s.UserID())
	if errors.Is(err, domain.ErrNotFound) {
		return SessionPrincipal{}, auth.ErrUnauthenticated
	}
	if err != nil {
		return SessionPrincipal{}, fmt.Errorf("load user: %w", err)
	}
	workspaces, err := h.memberships.ForUser(ctx, u.ID())
	if err != nil {
		return SessionPrincipal{}, fmt.Errorf("load memberships: %w", err)
	}
	// The session's workspace, or (when that membership ended or there was none at sign-in)
	// the oldest the user has now.
	var current *member.Membership
	for _, wm := range workspaces {
		if wm.Membership.WorkspaceID() == s.WorkspaceID() {
			current = wm.Membership
		}
	}
	if current == nil && len(workspaces) > 0 {
		current = workspaces[0].Membership
	}
	switchTo := ""
	if current != nil && current.WorkspaceID() != s.WorkspaceID() {
		switchTo = current.WorkspaceID()
	}
	if switchTo != "" || s.NeedsTouch(now) {
		if err := h.sessions.Touch(ctx, s.ID(), now, switchTo); err != nil {
			return SessionPrincipal{}, fmt.Errorf("touch session: %w", err)
		}
		workspaceID := s.WorkspaceID()
		if switchTo != "" {
			workspaceID = switchTo
		}
		s = session.UnmarshalFromDatabase(s.ID(), s.TokenHash(), s.UserID(), workspaceID, s.CreatedAt(), now)
	}
	p := auth.Principal{Actor: userActor(u), SessionID: s.ID(), IPHash: hashIP(h.ipHasher, q.IP)}
	if current != nil {
		p.WorkspaceID, p.Role = current.WorkspaceID(), current.Role()
	}
	return SessionPrincipal{Principal: p, User: u, Session: s, Workspaces: workspaces}, nil
}

// SwitchWorkspace moves the signed-in user's session to another of their workspaces.
type SwitchWorkspace struct{ WorkspaceID string }

// SwitchWorkspaceHandler switches workspaces.
type SwitchWorkspaceHandler struct {
	sessions    ports.SessionRepository
	memberships ports.MembershipRepository
	clock       ports.Clock
}

// NewSwitchWorkspaceHandler makes the command.
func NewSwitchWorkspaceHandler(sessions ports.SessionRepository, memberships ports.MembershipRepository, clock ports.Clock) SwitchWorkspaceHandler {
	return SwitchWorkspaceHandler{sessions: sessions, memberships: memberships, clock: clock}
}

// Handle switches when the user is a member of the workspace, else ErrForbidden.
func (h SwitchWorkspaceHandler) Handle(ctx context.Context, cmd SwitchWorkspace) error {
	p, err := signedInUser(ctx)
	if err != nil {
		return err
	}
	if cmd.WorkspaceID == "" {
		return fmt.Errorf("%w: not a member of that workspace", auth.ErrForbidden)
	}
	if _, err := h.memberships.Find(ctx, cmd.WorkspaceID, p.Actor.ID); errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("%w: not a member of that workspace", auth.ErrForbidden)
	} else if err != nil {
		return fmt.Errorf("find membership: %w", err)
	}
	if err := h.sessions.Touch(ctx, p.SessionID, h.clock.Now(), cmd.WorkspaceID); err != nil {
		return fmt.Errorf("switch workspace: %w", err)
	}
	return nil
}

// signedInUser returns the principal of a dashboard session (with or without a workspace), or
// ErrForbidden: the account's own settings are not for API keys.
func signedInUser(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok || p.Actor.Type != audit.ActorUser || p.Actor.ID == "" || p.SessionID == "" {
		return auth.Principal{}, fmt.Errorf("%w: sign in first", auth.ErrForbidden)
	}
	return p, nil
}

// signedInAccount is signedInUser with the person's account.
func signedInAccount(ctx context.Context, users ports.UserRepository) (auth.Principal, *user.User, error) {
	p, err := signedInUser(ctx)
	if err != nil {
		return p, nil, err
	}
	u, err := users.Get(ctx, p.Actor.ID)
	if err != nil {
		return p, nil, fmt.Errorf("load user: %w", err)
	}
	return p, u, nil
}
