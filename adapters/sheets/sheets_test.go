package sheets_test

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
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/sheets"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

func key(t *testing.T) *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

func serviceAccountJSON(t *testing.T) string {
	der, err := x509.MarshalPKCS8PrivateKey(key(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "client_email": "formward@proj.iam.gserviceaccount.com",
		"private_key_id": "kid1", "token_uri": "https://attacker.example/token",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
	})
	return string(b)
}

// fakeGoogle is the OAuth token endpoint and the Sheets values API, checking what Google checks.
type fakeGoogle struct {
	t        *testing.T
	pub      *rsa.PublicKey
	tokenURL string

	mu          sync.Mutex
	tokenCalls  int
	tokens      map[string]bool
	headers     []any
	appended    [][]string
	appendRange string
	appendQuery string
	status      int // when set, the Sheets API answers it
}

var valuesPath = regexp.MustCompile(`^/v4/spreadsheets/([^/]+)/values/(.+?)(:append)?$`)

func (f *fakeGoogle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/token" {
		f.token(w, r)
		return
	}
	m := valuesPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	if !f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
		googleError(w, 401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
		return
	}
	if f.status != 0 {
		googleError(w, f.status, "forced", "FORCED")
		return
	}
	if m[1] != "sheet-123" {
		googleError(w, 404, "Requested entity was not found.", "NOT_FOUND")
		return
	}
	switch {
	case r.Method == http.MethodGet && m[3] == "":
		if m[2] != "'Leads'!1:1" {
			googleError(w, 400, "Unable to parse range: "+m[2], "INVALID_ARGUMENT")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"range": "Leads!A1:Z1", "majorDimension": "ROWS", "values": [][]any{f.headers}})
	case r.Method == http.MethodPost && m[3] == ":append":
		var body struct {
			Values [][]string `json:"values"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Values) != 1 {
			googleError(w, 400, "bad body", "INVALID_ARGUMENT")
			return
		}
		f.appendRange, f.appendQuery = m[2], r.URL.RawQuery
		f.appended = append(f.appended, body.Values[0])
		_ = json.NewEncoder(w).Encode(map[string]any{"spreadsheetId": m[1], "updates": map[string]any{"updatedRows": 1}})
	default:
		googleError(w, 405, "method", "INVALID_ARGUMENT")
	}
}

func googleError(w http.ResponseWriter, code int, msg, status string) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// token verifies the RS256 assertion with the service account's public key.
func (f *fakeGoogle) token(w http.ResponseWriter, r *http.Request) {
	f.tokenCalls++
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":"unsupported_grant_type"}`))
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	bad := func(why string) {
		f.t.Logf("token endpoint refused the assertion: %s", why)
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"` + why + `"}`))
	}
	if len(parts) != 3 {
		bad("not a JWT")
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(f.pub, crypto.SHA256, sum[:], sig); err != nil {
		bad("Invalid JWT Signature.")
		return
	}
	var header map[string]string
	var claims map[string]any
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(hb, &header)
	_ = json.Unmarshal(cb, &claims)
	now := float64(time.Now().Unix())
	switch {
	case header["alg"] != "RS256" || header["kid"] != "kid1":
		bad("header")
	case claims["iss"] != "formward@proj.iam.gserviceaccount.com":
		bad("iss")
	case claims["aud"] != f.tokenURL:
		bad(fmt.Sprintf("aud %v", claims["aud"]))
	case claims["scope"] != sheets.Scope:
		bad("scope")
	case claims["iat"].(float64) > now+5 || claims["exp"].(float64) <= now || claims["exp"].(float64)-claims["iat"].(float64) > 3600:
		bad("times")
	default:
		tok := fmt.Sprintf("ya29.test-%d", f.tokenCalls)
		f.tokens[tok] = true
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
	}
}

func setup(t *testing.T) (*sheets.Sheets, *fakeGoogle) {
	t.Helper()
	ca := actiontest.NewCA(t)
	f := &fakeGoogle{t: t, pub: &key(t).PublicKey, tokens: map[string]bool{},
		headers: []any{"Submitted", "Name", "Email", "Budget", "Tags", "Source", "Notes"}}
	srv := ca.HTTPSServer(t, f)
	f.tokenURL = srv.URL + "/token"
	s, err := sheets.New(sheets.Config{BaseURL: srv.URL, TokenURL: f.tokenURL, CAFile: ca.File, Timeout: 3 * time.Second,
		Breaker: actionkit.BreakerOptions{Failures: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func config() map[string]any {
	return map[string]any{
		"spreadsheet_id": "sheet-123", "sheet_name": "Leads",
		"row_mapping": map[string]any{
			"Name": "fld_name", "email": "fld_email", "Budget": "fld_budget", "Tags": "fld_tags",
			"Source": "website", "Submitted": "{{submitted_at}}",
		},
	}
}

func creds(t *testing.T) map[string]string {
	return map[string]string{"service_account_json": serviceAccountJSON(t)}
}

func TestContract(t *testing.T) {
	s, _ := setup(t)
	actiontest.Run(t, s, actiontest.Contract{Valid: config(), Credentials: creds(t)})
}

func TestAppendsMappedRow(t *testing.T) {
	s, f := setup(t)
	if s.Integration() != "google_sheets" {
		t.Fatalf("Integration = %q", s.Integration())
	}
	for i := 0; i < 2; i++ {
		out := s.Run(context.Background(), actiontest.Input(config(), creds(t)))
		if out.Err != nil || out.StatusCode != 200 {
			t.Fatalf("Run = %+v", out)
		}
	}
	want := []string{"2026-03-04T05:06:07.890Z", "Ada Lovelace", "ada@example.com", "1500", "urgent, b2b", "website"}
	if len(f.appended) != 2 || strings.Join(f.appended[0], "|") != strings.Join(want, "|") {
		t.Fatalf("appended %q, want %q", f.appended, want)
	}
	if f.appendRange != "'Leads'!A1" || f.appendQuery != "valueInputOption=RAW&insertDataOption=INSERT_ROWS" {
		t.Fatalf("append range %q query %q", f.appendRange, f.appendQuery)
	}
	if f.tokenCalls != 1 {
		t.Fatalf("token endpoint called %d times, want 1 (cached)", f.tokenCalls)
	}
}

func TestMissingColumnsArePermanent(t *testing.T) {
	s, f := setup(t)
	cfg := config()
	cfg["row_mapping"] = map[string]any{"Name": "fld_name", "Phone": "fld_phone", "Company": "x"}
	out := s.Run(context.Background(), actiontest.Input(cfg, creds(t)))
	if out.Err == nil || !out.Permanent || !strings.Contains(out.Err.Error(), `"Company", "Phone"`) {
		t.Fatalf("Run = %+v (err %v)", out, out.Err)
	}
	if len(f.appended) != 0 {
		t.Fatal("a row was appended")
	}
}

func TestAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		permanent bool
	}{{429, false}, {500, false}, {503, false}, {403, true}, {404, true}} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			s, f := setup(t)
			f.status = tc.status
			out := s.Run(context.Background(), actiontest.Input(config(), creds(t)))
			if out.Err == nil || out.Permanent != tc.permanent || out.StatusCode != tc.status {
				t.Fatalf("Run = %+v (err %v), want permanent=%v", out, out.Err, tc.permanent)
			}
		})
	}
	t.Run("unknown spreadsheet", func(t *testing.T) {
		s, _ := setup(t)
		cfg := config()
		cfg["spreadsheet_id"] = "other"
		out := s.Run(context.Background(), actiontest.Input(cfg, creds(t)))
		if out.Err == nil || !out.Permanent || out.StatusCode != 404 {
			t.Fatalf("Run = %+v", out)
		}
	})
}

func TestCredentials(t *testing.T) {
	s, _ := setup(t)
	out := s.Run(context.Background(), actiontest.Input(config(), nil))
	if !errors.Is(out.Err, sheets.ErrNotConnected) || !out.Permanent {
		t.Fatalf("nil credentials: %+v", out)
	}
	out = s.Run(context.Background(), actiontest.Input(config(), map[string]string{"service_account_json": `{"client_email":"x"}`}))
	if out.Err == nil || !out.Permanent {
		t.Fatalf("broken key: %+v", out)
	}
	// A key the token endpoint refuses (another key's signature) is permanent too.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKCS8PrivateKey(other)
	b, _ := json.Marshal(map[string]string{"client_email": "formward@proj.iam.gserviceaccount.com", "private_key_id": "kid1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	out = s.Run(context.Background(), actiontest.Input(config(), map[string]string{"service_account_json": string(b)}))
	if out.Err == nil || !out.Permanent || out.StatusCode != 400 {
		t.Fatalf("wrong key: %+v (err %v)", out, out.Err)
	}
}

func TestValidatePaths(t *testing.T) {
	s, _ := setup(t)
	vs := s.Validate(map[string]any{"spreadsheet_id": "a/b", "sheet_name": 3, "row_mapping": map[string]any{"Name": 1}})
	got := map[string]string{}
	for _, v := range vs {
		got[v.Key] = v.Code
	}
	want := map[string]string{"spreadsheet_id": "invalid_value", "sheet_name": "invalid_type", "row_mapping.Name": "invalid_type"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
}
