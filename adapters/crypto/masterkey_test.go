package crypto

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestParseMasterKeyEncodings(t *testing.T) {
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = byte(250 + i) // includes bytes that encode to + / - _
	}
	sum := sha256.Sum256(raw)
	wantID := hex.EncodeToString(sum[:8])
	for name, s := range map[string]string{
		"std":           base64.StdEncoding.EncodeToString(raw),
		"raw std":       base64.RawStdEncoding.EncodeToString(raw),
		"url":           base64.URLEncoding.EncodeToString(raw),
		"raw url":       base64.RawURLEncoding.EncodeToString(raw),
		"surrounded":    "  " + base64.StdEncoding.EncodeToString(raw) + "\n",
		"trailing CRLF": base64.StdEncoding.EncodeToString(raw) + "\r\n",
	} {
		k, err := ParseMasterKey(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if k.ID() != wantID || string(k.key[:]) != string(raw) {
			t.Fatalf("%s: got key %s, want %s", name, k.ID(), wantID)
		}
	}
}

func TestParseMasterKeyErrors(t *testing.T) {
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	long := base64.StdEncoding.EncodeToString(make([]byte, 33))
	for name, s := range map[string]string{
		"empty":      "",
		"blank":      "   ",
		"not base64": "this is not base64 at all!!",
		"hex":        strings.Repeat("ab", 32),
		"16 bytes":   short,
		"33 bytes":   long,
		"mixed":      "+_" + strings.Repeat("A", 41) + "=", // both alphabets at once
	} {
		k, err := ParseMasterKey(s)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		if !k.IsZero() {
			t.Fatalf("%s: returned a key with an error", name)
		}
		if strings.TrimSpace(s) != "" && strings.Contains(err.Error(), strings.TrimSpace(s)) {
			t.Fatalf("%s: error %q repeats the input", name, err)
		}
	}
	_, err := ParseMasterKey(short)
	if !strings.Contains(err.Error(), "16 bytes") || !strings.Contains(err.Error(), "32") {
		t.Fatalf("error %q does not say what is wrong", err)
	}
}

func TestMasterKeyDoesNotPrintItsMaterial(t *testing.T) {
	k := GenerateMasterKey()
	secret := k.Base64()
	for _, verb := range []string{"%v", "%+v", "%s", "%#v", "%q", "%x"} {
		out := fmt.Sprintf(verb, k)
		if strings.Contains(out, secret) || strings.Contains(out, hex.EncodeToString(k.key[:])) {
			t.Fatalf("%s prints the key: %s", verb, out)
		}
		if verb != "%x" && !strings.Contains(out, k.ID()) {
			t.Fatalf("%s does not show the key ID: %s", verb, out)
		}
	}
	if len(k.ID()) != 16 || strings.ToLower(k.ID()) != k.ID() {
		t.Fatalf("ID %q is not 16 lowercase hex digits", k.ID())
	}
	again, err := ParseMasterKey(secret)
	if err != nil || again != k {
		t.Fatalf("Base64 does not round-trip: %v", err)
	}
	if GenerateMasterKey() == k {
		t.Fatal("two generated keys are equal")
	}
}

func TestLoadOrCreateMasterKey(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data", "nested")
	k1, generated, err := LoadOrCreateMasterKey(dataDir, "")
	if err != nil || !generated {
		t.Fatalf("first start: generated = %v, err = %v", generated, err)
	}
	path := filepath.Join(dataDir, "master.key")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %#o, want 0600", info.Mode().Perm())
	}
	if dir, _ := os.Stat(dataDir); dir.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode %#o, want 0700", dir.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) != 1 {
		t.Fatalf("data dir holds %d entries, want only the key file", len(entries))
	}

	k2, generated, err := LoadOrCreateMasterKey(dataDir, "")
	if err != nil || generated || k2 != k1 {
		t.Fatalf("second start: same = %v, generated = %v, err = %v", k2 == k1, generated, err)
	}

	// The environment wins over the file and writes nothing.
	env := GenerateMasterKey()
	k3, generated, err := LoadOrCreateMasterKey(dataDir, env.Base64())
	if err != nil || generated || k3 != env {
		t.Fatalf("from env: same = %v, generated = %v, err = %v", k3 == env, generated, err)
	}
	if _, _, err := LoadOrCreateMasterKey(dataDir, "nope"); err == nil || !strings.Contains(err.Error(), "FORMWARD_MASTER_KEY") {
		t.Fatalf("bad env: err = %v", err)
	}

	// A key file others can read is refused.
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o700} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadOrCreateMasterKey(dataDir, ""); err == nil || !strings.Contains(err.Error(), "0600") {
			t.Fatalf("mode %#o: err = %v", mode, err)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if k, _, err := LoadOrCreateMasterKey(dataDir, ""); err != nil || k != k1 {
		t.Fatalf("mode 0400: err = %v", err)
	}
}

func TestLoadOrCreateMasterKeyCorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "master.key"), []byte("c2hvcnQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadOrCreateMasterKey(dir, "")
	if err == nil || !strings.Contains(err.Error(), "master.key") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadOrCreateMasterKeyConcurrentFirstStart(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	keys := make([]MasterKey, n)
	gen := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, g, err := LoadOrCreateMasterKey(dir, "")
			if err != nil {
				t.Error(err)
			}
			keys[i], gen[i] = k, g
		})
	}
	wg.Wait()
	generated := 0
	for i := range n {
		if keys[i] != keys[0] {
			t.Fatal("concurrent first starts disagree on the master key")
		}
		if gen[i] {
			generated++
		}
	}
	if generated != 1 {
		t.Fatalf("%d callers report generating the key, want 1", generated)
	}
}

func TestKeyring(t *testing.T) {
	a, b, c := GenerateMasterKey(), GenerateMasterKey(), GenerateMasterKey()
	r := NewKeyring(a, b, c, a, MasterKey{})
	if r.Primary() != a {
		t.Fatal("wrong primary")
	}
	for _, k := range []MasterKey{a, b, c} {
		if got, ok := r.Get(k.ID()); !ok || got != k {
			t.Fatalf("Get(%s) missing", k.ID())
		}
	}
	if _, ok := r.Get(GenerateMasterKey().ID()); ok {
		t.Fatal("Get found a key that is not in the ring")
	}
	if ids := r.IDs(); len(ids) != 3 || ids[0] != a.ID() {
		t.Fatalf("IDs = %v", ids)
	}
}

func TestParsePreviousKeys(t *testing.T) {
	a, b := GenerateMasterKey(), GenerateMasterKey()
	keys, err := ParsePreviousKeys(" " + a.Base64() + " ,," + base64.RawURLEncoding.EncodeToString(b.key[:]) + ",")
	if err != nil || len(keys) != 2 || keys[0] != a || keys[1] != b {
		t.Fatalf("keys = %v, err = %v", keys, err)
	}
	if keys, err := ParsePreviousKeys(""); err != nil || len(keys) != 0 {
		t.Fatalf("empty: keys = %v, err = %v", keys, err)
	}
	_, err = ParsePreviousKeys(a.Base64() + ",bad")
	if err == nil || !strings.Contains(err.Error(), "#2") || strings.Contains(err.Error(), a.Base64()) {
		t.Fatalf("err = %v", err)
	}
}
