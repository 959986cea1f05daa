package apikey_test

import (
	"crypto/sha256"
	"errors"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
)

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

const secret = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG" // 43 chars, like base64url of 32 bytes

func TestParseScope(t *testing.T) {
	tests := []struct {
		in   string
		want apikey.Scope
		ok   bool
	}{
		{"read-only", apikey.ScopeReadOnly, true},
		{"read-write", apikey.ScopeReadWrite, true},
		{"admin", apikey.ScopeAdmin, true},
		{"", "", false},
		{"Admin", "", false},
		{"read_only", "", false},
		{"write", "", false},
		{" admin", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := apikey.ParseScope(tt.in)
			if tt.ok {
				if err != nil || got != tt.want {
					t.Fatalf("ParseScope(%q) = %q, %v", tt.in, got, err)
				}
				return
			}
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || ve.Violations[0].Field != "scope" {
				t.Fatalf("ParseScope(%q) err = %v, want a validation error on scope", tt.in, err)
			}
		})
	}
}

func TestScopeAllows(t *testing.T) {
	tests := []struct {
		scope              apikey.Scope
		read, write, admin bool
	}{
		{apikey.ScopeReadOnly, true, false, false},
		{apikey.ScopeReadWrite, true, true, false},
		{apikey.ScopeAdmin, true, true, true},
		{apikey.Scope(""), false, false, false},
		{apikey.Scope("root"), false, false, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.scope), func(t *testing.T) {
			for p, want := range map[access.Permission]bool{access.Read: tt.read, access.Write: tt.write, access.ManageAccount: tt.admin} {
				if got := tt.scope.Allows(p); got != want {
					t.Errorf("%q.Allows(%s) = %v, want %v", tt.scope, p, got, want)
				}
			}
			if got := tt.scope.Allows(access.Permission("anything")); got {
				t.Errorf("%q allows an unknown permission", tt.scope)
			}
		})
	}
}

// The permission model: read-only reads; read-write reads and writes; admin also manages the
// account, which is the only thing that sets it apart from read-write.
func TestScopePermissions(t *testing.T) {
	for scope, want := range map[apikey.Scope][]access.Permission{
		apikey.ScopeReadOnly:  {access.Read},
		apikey.ScopeReadWrite: {access.Read, access.Write},
		apikey.ScopeAdmin:     {access.Read, access.Write, access.ManageAccount},
		apikey.Scope("root"):  nil,
	} {
		if got := scope.Permissions(); !slices.Equal(got, want) {
			t.Errorf("%q grants %v, want %v", scope, got, want)
		}
	}
	// The returned list is a copy: changing it changes no scope.
	p := apikey.ScopeReadOnly.Permissions()
	p[0] = access.ManageAccount
	if apikey.ScopeReadOnly.Allows(access.ManageAccount) {
		t.Fatal("Permissions exposes the model")
	}
}

func TestTokenRoundTrip(t *testing.T) {
	tests := []struct{ id, secret string }{
		{"key_01JD8Z", secret},
		{"key_x", strings.Repeat("s", 32)},
		{strings.Repeat("k", 64), strings.Repeat("s", 128)},
		{"key_1", "abc-_DEF" + strings.Repeat("z", 30)},
	}
	for _, tt := range tests {
		tok := apikey.FormatToken(tt.id, tt.secret)
		if !strings.HasPrefix(tok, apikey.TokenPrefix) {
			t.Errorf("token %q lacks prefix", tok)
		}
		id, sec, err := apikey.ParseToken(tok)
		if err != nil || id != tt.id || sec != tt.secret {
			t.Errorf("ParseToken(FormatToken(%q, %q)) = %q, %q, %v", tt.id, tt.secret, id, sec, err)
		}
	}
}

func TestParseTokenMalformed(t *testing.T) {
	tests := []struct{ name, token string }{
		{"empty", ""},
		{"no prefix", "key_1." + secret},
		{"other prefix", "sk_live_key_1." + secret},
		{"prefix only", apikey.TokenPrefix},
		{"no dot", apikey.TokenPrefix + "key_1" + secret},
		{"empty id", apikey.TokenPrefix + "." + secret},
		{"empty secret", apikey.TokenPrefix + "key_1."},
		{"short secret", apikey.TokenPrefix + "key_1." + strings.Repeat("s", 31)},
		{"long secret", apikey.TokenPrefix + "key_1." + strings.Repeat("s", 129)},
		{"long id", apikey.TokenPrefix + strings.Repeat("k", 65) + "." + secret},
		{"bearer included", "Bearer " + apikey.FormatToken("key_1", secret)},
		{"upper-case prefix", strings.ToUpper(apikey.TokenPrefix) + "key_1." + secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, sec, err := apikey.ParseToken(tt.token)
			if !errors.Is(err, apikey.ErrMalformedToken) || id != "" || sec != "" {
				t.Fatalf("ParseToken(%q) = %q, %q, %v", tt.token, id, sec, err)
			}
		})
	}
}

func TestHashSecret(t *testing.T) {
	h := apikey.HashSecret(secret)
	if len(h) != sha256.Size {
		t.Fatalf("len = %d", len(h))
	}
	if string(h) == secret || string(apikey.HashSecret(secret)) != string(h) || string(apikey.HashSecret(secret+"x")) == string(h) {
		t.Fatal("HashSecret is not a deterministic one-way digest")
	}
}

func TestNewKey(t *testing.T) {
	good := apikey.HashSecret(secret)
	tests := []struct {
		name     string
		ws, nm   string
		scope    apikey.Scope
		hash     []byte
		badPaths []string
	}{
		{"valid", "wsp_1", "CI key", apikey.ScopeReadWrite, good, nil},
		{"name 100", "wsp_1", strings.Repeat("ñ", 100), apikey.ScopeAdmin, good, nil},
		{"name trimmed empty", "wsp_1", "   ", apikey.ScopeAdmin, good, []string{"name"}},
		{"name 101", "wsp_1", strings.Repeat("ñ", 101), apikey.ScopeAdmin, good, []string{"name"}},
		{"bad scope", "wsp_1", "k", apikey.Scope("root"), good, []string{"scope"}},
		{"no workspace", "", "k", apikey.ScopeReadOnly, good, []string{"workspace_id"}},
		{"short hash", "wsp_1", "k", apikey.ScopeReadOnly, []byte("raw secret"), []string{"secret"}},
		{"everything wrong", "", "", "", nil, []string{"name", "scope", "workspace_id", "secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := apikey.New("key_1", tt.ws, tt.nm, tt.scope, tt.hash, audit.System, t0.In(time.FixedZone("X", 3600)))
			if tt.badPaths == nil {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if k.ID() != "key_1" || k.WorkspaceID() != tt.ws || k.Name() != strings.TrimSpace(tt.nm) || k.Scope() != tt.scope ||
					string(k.SecretHash()) != string(tt.hash) || !k.Active() || k.RevokedAt() != nil {
					t.Fatalf("key = %+v", k)
				}
				if k.CreatedAt().Location() != time.UTC || !k.CreatedAt().Equal(t0) {
					t.Fatalf("createdAt = %v", k.CreatedAt())
				}
				return
			}
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || k != nil {
				t.Fatalf("New = %v, %v", k, err)
			}
			var got []string
			for _, v := range ve.Violations {
				got = append(got, v.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.badPaths, ",") {
				t.Fatalf("violations = %v, want %v", got, tt.badPaths)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	k, err := apikey.New("key_1", "wsp_1", "k", apikey.ScopeAdmin, apikey.HashSecret(secret), audit.System, t0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		presented string
		want      bool
	}{
		{secret, true},
		{secret + "x", false},
		{secret[:len(secret)-1], false},
		{strings.ToUpper(secret), false},
		{"", false},
	}
	for _, tt := range tests {
		if got := k.Matches(tt.presented); got != tt.want {
			t.Errorf("Matches(%q) = %v, want %v", tt.presented, got, tt.want)
		}
	}
	// A stored key whose hash is not a digest never matches.
	broken := apikey.UnmarshalFromDatabase("key_2", "wsp_1", "k", apikey.ScopeAdmin, nil, audit.Actor{}, t0, nil, nil)
	if broken.Matches("") || broken.Matches(secret) {
		t.Error("key without a hash matched")
	}
}

func TestRevoke(t *testing.T) {
	k, err := apikey.New("key_1", "wsp_1", "k", apikey.ScopeAdmin, apikey.HashSecret(secret), audit.System, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Active() || k.RevokedAt() != nil {
		t.Fatal("new key not active")
	}
	first := time.Date(2024, 6, 1, 0, 0, 0, 0, time.FixedZone("X", 3600))
	k.Revoke(first)
	if k.Active() || k.RevokedAt() == nil || !k.RevokedAt().Equal(first) || k.RevokedAt().Location() != time.UTC {
		t.Fatalf("after Revoke: active=%v revokedAt=%v", k.Active(), k.RevokedAt())
	}
	k.Revoke(first.Add(time.Hour))
	if !k.RevokedAt().Equal(first) {
		t.Fatalf("second Revoke moved revokedAt to %v", k.RevokedAt())
	}
	if !k.Matches(secret) {
		t.Fatal("revocation must not change the hash; Active decides")
	}
	at := t0
	stored := apikey.UnmarshalFromDatabase("key_1", "wsp_1", "k", apikey.ScopeAdmin, apikey.HashSecret(secret), audit.Actor{}, t0, nil, &at)
	if stored.Active() {
		t.Fatal("stored revoked key is active")
	}
}
