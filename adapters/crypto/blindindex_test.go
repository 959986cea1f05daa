package crypto_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"github.com/formward/formward/adapters/crypto"
)

func TestBlindIndex(t *testing.T) {
	m1, m2 := crypto.GenerateMasterKey(), crypto.GenerateMasterKey()
	ix := crypto.NewBlindIndex(m1)
	a := ix.Email("wsp_a", "Jane@Example.org ")
	if !bytes.Equal(a, ix.Email("wsp_a", "  jane@example.ORG")) {
		t.Fatal("trimmed, lower-cased addresses must hash alike")
	}
	if len(a) != sha256.Size {
		t.Fatalf("hash length %d", len(a))
	}
	if bytes.Equal(a, ix.Email("wsp_b", "jane@example.org")) {
		t.Fatal("two workspaces must not share hashes")
	}
	if bytes.Equal(a, ix.Email("wsp_a", "john@example.org")) {
		t.Fatal("two addresses must not share a hash")
	}
	other := crypto.NewBlindIndex(m2)
	if bytes.Equal(a, other.Email("wsp_a", "jane@example.org")) || other.Version() == ix.Version() {
		t.Fatal("another master key must give other hashes and another version")
	}
	if crypto.NewBlindIndex(m1).Version() != ix.Version() {
		t.Fatal("the version must be stable for one master key")
	}
	// The documented construction: HMAC(HMAC(DeriveKey(master, label), workspace), address).
	wk := hmac.New(sha256.New, crypto.DeriveKey(m1, crypto.LabelEmailIndex))
	wk.Write([]byte("wsp_a"))
	mac := hmac.New(sha256.New, wk.Sum(nil))
	mac.Write([]byte("jane@example.org"))
	if !bytes.Equal(a, mac.Sum(nil)) {
		t.Fatal("hash differs from the documented construction")
	}
}
