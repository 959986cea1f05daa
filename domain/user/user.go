// Package user models the people who sign in to the dashboard: an email, a password kept only
// as an argon2id hash, optional TOTP two-factor with one-time recovery codes.
package user

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
	"github.com/formward/formward/domain/timezone"
)

// ErrEmailTaken means another account has the email address.
var ErrEmailTaken = domain.Conflict("an account with this email address already exists")

// ErrIdentityTaken means the single sign-on identity is linked to another account.
var ErrIdentityTaken = domain.Conflict("this single sign-on identity is linked to another account")

// Password length bounds, in characters.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 1024
)

// ParseEmail trims and lower-cases an address and checks its shape.
func ParseEmail(s string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(s))
	if e == "" || len(e) > 254 || !text.Valid(e) {
		return "", domain.Validation("email", "invalid_email", "email must be a valid address")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || !strings.Contains(e[strings.LastIndex(e, "@")+1:], ".") {
		return "", domain.Validation("email", "invalid_email", "email must be a valid address")
	}
	return e, nil
}

// CheckPassword applies the password policy: 12 to 1,024 characters, not a common password.
func CheckPassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	if !utf8.ValidString(pw) || n < MinPasswordLength || n > MaxPasswordLength {
		return domain.Validation("password", "invalid_length", "password must be 12 to 1024 characters")
	}
	if IsCommonPassword(pw) {
		return domain.Validation("password", "common_password", "this password is too common; choose another")
	}
	return nil
}

// HashRecoveryCode is the form of a recovery code kept at rest (codes carry 80 random bits).
func HashRecoveryCode(code string) []byte {
	c := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(code), "-", ""))
	sum := sha256.Sum256([]byte(c))
	return sum[:]
}

// User is one person.
type User struct {
	id                string
	email             string
	name              string
	passwordHash      string
	totpSecret        []byte // sealed; nil when two-factor is off
	recoveryCodes     [][]byte
	oidcSubject       string
	createdAt         time.Time
	passwordChangedAt *time.Time
	// timeZone is the IANA name the person reads times in; "" means the workspace's.
	timeZone string
}

// New checks email and name and builds a user without a password (one is set later, or the
// person signs in through OpenID Connect).
func New(id, email, name string, now time.Time) (*User, error) {
	var vs domain.Violations
	e, err := ParseEmail(email)
	if err != nil {
		vs.Add("email", "invalid_email", "email must be a valid address")
	}
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > 200 || !text.Valid(name) {
		vs.Add("name", "invalid_length", "name must be at most 200 characters, without control characters")
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	return &User{id: id, email: e, name: name, createdAt: now.UTC()}, nil
}

// UnmarshalFromDatabase rebuilds a stored user without re-checking it.
func UnmarshalFromDatabase(id, email, name, passwordHash string, totpSecret []byte, recoveryCodes [][]byte, oidcSubject string, createdAt time.Time, passwordChangedAt *time.Time, timeZone string) *User {
	return &User{id: id, email: email, name: name, passwordHash: passwordHash, totpSecret: totpSecret,
		recoveryCodes: recoveryCodes, oidcSubject: oidcSubject, createdAt: createdAt.UTC(), passwordChangedAt: passwordChangedAt,
		timeZone: timeZone}
}

// SetPasswordHash stores the hash of a password that passed CheckPassword.
func (u *User) SetPasswordHash(hash string, now time.Time) {
	u.passwordHash = hash
	t := now.UTC()
	u.passwordChangedAt = &t
}

// Rename changes the display name.
func (u *User) Rename(name string) error {
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > 200 || !text.Valid(name) {
		return domain.Validation("name", "invalid_length", "name must be at most 200 characters, without control characters")
	}
	u.name = name
	return nil
}

// ChooseTimeZone sets the IANA time zone the person reads times in; "" clears it (times then
// follow the workspace's zone).
func (u *User) ChooseTimeZone(name string) error {
	if strings.TrimSpace(name) == "" {
		u.timeZone = ""
		return nil
	}
	zone, _, err := timezone.Parse("time_zone", name)
	if err != nil {
		return err
	}
	u.timeZone = zone
	return nil
}

// EnableTwoFactor turns TOTP on with a sealed secret and the hashes of fresh recovery codes.
func (u *User) EnableTwoFactor(sealedSecret []byte, recoveryCodeHashes [][]byte) {
	u.totpSecret = sealedSecret
	u.recoveryCodes = recoveryCodeHashes
}

// DisableTwoFactor turns TOTP off and forgets the recovery codes.
func (u *User) DisableTwoFactor() {
	u.totpSecret = nil
	u.recoveryCodes = nil
}

// UseRecoveryCode spends one recovery code; it reports whether the code was valid and unused.
func (u *User) UseRecoveryCode(code string) bool {
	h := HashRecoveryCode(code)
	found := -1
	for i, c := range u.recoveryCodes {
		if subtle.ConstantTimeCompare(c, h) == 1 {
			found = i
		}
	}
	if found < 0 {
		return false
	}
	u.recoveryCodes = append(u.recoveryCodes[:found:found], u.recoveryCodes[found+1:]...)
	return true
}

// LinkOIDC records the OpenID Connect subject this user signs in as.
func (u *User) LinkOIDC(subject string) { u.oidcSubject = subject }

// ID returns the user ID (prefix usr_).
func (u *User) ID() string { return u.id }

// Email returns the normalised address.
func (u *User) Email() string { return u.email }

// Name returns the display name (may be empty).
func (u *User) Name() string { return u.name }

// PasswordHash returns the encoded argon2id hash, or "" when no password is set.
func (u *User) PasswordHash() string { return u.passwordHash }

// TOTPSecret returns the sealed TOTP secret, nil when two-factor is off.
func (u *User) TOTPSecret() []byte { return u.totpSecret }

// TwoFactorEnabled reports whether sign-in asks for a TOTP code.
func (u *User) TwoFactorEnabled() bool { return len(u.totpSecret) > 0 }

// RecoveryCodes returns the hashes of the unused recovery codes.
func (u *User) RecoveryCodes() [][]byte { return u.recoveryCodes }

// RecoveryCodesLeft counts the unused recovery codes.
func (u *User) RecoveryCodesLeft() int { return len(u.recoveryCodes) }

// OIDCSubject returns the linked OpenID Connect subject, or "".
func (u *User) OIDCSubject() string { return u.oidcSubject }

// CreatedAt returns the creation time.
func (u *User) CreatedAt() time.Time { return u.createdAt }

// TimeZone returns the IANA name of the person's time zone, or "" when they chose none.
func (u *User) TimeZone() string { return u.timeZone }

// PasswordChangedAt returns when the password was last set, or nil.
func (u *User) PasswordChangedAt() *time.Time { return u.passwordChangedAt }
