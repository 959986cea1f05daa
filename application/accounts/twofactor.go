package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/user"
	"github.com/formward/formward/ports"
)

// accountsKeyScope is the pseudo-workspace whose data key seals account secrets (TOTP secrets):
// they belong to a person, not to any one workspace.
const accountsKeyScope = "accounts"

// Two-factor settings.
const (
	// RecoveryCodeCount is how many one-time recovery codes turning two-factor on gives.
	RecoveryCodeCount = 10
	// twoFactorSetupValidity is how long a begun setup waits for its confirming code.
	twoFactorSetupValidity = 15 * time.Minute
	// totpStep is the RFC 6238 time step.
	totpStep = 30 * time.Second
	// tokenTOTPStep is the user token purpose that remembers the last accepted TOTP time step,
	// so a code is never accepted twice.
	tokenTOTPStep = "totp_step"
)

// ErrTwoFactorNotStarted means ConfirmTwoFactor came without a pending BeginTwoFactor (or after
// it expired).
var ErrTwoFactorNotStarted = domain.Validation("code", "not_started", "start two-factor setup again: it expired or was not begun")

// ErrTwoFactorOn means two-step verification is already on; it is turned off first to be set up again.
var ErrTwoFactorOn = domain.Conflict("two-step verification is already on; turn it off first to set it up again")

// ErrTwoFactorOff means two-step verification is not on.
var ErrTwoFactorOff = domain.Conflict("two-step verification is not on")

// totpChecker checks TOTP codes against a sealed secret and refuses a code whose time step is
// not newer than the last one accepted for the user (RFC 6238 section 5.2).
type totpChecker struct {
	totp   ports.TOTP
	cipher ports.Cipher
	tokens ports.UserTokenRepository
}

// totpAAD binds a sealed secret to its user, so it cannot be moved to another account.
func totpAAD(userID string) []byte { return []byte("totp:" + userID) }

func (c totpChecker) open(ctx context.Context, userID string, sealed []byte) (string, error) {
	secret, err := c.cipher.Open(ctx, accountsKeyScope, sealed, totpAAD(userID))
	if err != nil {
		return "", fmt.Errorf("open two-factor secret: %w", err)
	}
	return string(secret), nil
}

// check validates code and spends its time step; ErrInvalidTwoFactorCode when it is wrong or
// its step (or a later one) was already used.
func (c totpChecker) check(ctx context.Context, userID string, sealed []byte, code string, now time.Time) error {
	secret, err := c.open(ctx, userID, sealed)
	if err != nil {
		return err
	}
	return c.checkSecret(ctx, userID, secret, code, now)
}

func (c totpChecker) checkSecret(ctx context.Context, userID, secret, code string, now time.Time) error {
	if !c.totp.Validate(secret, code, now) {
		return ErrInvalidTwoFactorCode
	}
	// The port accepts one step either side; asking at the neighbouring steps tells which step
	// the code belongs to (a code of step n-1 is also valid a step earlier, one of n+1 a step later).
	step := now.Unix() / int64(totpStep/time.Second)
	earlier := c.totp.Validate(secret, code, now.Add(-totpStep))
	later := c.totp.Validate(secret, code, now.Add(totpStep))
	switch {
	case earlier && !later:
		step--
	case later && !earlier:
		step++
	}
	return c.spendStep(ctx, userID, step, now)
}

// spendStep records step as the user's last accepted one, unless it is not newer than the one
// recorded. The earlier record is spent first, so of two concurrent uses of one code only one
// gets past it.
func (c totpChecker) spendStep(ctx context.Context, userID string, step int64, now time.Time) error {
	stepStart := time.Unix(step*int64(totpStep/time.Second), 0).UTC()
	last, err := c.tokens.ForUser(ctx, tokenTOTPStep, userID, now)
	switch {
	case err == nil:
		used, perr := strconv.ParseInt(string(last.Data), 10, 64)
		if perr == nil && step <= used {
			return ErrInvalidTwoFactorCode
		}
		if _, err := c.tokens.Spend(ctx, tokenTOTPStep, last.TokenHash, now); errors.Is(err, domain.ErrNotFound) {
			return ErrInvalidTwoFactorCode
		} else if err != nil {
			return fmt.Errorf("spend two-factor step: %w", err)
		}
	case !errors.Is(err, domain.ErrNotFound):
		return fmt.Errorf("read two-factor step: %w", err)
	}
	sum := sha256.Sum256([]byte(tokenTOTPStep + ":" + userID + ":" + strconv.FormatInt(step, 10)))
	// A code is valid until the end of the step after its own; the record may go after that.
	err = c.tokens.Put(ctx, ports.UserToken{Purpose: tokenTOTPStep, TokenHash: sum[:], UserID: userID,
		Data: []byte(strconv.FormatInt(step, 10)), ExpiresAt: stepStart.Add(3 * totpStep)})
	if err != nil {
		return fmt.Errorf("record two-factor step: %w", err)
	}
	return nil
}

// newRecoveryCodes returns RecoveryCodeCount codes of 80 random bits each, written as two
// groups of eight lower-case base32 characters (xxxxxxxx-xxxxxxxx), and their hashes.
func newRecoveryCodes() ([]string, [][]byte, error) {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	codes := make([]string, RecoveryCodeCount)
	hashes := make([][]byte, RecoveryCodeCount)
	for i := range codes {
		raw := make([]byte, 10)
		if _, err := rand.Read(raw); err != nil {
			return nil, nil, fmt.Errorf("generate recovery code: %w", err)
		}
		s := strings.ToLower(enc.EncodeToString(raw))
		codes[i] = s[:8] + "-" + s[8:]
		hashes[i] = user.HashRecoveryCode(codes[i])
	}
	return codes, hashes, nil
}

// BeginTwoFactor starts turning two-factor on for the signed-in user.
type BeginTwoFactor struct{}

// TwoFactorSetup is what the authenticator app needs: the secret (base32, for typing) and the
// otpauth:// URL (for a QR code). Nothing changes until ConfirmTwoFactor.
type TwoFactorSetup struct {
	Secret string
	URL    string
}

// BeginTwoFactorHandler starts two-factor setups.
type BeginTwoFactorHandler struct {
	users  ports.UserRepository
	tokens ports.UserTokenRepository
	totp   ports.TOTP
	cipher ports.Cipher
	clock  ports.Clock
	issuer string
}

// NewBeginTwoFactorHandler makes the command; issuer names the service in authenticator apps.
func NewBeginTwoFactorHandler(users ports.UserRepository, tokens ports.UserTokenRepository, totp ports.TOTP,
	cipher ports.Cipher, clock ports.Clock, issuer string) BeginTwoFactorHandler {
	return BeginTwoFactorHandler{users: users, tokens: tokens, totp: totp, cipher: cipher, clock: clock, issuer: issuer}
}

// Handle makes a new secret and keeps it sealed, pending confirmation, for 15 minutes.
func (h BeginTwoFactorHandler) Handle(ctx context.Context, _ BeginTwoFactor) (TwoFactorSetup, error) {
	_, u, err := signedInAccount(ctx, h.users)
	if err != nil {
		return TwoFactorSetup{}, err
	}
	if u.TwoFactorEnabled() {
		return TwoFactorSetup{}, ErrTwoFactorOn
	}
	secret, url, err := h.totp.Generate(h.issuer, u.Email())
	if err != nil {
		return TwoFactorSetup{}, err
	}
	sealed, err := h.cipher.Seal(ctx, accountsKeyScope, []byte(secret), totpAAD(u.ID()))
	if err != nil {
		return TwoFactorSetup{}, fmt.Errorf("seal two-factor secret: %w", err)
	}
	handle, err := newSecretToken()
	if err != nil {
		return TwoFactorSetup{}, err
	}
	err = h.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenTwoFactor, TokenHash: hashToken(handle), UserID: u.ID(),
		Data: sealed, ExpiresAt: h.clock.Now().Add(twoFactorSetupValidity)})
	if err != nil {
		return TwoFactorSetup{}, fmt.Errorf("keep pending two-factor secret: %w", err)
	}
	return TwoFactorSetup{Secret: secret, URL: url}, nil
}

// ConfirmTwoFactor turns two-factor on with a code from the app, proving it holds the secret.
type ConfirmTwoFactor struct{ Code string }

// RecoveryCodes are the one-time codes that replace a TOTP code when the phone is lost; shown
// once, kept only as hashes.
type RecoveryCodes []string

// ConfirmTwoFactorHandler finishes two-factor setups.
type ConfirmTwoFactorHandler struct {
	users       ports.UserRepository
	memberships ports.MembershipRepository
	tokens      ports.UserTokenRepository
	codes       totpChecker
	ids         ports.IDs
	clock       ports.Clock
}

// NewConfirmTwoFactorHandler makes the command.
func NewConfirmTwoFactorHandler(users ports.UserRepository, memberships ports.MembershipRepository, tokens ports.UserTokenRepository,
	totp ports.TOTP, cipher ports.Cipher, ids ports.IDs, clock ports.Clock) ConfirmTwoFactorHandler {
	return ConfirmTwoFactorHandler{users: users, memberships: memberships, tokens: tokens,
		codes: totpChecker{totp: totp, cipher: cipher, tokens: tokens}, ids: ids, clock: clock}
}

// Handle checks the code against the pending secret, turns two-factor on, records
// user.two_factor_enabled and returns ten fresh recovery codes.
func (h ConfirmTwoFactorHandler) Handle(ctx context.Context, cmd ConfirmTwoFactor) (RecoveryCodes, error) {
	p, err := signedInUser(ctx)
	if err != nil {
		return nil, err
	}
	now := h.clock.Now()
	pending, err := h.tokens.ForUser(ctx, ports.TokenTwoFactor, p.Actor.ID, now)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, ErrTwoFactorNotStarted
	}
	if err != nil {
		return nil, fmt.Errorf("load pending two-factor secret: %w", err)
	}
	if err := h.codes.check(ctx, p.Actor.ID, pending.Data, cmd.Code, now); err != nil {
		if errors.Is(err, ErrInvalidTwoFactorCode) {
			return nil, domain.Validation("code", "invalid_code", "the code is wrong; check the app's clock and try the next code")
		}
		return nil, err
	}
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	memberships, err := h.memberships.ForUser(ctx, p.Actor.ID)
	if err != nil {
		return nil, fmt.Errorf("load memberships: %w", err)
	}
	_, err = h.users.Update(ctx, p.Actor.ID, func(u *user.User) (ports.Effects, error) {
		if u.TwoFactorEnabled() {
			return ports.Effects{}, ErrTwoFactorOn
		}
		u.EnableTwoFactor(pending.Data, hashes)
		events, err := userEvents(h.ids, memberships, audit.UserTwoFactorOn, u, p.IPHash, nil, now)
		return ports.Effects{Audit: events}, err
	})
	if err != nil {
		return nil, fmt.Errorf("turn two-factor on: %w", err)
	}
	if _, err := h.tokens.Spend(ctx, ports.TokenTwoFactor, pending.TokenHash, now); err != nil && !errors.Is(err, domain.ErrNotFound) {
		return nil, fmt.Errorf("forget pending two-factor secret: %w", err)
	}
	return codes, nil
}

// DisableTwoFactor turns two-factor off. Password proves it is the person; an account without
// a password (it signs in through OpenID Connect) gives a current TOTP Code instead.
type DisableTwoFactor struct {
	Password string
	Code     string
}

// DisableTwoFactorHandler turns two-factor off.
type DisableTwoFactorHandler struct {
	users       ports.UserRepository
	memberships ports.MembershipRepository
	passwords   ports.PasswordHasher
	throttle    signInThrottle
	codes       totpChecker
	ids         ports.IDs
	clock       ports.Clock
}

// NewDisableTwoFactorHandler makes the command.
func NewDisableTwoFactorHandler(users ports.UserRepository, memberships ports.MembershipRepository, tokens ports.UserTokenRepository,
	throttle ports.SignInThrottle, passwords ports.PasswordHasher, totp ports.TOTP, cipher ports.Cipher, ids ports.IDs,
	clock ports.Clock) DisableTwoFactorHandler {
	return DisableTwoFactorHandler{users: users, memberships: memberships, passwords: passwords,
		throttle: signInThrottle{throttle: throttle, ids: ids, clock: clock},
		codes:    totpChecker{totp: totp, cipher: cipher, tokens: tokens}, ids: ids, clock: clock}
}

// Handle checks the password (or code), turns two-factor off, forgets the recovery codes and
// records user.two_factor_disabled. Each check takes its place in the account's count of failed
// sign-ins first, as a sign-in does, and a right password or code gives it back.
func (h DisableTwoFactorHandler) Handle(ctx context.Context, cmd DisableTwoFactor) error {
	p, u, err := signedInAccount(ctx, h.users)
	if err != nil {
		return err
	}
	now := h.clock.Now()
	if !u.TwoFactorEnabled() {
		return ErrTwoFactorOff
	}
	attempt, err := h.throttle.reserve(ctx, signInRule, h.throttle.subjects(u.Email(), ""))
	if err != nil {
		return err
	}
	if u.PasswordHash() != "" {
		if !h.passwords.Verify(u.PasswordHash(), cmd.Password) {
			return ErrInvalidCredentials
		}
	} else if err := h.codes.check(ctx, u.ID(), u.TOTPSecret(), cmd.Code, now); err != nil {
		if errors.Is(err, ErrInvalidTwoFactorCode) {
			return err
		}
		return errors.Join(err, h.throttle.release(ctx, signInRule, attempt))
	}
	if err := h.throttle.release(ctx, signInRule, attempt); err != nil {
		return err
	}
	memberships, err := h.memberships.ForUser(ctx, u.ID())
	if err != nil {
		return fmt.Errorf("load memberships: %w", err)
	}
	_, err = h.users.Update(ctx, u.ID(), func(u *user.User) (ports.Effects, error) {
		if !u.TwoFactorEnabled() {
			return ports.Effects{}, ErrTwoFactorOff
		}
		u.DisableTwoFactor()
		events, err := userEvents(h.ids, memberships, audit.UserTwoFactorOff, u, p.IPHash, nil, now)
		return ports.Effects{Audit: events}, err
	})
	if err != nil {
		return fmt.Errorf("turn two-factor off: %w", err)
	}
	return nil
}
