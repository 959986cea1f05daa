package crypto

import (
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/formward/formward/ports"
)

var _ ports.TOTP = TOTP{}

// TOTP makes and checks RFC 6238 codes as authenticator apps expect them: SHA-1, six digits, a
// 30-second step, and one step of clock skew either way. Secrets are 160 random bits in base32.
type TOTP struct{}

// totpOpts are the parameters every common authenticator app assumes.
var totpOpts = totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// Generate returns a new secret and the otpauth:// URL that carries it to an app.
func (TOTP) Generate(issuer, account string) (string, string, error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account, Period: totpOpts.Period,
		SecretSize: 20, Digits: totpOpts.Digits, Algorithm: totpOpts.Algorithm})
	if err != nil {
		return "", "", fmt.Errorf("generate totp secret: %w", err)
	}
	return k.Secret(), k.URL(), nil
}

// Validate checks a six-digit code against the secret at now, accepting the previous and the
// next step as well. Spaces people type between digit groups are ignored.
func (TOTP) Validate(secret, code string, now time.Time) bool {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != 6 {
		return false
	}
	ok, err := totp.ValidateCustom(code, secret, now.UTC(), totpOpts)
	return err == nil && ok
}
