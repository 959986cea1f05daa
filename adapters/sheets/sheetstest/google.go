// Package sheetstest fakes Google for the spreadsheet action: the OAuth token endpoint of the
// JWT bearer flow and the Sheets API v4 values API, checking what Google checks, served over
// HTTPS with a test CA.
package sheetstest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/sheets"
)

// Google is the token endpoint (/token) and the values API of one spreadsheet with one sheet.
type Google struct {
	account     ServiceAccount
	spreadsheet string
	sheet       string
	headers     []any

	mu          sync.Mutex
	tokenURL    string
	tokens      map[string]bool
	tokenCalls  int
	headerGETs  int
	appended    [][]string
	appendRange string
	appendQuery string
	refused     []string
	status      int
}

// NewGoogle fakes Google for the assertions of account and a spreadsheet whose sheet has the
// header row headers.
func NewGoogle(account ServiceAccount, spreadsheet, sheet string, headers ...any) *Google {
	return &Google{account: account, spreadsheet: spreadsheet, sheet: sheet, headers: headers, tokens: map[string]bool{}}
}

// Serve starts an HTTPS server of g with ca's certificate, closed with t; the assertions must
// name its /token as their audience.
func (g *Google) Serve(t testing.TB, ca *actiontest.TestCA) *httptest.Server {
	t.Helper()
	srv := ca.HTTPSServer(t, g)
	g.mu.Lock()
	g.tokenURL = srv.URL + "/token"
	g.mu.Unlock()
	return srv
}

// Fail makes the Sheets API answer status to every authorised request from now on.
func (g *Google) Fail(status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status = status
}

// Log is what g has seen.
type Log struct {
	TokenCalls, HeaderGETs int
	// Appended are the rows appended, in order, the last one with AppendRange and AppendQuery.
	Appended                 [][]string
	AppendRange, AppendQuery string
	// Refused says why assertions or requests were refused.
	Refused []string
}

// Log is what g has seen so far.
func (g *Google) Log() Log {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Log{TokenCalls: g.tokenCalls, HeaderGETs: g.headerGETs, Appended: append([][]string(nil), g.appended...),
		AppendRange: g.appendRange, AppendQuery: g.appendQuery, Refused: append([]string(nil), g.refused...)}
}

var valuesPath = regexp.MustCompile(`^/v4/spreadsheets/([^/]+)/values/(.+?)(:append)?$`)

func googleError(w http.ResponseWriter, code int, msg, status string) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

func (g *Google) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if r.URL.Path == "/token" {
		g.token(w, r)
		return
	}
	// The range is path-escaped ('Leads 2026'!1:1): match against the escaped path, then unescape.
	m := valuesPath.FindStringSubmatch(r.URL.EscapedPath())
	if m == nil {
		g.refused = append(g.refused, "path "+r.URL.EscapedPath())
		googleError(w, 404, "Requested entity was not found.", "NOT_FOUND")
		return
	}
	if !g.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
		g.refused = append(g.refused, "authorization "+r.Header.Get("Authorization"))
		googleError(w, 401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
		return
	}
	if g.status != 0 {
		googleError(w, g.status, "forced", "FORCED")
		return
	}
	id, _ := url.PathUnescape(m[1])
	rng, _ := url.PathUnescape(m[2])
	if id != g.spreadsheet {
		g.refused = append(g.refused, "spreadsheet "+id)
		googleError(w, 404, "Requested entity was not found.", "NOT_FOUND")
		return
	}
	switch {
	case r.Method == http.MethodGet && m[3] == "":
		if rng != "'"+g.sheet+"'!1:1" {
			g.refused = append(g.refused, "header range "+rng)
			googleError(w, 400, "Unable to parse range: "+rng, "INVALID_ARGUMENT")
			return
		}
		g.headerGETs++
		_ = json.NewEncoder(w).Encode(map[string]any{"range": "'" + g.sheet + "'!A1:Z1", "majorDimension": "ROWS", "values": [][]any{g.headers}})
	case r.Method == http.MethodPost && m[3] == ":append":
		var body struct {
			Range          string     `json:"range"`
			MajorDimension string     `json:"majorDimension"`
			Values         [][]string `json:"values"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Values) != 1 {
			g.refused = append(g.refused, fmt.Sprintf("append body: %v", err))
			googleError(w, 400, "Invalid JSON payload received.", "INVALID_ARGUMENT")
			return
		}
		g.appendRange, g.appendQuery = rng, r.URL.RawQuery
		g.appended = append(g.appended, body.Values[0])
		_ = json.NewEncoder(w).Encode(map[string]any{"spreadsheetId": id, "tableRange": "'" + g.sheet + "'!A1:E1",
			"updates": map[string]any{"spreadsheetId": id, "updatedRange": "'" + g.sheet + "'!A2:E2", "updatedRows": 1}})
	default:
		g.refused = append(g.refused, r.Method+" "+r.URL.Path)
		googleError(w, 405, "Method not allowed.", "INVALID_ARGUMENT")
	}
}

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
