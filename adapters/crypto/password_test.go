package crypto

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

// cheapParams keep the tests of behaviour fast; TestPasswordHasherRFC9106 checks the real ones.
var cheapParams = Argon2Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

func TestPasswordHasherRFC9106(t *testing.T) {
	h := NewPasswordHasher()
	enc, err := h.Hash("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\$argon2id\$v=19\$m=65536,t=3,p=4\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)
	if !re.MatchString(enc) {
		t.Fatalf("hash %q is not a PHC argon2id string with the RFC 9106 parameters", enc)
	}
	if !h.Verify(enc, "correct horse battery staple") {
		t.Fatal("the right password does not verify")
	}
	if h.Verify(enc, "correct horse battery stapler") {
		t.Fatal("a wrong password verifies")
	}
}

// A hash made elsewhere with the same algorithm (here: the library directly, with a known salt)
// verifies, so the encoding is the standard one and not only self-consistent.
func TestPasswordHasherReadsStandardEncoding(t *testing.T) {
	salt := []byte("0123456789abcdef")
	key := argon2.IDKey([]byte("a long enough password"), salt, 2, 128, 2, 32)
	enc := "$argon2id$v=19$m=128,t=2,p=2$MDEyMzQ1Njc4OWFiY2RlZg$" + b64(key)
	h := NewPasswordHasherWithParams(cheapParams)
	if !h.Verify(enc, "a long enough password") {
		t.Fatal("a standard PHC hash with other parameters does not verify")
	}
	if h.Verify(enc, "a long enough passworD") {
		t.Fatal("a wrong password verifies")
	}
}

func TestPasswordHasherSaltsEveryHash(t *testing.T) {
	h := NewPasswordHasherWithParams(cheapParams)
	a, _ := h.Hash("same password here")
	b, _ := h.Hash("same password here")
	if a == b {
		t.Fatal("two hashes of one password are equal: no fresh salt")
	}
	if !h.Verify(a, "same password here") || !h.Verify(b, "same password here") {
		t.Fatal("salted hashes do not verify")
	}
}

func TestPasswordHasherRefusesEmptyAndMalformed(t *testing.T) {
	h := NewPasswordHasherWithParams(cheapParams)
	good, _ := h.Hash("a password of length")
	parts := strings.Split(good, "$")
	tampered := strings.Join(append(parts[:5:5], b64(make([]byte, 32))), "$")
	for name, enc := range map[string]string{
		"empty":          "",
		"bcrypt":         "$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
		"argon2i":        strings.Replace(good, "$argon2id$", "$argon2i$", 1),
		"old version":    strings.Replace(good, "v=19", "v=16", 1),
		"bad params":     strings.Replace(good, "m=64,", "m=x,", 1),
		"huge memory":    strings.Replace(good, "m=64,", "m=4294967295,", 1),
		"missing part":   strings.Join(parts[:5], "$"),
		"tampered hash":  tampered,
		"not base64":     strings.Replace(good, parts[4], "!!!!", 1),
		"unknown param":  strings.Replace(good, "p=1", "q=1", 1),
		"zero time cost": strings.Replace(good, "t=1", "t=0", 1),
	} {
		if h.Verify(enc, "a password of length") {
			t.Errorf("%s: %q verifies", name, enc)
		}
	}
	if !h.Verify(good, "a password of length") {
		t.Fatal("the untouched hash does not verify")
	}
}

func b64(b []byte) string { return base64.RawStdEncoding.EncodeToString(b) }
