package sheetstest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/formward/formward/adapters/sheets"
)

// token is the JWT bearer flow (RFC 7523): the RS256 assertion must verify against the
// service account's public key, with Google's claims.
func (g *Google) token(w http.ResponseWriter, r *http.Request) {
	g.tokenCalls++
	bad := func(why string) {
		g.refused = append(g.refused, "token: "+why)
		w.WriteHeader(400)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": why})
	}
	if r.Method != http.MethodPost {
		bad("method " + r.Method)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		bad("grant_type")
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		bad("not a JWT")
		return
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		bad("signature encoding")
		return
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&g.account.Key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		bad("Invalid JWT Signature.")
		return
	}
	var header map[string]string
	var claims map[string]any
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	if err1 != nil || err2 != nil || json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil {
		bad("header or claims not base64url JSON")
		return
	}
	now := float64(time.Now().Unix())
	iat, _ := claims["iat"].(float64)
	exp, _ := claims["exp"].(float64)
	switch {
	case header["alg"] != "RS256" || header["kid"] != g.account.KeyID:
		bad(fmt.Sprintf("header %v", header))
	case claims["iss"] != g.account.ClientEmail:
		bad(fmt.Sprintf("iss %v", claims["iss"]))
	case claims["aud"] != g.tokenURL:
		bad(fmt.Sprintf("aud %v, want %s", claims["aud"], g.tokenURL))
	case claims["scope"] != sheets.Scope:
		bad(fmt.Sprintf("scope %v", claims["scope"]))
	case iat == 0 || iat > now+5 || exp <= now || exp-iat > 3600:
		bad(fmt.Sprintf("times iat %v exp %v", claims["iat"], claims["exp"]))
	default:
		tok := fmt.Sprintf("ya29.test-%d", g.tokenCalls)
		g.tokens[tok] = true
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
	}
}
