package crypto

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

func TestTOTPGenerate(t *testing.T) {
	secret, link, err := TOTP{}.Generate("Formward", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) != 32 { // 160 bits in base32
		t.Fatalf("secret %q: want 32 base32 characters", secret)
	}
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "otpauth" || u.Host != "totp" {
		t.Fatalf("url %q is not an otpauth://totp URL", link)
	}
	q := u.Query()
	if q.Get("secret") != secret || q.Get("issuer") != "Formward" || q.Get("digits") != "6" || q.Get("period") != "30" ||
		q.Get("algorithm") != "SHA1" || !strings.Contains(u.Path, "ada@example.com") {
		t.Fatalf("url %q does not carry the secret, issuer, account and parameters", link)
	}
	other, _, _ := TOTP{}.Generate("Formward", "ada@example.com")
	if other == secret {
		t.Fatal("two secrets are equal")
	}
}

// RFC 6238 appendix B: the SHA-1 test secret "12345678901234567890" at T=59 gives 94287082
// (eight digits); the six-digit code is the last six, 287082.
func TestTOTPValidateRFC6238Vector(t *testing.T) {
	secret := "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" // base32 of "12345678901234567890"
	at := time.Unix(59, 0)
	if !(TOTP{}).Validate(secret, "287082", at) {
		t.Fatal("the RFC 6238 test vector does not validate")
	}
	if !(TOTP{}).Validate(secret, " 287 082 ", at) {
		t.Fatal("spaces between digit groups are not ignored")
	}
	if (TOTP{}).Validate(secret, "287083", at) {
		t.Fatal("a wrong code validates")
	}
}

func TestTOTPValidateSkewOneStep(t *testing.T) {
	secret, _, _ := TOTP{}.Generate("Formward", "ada@example.com")
	now := time.Date(2026, 1, 2, 3, 4, 15, 0, time.UTC) // 15 s into a step
	code, err := totp.GenerateCode(secret, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		offset time.Duration
		ok     bool
	}{
		{0, true},
		{-30 * time.Second, true},
		{30 * time.Second, true},
		{-60 * time.Second, false},
		{60 * time.Second, false},
	} {
		if got := (TOTP{}).Validate(secret, code, now.Add(c.offset)); got != c.ok {
			t.Errorf("code of now checked at %v: got %v, want %v", c.offset, got, c.ok)
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		if (TOTP{}).Validate(secret, bad, now) {
			t.Errorf("%q validates", bad)
		}
	}
}
