package crypto

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"
)

func TestDeriveKey(t *testing.T) {
	m := GenerateMasterKey()
	k := DeriveKey(m, LabelCursor)
	if len(k) != 32 {
		t.Fatalf("len = %d", len(k))
	}
	if !bytes.Equal(k, DeriveKey(m, LabelCursor)) {
		t.Fatal("not deterministic")
	}
	if bytes.Equal(k, DeriveKey(m, LabelIPHash)) {
		t.Fatal("labels give equal keys")
	}
	if bytes.Equal(k, DeriveKey(GenerateMasterKey(), LabelCursor)) {
		t.Fatal("master keys give equal subkeys")
	}
	if bytes.Equal(k, m.key[:]) {
		t.Fatal("subkey is the master key")
	}

	// Independent check against RFC 5869 with an empty salt: one block of expansion.
	zero := make([]byte, sha256.Size)
	prk := hmacSHA256(zero, m.key[:])
	want := hmacSHA256(prk, append([]byte(LabelCursor), 1))
	if !bytes.Equal(k, want) {
		t.Fatal("DeriveKey is not HKDF-SHA256(master, salt = none, info = label)")
	}
}

func hmacSHA256(key, msg []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(msg)
	return mac.Sum(nil)
}

func TestIPHasher(t *testing.T) {
	secret := []byte("server secret")
	h := NewIPHasher(secret)
	got := h.Hash("203.0.113.7")
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(got) {
		t.Fatalf("hash %q is not 64 lowercase hex digits", got)
	}
	if want := hex.EncodeToString(hmacSHA256(secret, []byte("203.0.113.7"))); got != want {
		t.Fatalf("hash = %s, want HMAC-SHA256 %s", got, want)
	}
	if h.Hash("203.0.113.7") != got {
		t.Fatal("not deterministic")
	}
	if NewIPHasher([]byte("other secret")).Hash("203.0.113.7") == got {
		t.Fatal("secrets give equal hashes")
	}
	if h.Hash("203.0.113.8") == got {
		t.Fatal("addresses give equal hashes")
	}
	secret[0] ^= 1 // the hasher keeps its own copy
	if h.Hash("203.0.113.7") != got {
		t.Fatal("the hasher shares the caller's secret slice")
	}

	same := map[string][]string{
		"203.0.113.7": {"::ffff:203.0.113.7", "::FFFF:cb00:7107", " 203.0.113.7\n", "203.0.113.7:54321", "[::ffff:203.0.113.7]:443"},
		"2001:db8::1": {"2001:DB8::1", "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1%eth0", "[2001:db8::1]:8080"},
		"not an ip":   {"  not an ip  "},
	}
	for canonical, forms := range same {
		want := h.Hash(canonical)
		for _, f := range forms {
			if h.Hash(f) != want {
				t.Fatalf("Hash(%q) != Hash(%q)", f, canonical)
			}
		}
	}
	if h.Hash("::1") == h.Hash("127.0.0.1") {
		t.Fatal("IPv6 loopback hashed like IPv4 loopback")
	}
	if h.Hash("") == "" {
		t.Fatal("empty input gave an empty hash")
	}
}
