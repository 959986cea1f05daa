package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"

	"crypto/rand"

	"github.com/formward/formward/ports"
)

// Challenge is an ALTCHA proof-of-work challenge (protocol v1, SHA-256): find the number n
// with SHA-256(salt + n) = challenge. The signature is HMAC-SHA256(key, challenge), so the
// server keeps no state; the salt carries the render token's nonce and an expiry.
type Challenge struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	MaxNumber int    `json:"maxnumber"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
}

// Solution is the base64 JSON payload the solver sends back (the ALTCHA widget's format).
type Solution struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	Number    int    `json:"number"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
}

var (
	errPoWMissing = ports.ErrPoWMissing
	errPoWInvalid = ports.ErrPoWInvalid
)

// proofOfWork verifies the solutions of the challenges this adapter issues (ports.ProofOfWork).
type proofOfWork struct{ key []byte }

// Verify checks a solver's payload against the render token's nonce.
func (p proofOfWork) Verify(solution, nonce string, now time.Time) error {
	return verifySolution(p.key, solution, nonce, now)
}

// newChallenge makes a challenge bound to nonce that expires at expires.
func newChallenge(key []byte, nonce string, maxNumber int, expires time.Time) (Challenge, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(int64(maxNumber)+1))
	if err != nil {
		return Challenge{}, err
	}
	salt := nonce + "?expires=" + strconv.FormatInt(expires.Unix(), 10)
	sum := sha256.Sum256([]byte(salt + n.String()))
	ch := hex.EncodeToString(sum[:])
	return Challenge{Algorithm: "SHA-256", Challenge: ch, MaxNumber: maxNumber, Salt: salt, Signature: signHex(key, ch)}, nil
}

func signHex(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}

// verifySolution checks a solver's payload: signed by us, solved, not expired, bound to nonce.
func verifySolution(key []byte, payload, nonce string, now time.Time) error {
	if payload == "" {
		return errPoWMissing
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return errPoWInvalid
	}
	var s Solution
	if err := json.Unmarshal(raw, &s); err != nil || s.Algorithm != "SHA-256" {
		return errPoWInvalid
	}
	if !hmac.Equal([]byte(signHex(key, s.Challenge)), []byte(s.Signature)) {
		return errPoWInvalid
	}
	sum := sha256.Sum256([]byte(s.Salt + strconv.Itoa(s.Number)))
	if hex.EncodeToString(sum[:]) != s.Challenge {
		return errPoWInvalid
	}
	base, query, _ := strings.Cut(s.Salt, "?")
	if base != nonce {
		return errPoWInvalid
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return errPoWInvalid
	}
	exp, err := strconv.ParseInt(params.Get("expires"), 10, 64)
	if err != nil || now.Unix() > exp {
		return errPoWInvalid
	}
	return nil
}

// Solve finds the number of a challenge by brute force, as the page's script does; tests and
// scripted clients use it.
func Solve(ch Challenge) (string, bool) {
	for n := 0; n <= ch.MaxNumber; n++ {
		sum := sha256.Sum256([]byte(ch.Salt + strconv.Itoa(n)))
		if hex.EncodeToString(sum[:]) == ch.Challenge {
			b, _ := json.Marshal(Solution{Algorithm: ch.Algorithm, Challenge: ch.Challenge, Number: n, Salt: ch.Salt, Signature: ch.Signature})
			return base64.StdEncoding.EncodeToString(b), true
		}
	}
	return "", false
}
