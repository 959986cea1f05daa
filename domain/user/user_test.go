package user_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/user"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func violation(t *testing.T, err error) domain.Violation {
	t.Helper()
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) == 0 {
		t.Fatalf("error = %v, want a validation error", err)
	}
	return ve.Violations[0]
}

func TestParseEmail(t *testing.T) {
	valid := map[string]string{
		"ada@example.com":             "ada@example.com",
		"  Ada.Lovelace@Example.COM ": "ada.lovelace@example.com",
		"a+tag@mail.example.org":      "a+tag@mail.example.org",
		"x@sub.example.co.uk":         "x@sub.example.co.uk",
	}
	for in, want := range valid {
		got, err := user.ParseEmail(in)
		if err != nil || got != want {
			t.Errorf("ParseEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	invalid := []string{
		"", "   ", "ada", "ada@", "@example.com", "ada@localhost", "ada@@example.com",
		"Ada <ada@example.com>", "ada@example.com, bob@example.com", "ada @example.com",
		"ada@exa mple.com", "ada\x00@example.com", "ada@exa\nmple.com",
		strings.Repeat("a", 250) + "@example.com",
	}
	for _, in := range invalid {
		got, err := user.ParseEmail(in)
		if err == nil {
			t.Errorf("ParseEmail(%q) = %q, want an error", in, got)
			continue
		}
		if v := violation(t, err); v.Field != "email" || v.Code != "invalid_email" {
			t.Errorf("ParseEmail(%q) violation = %+v", in, v)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	ok := []string{
		"correct horse battery",
		strings.Repeat("ж", 12),         // 12 characters, 24 bytes
		strings.Repeat("x", 1023) + "y", // 1,024 characters
		"Tr0ub4dor&3-staple",
	}
	for _, pw := range ok {
		if err := user.CheckPassword(pw); err != nil {
			t.Errorf("CheckPassword(%q…) = %v", pw[:min(len(pw), 20)], err)
		}
	}
	tooShort := []string{"", "short", "elevenchars", strings.Repeat("ж", 11), strings.Repeat("x", 1025), "\xff\xfe invalid utf8"}
	for _, pw := range tooShort {
		if v := violation(t, user.CheckPassword(pw)); v.Field != "password" || v.Code != "invalid_length" {
			t.Errorf("CheckPassword(%q) violation = %+v", pw, v)
		}
	}
	for _, pw := range []string{"123456789012", "administrator", "BaseBall2024", "1qaz2wsx3edc"} {
		if !user.IsCommonPassword(pw) {
			t.Errorf("IsCommonPassword(%q) = false", pw)
		}
		if v := violation(t, user.CheckPassword(pw)); v.Code != "common_password" {
			t.Errorf("CheckPassword(%q) violation = %+v", pw, v)
		}
	}
	if user.IsCommonPassword("# common passwords of 12+ characters, one per line, compared case-insensitively") || user.IsCommonPassword("") {
		t.Fatal("the list's comment or an empty line counts as a password")
	}
}

func TestNewAndRename(t *testing.T) {
	u, err := user.New("usr_1", " Ada@Example.com ", "  Ada Lovelace ", t0.In(time.FixedZone("X", 7200)))
	if err != nil {
		t.Fatal(err)
	}
	if u.ID() != "usr_1" || u.Email() != "ada@example.com" || u.Name() != "Ada Lovelace" || !u.CreatedAt().Equal(t0) ||
		u.CreatedAt().Location() != time.UTC || u.PasswordHash() != "" || u.PasswordChangedAt() != nil || u.TwoFactorEnabled() {
		t.Fatalf("user = %+v", u)
	}
	_, err = user.New("usr_2", "nope", strings.Repeat("n", 201), t0)
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) != 2 || ve.Violations[0].Field != "email" || ve.Violations[1].Field != "name" {
		t.Fatalf("New with a bad email and name = %v", err)
	}
	if _, err := user.New("usr_3", "a@example.com", "", t0); err != nil {
		t.Fatalf("an empty name is allowed: %v", err)
	}
	if err := u.Rename("Bell\x07"); err == nil || u.Name() != "Ada Lovelace" {
		t.Fatalf("Rename with a control character = %v, name %q", err, u.Name())
	}
	if err := u.Rename(" Countess "); err != nil || u.Name() != "Countess" {
		t.Fatalf("Rename = %v, name %q", err, u.Name())
	}
	later := t0.Add(time.Hour)
	u.SetPasswordHash("$argon2id$hash", later)
	if u.PasswordHash() != "$argon2id$hash" || !u.PasswordChangedAt().Equal(later) {
		t.Fatalf("password = %q at %v", u.PasswordHash(), u.PasswordChangedAt())
	}
	u.LinkOIDC("sub-1")
	if u.OIDCSubject() != "sub-1" {
		t.Fatalf("oidc subject = %q", u.OIDCSubject())
	}
}

func TestRecoveryCodes(t *testing.T) {
	u, err := user.New("usr_1", "ada@example.com", "", t0)
	if err != nil {
		t.Fatal(err)
	}
	if u.UseRecoveryCode("abcd-efgh") {
		t.Fatal("a code was accepted with two-factor off")
	}
	codes := []string{"abcd-efgh-ijkl", "mnop-qrst-uvwx", "2345-6789-abcd"}
	hashes := make([][]byte, len(codes))
	for i, c := range codes {
		hashes[i] = user.HashRecoveryCode(c)
	}
	original := append([][]byte(nil), hashes...)
	u.EnableTwoFactor([]byte("sealed"), hashes)
	if !u.TwoFactorEnabled() || u.RecoveryCodesLeft() != 3 {
		t.Fatalf("two-factor = %v with %d codes", u.TwoFactorEnabled(), u.RecoveryCodesLeft())
	}
	if !bytes.Equal(user.HashRecoveryCode(" MNOP-QRST-UVWX "), user.HashRecoveryCode("mnopqrstuvwx")) {
		t.Fatal("recovery codes are not normalised (case, dashes, spaces)")
	}
	if u.UseRecoveryCode("zzzz-zzzz-zzzz") {
		t.Fatal("an unknown code was accepted")
	}
	if !u.UseRecoveryCode("MNOP-QRST-UVWX") {
		t.Fatal("a valid code was refused")
	}
	if u.UseRecoveryCode("mnop-qrst-uvwx") {
		t.Fatal("a code was accepted twice")
	}
	if u.RecoveryCodesLeft() != 2 || !bytes.Equal(u.RecoveryCodes()[0], original[0]) || !bytes.Equal(u.RecoveryCodes()[1], original[2]) {
		t.Fatalf("codes left = %d", u.RecoveryCodesLeft())
	}
	// The slice handed in is not rewritten behind the caller's back.
	for i := range hashes {
		if !bytes.Equal(hashes[i], original[i]) {
			t.Fatalf("EnableTwoFactor's argument changed at %d", i)
		}
	}
	for _, c := range []string{codes[0], codes[2]} {
		if !u.UseRecoveryCode(c) {
			t.Fatalf("code %s refused", c)
		}
	}
	if u.RecoveryCodesLeft() != 0 || u.UseRecoveryCode(codes[0]) {
		t.Fatal("codes left after spending all")
	}
	u.DisableTwoFactor()
	if u.TwoFactorEnabled() || u.TOTPSecret() != nil || u.RecoveryCodes() != nil {
		t.Fatal("two-factor still on")
	}
}
