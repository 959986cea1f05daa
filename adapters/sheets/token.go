package sheets

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/formward/formward/adapters/actionkit"
)

// Scope is the OAuth scope the access tokens are requested for.
const Scope = "https://www.googleapis.com/auth/spreadsheets"

// serviceAccount is the part of a Google service-account key file the JWT bearer flow needs.
type serviceAccount struct {
	ClientEmail  string `json:"client_email"`
	PrivateKey   string `json:"private_key"`
	PrivateKeyID string `json:"private_key_id"`
	TokenURI     string `json:"token_uri"`
}

// credentialError is a service-account key that cannot work; retrying will not help.
type credentialError struct{ msg string }

func (e *credentialError) Error() string { return "google service account: " + e.msg }

func parseServiceAccount(raw string) (serviceAccount, *rsa.PrivateKey, error) {
	var sa serviceAccount
	if err := json.Unmarshal([]byte(raw), &sa); err != nil {
		return sa, nil, &credentialError{"service_account_json is not JSON"}
	}
	if sa.ClientEmail == "" || sa.PrivateKey == "" {
		return sa, nil, &credentialError{"client_email and private_key are required"}
	}
	block, _ := pem.Decode([]byte(sa.PrivateKey))
	if block == nil {
		return sa, nil, &credentialError{"private_key is not PEM"}
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return sa, nil, &credentialError{"private_key is not an RSA key"}
		}
		key = rk
	} else if rk, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = rk
	} else {
		return sa, nil, &credentialError{"private_key cannot be parsed"}
	}
	return sa, key, nil
}

// SignJWT returns the RS256-signed assertion of the JWT bearer flow (RFC 7523) for the service
// account, valid one hour from now, with aud = tokenURL.
func SignJWT(key *rsa.PrivateKey, keyID, clientEmail, tokenURL string, now time.Time) (string, error) {
	header := map[string]string{"alg": "RS256", "typ": "JWT"}
	if keyID != "" {
		header["kid"] = keyID
	}
	claims := map[string]any{
		"iss": clientEmail, "scope": Scope, "aud": tokenURL,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign jwt: %w", err)
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// tokenCache keeps access tokens per service-account key until shortly before they expire.
type tokenCache struct {
	mu     sync.Mutex
	tokens map[[32]byte]cachedToken
}

type cachedToken struct {
	value   string
	expires time.Time
}

func (c *tokenCache) get(k [32]byte, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tokens[k]
	if !ok || !now.Before(t.expires) {
		return "", false
	}
	return t.value, true
}

func (c *tokenCache) put(k [32]byte, t cachedToken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens == nil {
		c.tokens = map[[32]byte]cachedToken{}
	}
	c.tokens[k] = t
}

func (c *tokenCache) drop(k [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tokens, k)
}

// httpError is a non-2xx answer of a Google endpoint.
type httpError struct {
	what    string
	status  int
	message string
}

func (e *httpError) Error() string {
	if e.message != "" {
		return fmt.Sprintf("%s answered %d: %s", e.what, e.status, e.message)
	}
	return fmt.Sprintf("%s answered %d", e.what, e.status)
}

// accessToken returns a cached token for the credential or fetches a new one. The token URL
// is the configured one, never the key file's token_uri: a customer-supplied URL would let
// anyone make Formward POST to an address of their choice.
func (s *Sheets) accessToken(ctx context.Context, rawCred string) (string, [32]byte, error) {
	ck := sha256.Sum256([]byte(rawCred))
	now := s.now()
	if t, ok := s.tokens.get(ck, now); ok {
		return t, ck, nil
	}
	sa, key, err := parseServiceAccount(rawCred)
	if err != nil {
		return "", ck, err
	}
	assertion, err := SignJWT(key, sa.PrivateKeyID, sa.ClientEmail, s.tokenURL, now)
	if err != nil {
		return "", ck, err
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", ck, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.http.Do(req)
	if err != nil {
		return "", ck, fmt.Errorf("google token: %w", actionkit.ClientError(ctx, err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(raw, &e)
		msg := strings.TrimSpace(e.Error + " " + e.Description)
		return "", ck, &httpError{what: "google token endpoint", status: resp.StatusCode, message: msg}
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.AccessToken == "" {
		return "", ck, errors.New("google token endpoint answered without an access_token")
	}
	if t.ExpiresIn <= 0 {
		t.ExpiresIn = 3600
	}
	// Refresh a minute early so a token does not expire between the two Sheets calls.
	life := time.Duration(t.ExpiresIn)*time.Second - time.Minute
	if life < 0 {
		life = 0
	}
	s.tokens.put(ck, cachedToken{value: t.AccessToken, expires: now.Add(life)})
	return t.AccessToken, ck, nil
}
