// Package sheetstest fakes Google for the spreadsheet action: the OAuth token endpoint of the
// JWT bearer flow and the Sheets API v4 values API, checking what Google checks, served over
// HTTPS with a test CA.
package sheetstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/formward/formward/adapters/actiontest"
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

// Serve starts an HTTPS server of g with ca's certificate, closed with t, and returns its URL;
// the assertions must name its /token as their audience.
func (g *Google) Serve(t testing.TB, ca *actiontest.TestCA) string {
	t.Helper()
	srv := ca.HTTPSServer(t, g)
	g.mu.Lock()
	g.tokenURL = srv.URL + "/token"
	g.mu.Unlock()
	return srv.URL
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
