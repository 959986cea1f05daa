package dashboard

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/accounts"
)

// SessionCookie is the dashboard session's cookie: the token, HttpOnly, SameSite=Lax, Secure
// when the public URL is https, sent only to /app.
const SessionCookie = "formward_session"

const (
	cookiePath = "/app"
	// signInCookie carries the email and password sealed between the password and the
	// two-factor steps of a sign-in, for five minutes.
	signInCookie = "formward_signin"
	signInTTL    = 5 * time.Minute
	// oidcCookie carries the state, nonce and PKCE verifier of a single sign-on, for ten minutes.
	oidcCookie = "formward_oidc"
	oidcTTL    = 10 * time.Minute
)

// contentSecurityPolicy allows only the dashboard's own files: no inline script or style.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// headers sets the security headers of every dashboard answer. Pages are private: they are
// never stored by shared caches, and pages that show a secret are not stored at all.
func (h *Handler) headers(c *gin.Context) {
	w := c.Writer.Header()
	w.Set("Content-Security-Policy", contentSecurityPolicy)
	w.Set("X-Frame-Options", "DENY")
	w.Set("Referrer-Policy", "same-origin")
	w.Set("X-Content-Type-Options", "nosniff")
	w.Set("Cross-Origin-Opener-Policy", "same-origin")
	w.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
	if !strings.HasPrefix(c.Request.URL.Path, "/app/assets/") {
		w.Set("Cache-Control", "private, no-cache")
	}
	c.Next()
}

// noStore marks an answer that shows a secret (a new key, recovery codes, an accept link).
func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store") }

// sameOrigin refuses state-changing requests from other origins (Sec-Fetch-Site, else Origin
// against Host), as net/http's CrossOriginProtection decides.
func (h *Handler) sameOrigin(c *gin.Context) {
	if err := h.origin.Check(c.Request); err != nil {
		h.crossOriginDenied(c.Writer, c.Request)
		c.Abort()
		return
	}
	c.Next()
}

func (h *Handler) crossOriginDenied(w http.ResponseWriter, r *http.Request) {
	h.renderStatus(w, http.StatusForbidden, "message", &view{Title: "Request refused", Data: message{
		Heading:    "Request refused",
		Paragraphs: []string{"This request came from another site, so it was not carried out. Go back to the dashboard and try again from there."},
		Action:     &link{Href: "/app", Label: "Back to the dashboard"},
	}})
}

// clientIP is the address the request came from, behind the trusted proxies.
func (h *Handler) clientIP(r *http.Request) string {
	return httpkit.ClientIP(r, h.opts.TrustedProxies)
}

func (h *Handler) setCookie(c *gin.Context, name, value string, maxAge time.Duration) {
	http.SetCookie(c.Writer, &http.Cookie{Name: name, Value: value, Path: cookiePath, MaxAge: int(maxAge.Seconds()),
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
}

func (h *Handler) clearCookie(c *gin.Context, name string) {
	http.SetCookie(c.Writer, &http.Cookie{Name: name, Value: "", Path: cookiePath, MaxAge: -1,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
}

// startSession hands the browser the new session's token (the session rotates at every
// sign-in: the token is always a new one).
func (h *Handler) startSession(c *gin.Context, s accounts.SignedIn) {
	h.setCookie(c, SessionCookie, s.Token, 30*24*time.Hour)
}

// cookieBox seals small values into cookies with AES-256-GCM: the browser can neither read
// nor change them, and each carries its own expiry.
type cookieBox struct{ aead cipher.AEAD }

func newCookieBox(key []byte) (cookieBox, error) {
	if len(key) < 32 {
		return cookieBox{}, errors.New("dashboard: the cookie key must be at least 32 bytes")
	}
	sum := sha256.Sum256(append([]byte("formward dashboard cookie v1\x00"), key...))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return cookieBox{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return cookieBox{}, err
	}
	return cookieBox{aead: aead}, nil
}

type sealed struct {
	Name    string          `json:"n"`
	Expires int64           `json:"e"`
	Value   json.RawMessage `json:"v"`
}

// seal encodes v for the cookie called name, valid until exp.
func (b cookieBox) seal(name string, v any, exp time.Time) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(sealed{Name: name, Expires: exp.Unix(), Value: raw})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b.aead.Seal(nonce, nonce, plain, []byte(name))), nil
}

var errBadCookie = errors.New("the sign-in step expired or was tampered with")

// open decodes a value sealed for the cookie called name, refusing it after its expiry.
func (b cookieBox) open(name, value string, now time.Time, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return errBadCookie
	}
	plain, err := b.aead.Open(nil, raw[:b.aead.NonceSize()], raw[b.aead.NonceSize():], []byte(name))
	if err != nil {
		return errBadCookie
	}
	var s sealed
	if err := json.Unmarshal(plain, &s); err != nil || s.Name != name || now.Unix() > s.Expires {
		return errBadCookie
	}
	if err := json.Unmarshal(s.Value, v); err != nil {
		return errBadCookie
	}
	return nil
}
