package e2e_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/test/testkit"
)

// The destinations of send_email, chat_message and spreadsheet_append: a real SMTP server
// in-process, a fake Slack Web API and a fake Google OAuth token endpoint + Sheets API v4, the
// two HTTPS fakes with certificates of a throwaway CA given to formward as
// FORMWARD_WEBHOOK_CA_FILE (the SMTP server offers STARTTLS with the same CA).

const (
	destSlackToken   = "xoxb-1234-5678-e2etoken"
	destClientEmail  = "formward-e2e@proj.iam.gserviceaccount.com"
	destKeyID        = "e2e-kid-1"
	destSpreadsheet  = "sheet-e2e-123"
	destSheet        = "Leads 2026"
	destSheetsScope  = "https://www.googleapis.com/auth/spreadsheets"
	destMailFrom     = "forms@formward.test"
	destMailTo       = "sales@example.com"
	destNoteValue    = "<b>x</b>"
	destNameValue    = "Ada Lovelace"
	destNoteEscaped  = "&lt;b&gt;x&lt;/b&gt;"
	destSheetSource  = "website"
	destSlackChannel = "#leads"
)

// destHeaders is the header row of the fake sheet; the mapping names some in another case.
var destHeaders = []any{"Submission", "Name", "Unmapped", "Note", "Source"}

// ---- SMTP ----

type destMail struct {
	from    string
	rcpts   []string
	tls     bool
	headers netmail.Header
	body    []byte
}

type destSMTP struct {
	addr string
	mu   sync.Mutex
	msgs []destMail
	// refuseFirst answers 451 the first time an address comes as the first recipient of a
	// message, so every send's first attempt is refused, and only that one (retries tested).
	refuseFirst bool
	seen        map[string]bool
	refused     int
}

func (s *destSMTP) messages() []destMail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]destMail(nil), s.msgs...)
}

type destSMTPSession struct {
	srv   *destSMTP
	conn  *smtp.Conn
	cur   destMail
	rcpts int // RCPT commands in this message
}

func (s *destSMTPSession) Mail(from string, _ *smtp.MailOptions) error {
	_, s.cur.tls = s.conn.TLSConnectionState()
	s.cur.from = from
	return nil
}

func (s *destSMTPSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.rcpts++
	if s.srv.refuseFirst && s.rcpts == 1 {
		s.srv.mu.Lock()
		first := !s.srv.seen[to]
		if first {
			s.srv.seen[to] = true
			s.srv.refused++
		}
		s.srv.mu.Unlock()
		if first {
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
		}
	}
	s.cur.rcpts = append(s.cur.rcpts, to)
	return nil
}

func (s *destSMTPSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return err
	}
	s.cur.headers = m.Header
	if s.cur.body, err = io.ReadAll(m.Body); err != nil {
		return err
	}
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, s.cur)
	s.srv.mu.Unlock()
	return nil
}

func (s *destSMTPSession) Reset()        { s.cur, s.rcpts = destMail{}, 0 }
func (s *destSMTPSession) Logout() error { return nil }

func startDestSMTP(t *testing.T, ca *actiontest.TestCA) *destSMTP {
	t.Helper()
	return serveDestSMTP(t, &destSMTP{}, ca)
}

// startRefusingSMTP is a plain SMTP server that refuses each address's first delivery (451).
func startRefusingSMTP(t *testing.T) *destSMTP {
	t.Helper()
	return serveDestSMTP(t, &destSMTP{refuseFirst: true, seen: map[string]bool{}}, nil)
}

// serveDestSMTP serves srv on a loopback port, offering STARTTLS when ca is set.
func serveDestSMTP(t *testing.T, srv *destSMTP, ca *actiontest.TestCA) *destSMTP {
	t.Helper()
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &destSMTPSession{srv: srv, conn: c}, nil
	}))
	s.Domain = "localhost"
	s.ReadTimeout = 10 * time.Second
	s.WriteTimeout = 10 * time.Second
	if ca != nil {
		s.TLSConfig = ca.TLSConfig()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.addr = l.Addr().String()
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return srv
}

// mailParts decodes a message's parts by media type; it fails unless the message is
// multipart/alternative.
func mailParts(t *testing.T, m destMail) map[string]string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(m.headers.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	if mt != "multipart/alternative" {
		t.Fatalf("mail Content-Type %q, want multipart/alternative\n%s", mt, m.body)
	}
	out := map[string]string{}
	mr := multipart.NewReader(bytes.NewReader(m.body), params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(p)
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			if raw, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw))); err != nil {
				t.Fatal(err)
			}
		} else if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
			if raw, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(raw)), "")); err != nil {
				t.Fatal(err)
			}
		}
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out[pt] = string(raw)
	}
	return out
}

// ---- Slack ----

type destSlackPost struct {
	auth, contentType string
	body              map[string]any
}

type destSlack struct {
	mu    sync.Mutex
	posts []destSlackPost
}

func (s *destSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat.postMessage" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"ok":false,"error":"unknown_method"}`))
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	post := destSlackPost{auth: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type")}
	if err := json.Unmarshal(raw, &body); err != nil {
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_json"}`))
		return
	}
	post.body = body
	s.mu.Lock()
	s.posts = append(s.posts, post)
	s.mu.Unlock()
	switch {
	case post.auth != "Bearer "+destSlackToken:
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
	case body["channel"] == nil || body["channel"] == "":
		_, _ = w.Write([]byte(`{"ok":false,"error":"channel_not_found"}`))
	case body["text"] == nil || body["text"] == "":
		_, _ = w.Write([]byte(`{"ok":false,"error":"no_text"}`))
	default:
		_, _ = w.Write([]byte(`{"ok":true,"channel":"C0123","ts":"1700000000.000100","message":{"text":"ok"}}`))
	}
}

func (s *destSlack) received() []destSlackPost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]destSlackPost(nil), s.posts...)
}

// ---- Google ----

type destGoogle struct {
	t        *testing.T
	pub      *rsa.PublicKey
	tokenURL string

	mu         sync.Mutex
	tokens     map[string]bool
	tokenCalls int
	refused    []string // why assertions or requests were refused
	headerGETs int
	appended   [][]string
	appendRng  string
	appendQry  string
}

var destValuesPath = regexp.MustCompile(`^/v4/spreadsheets/([^/]+)/values/(.+?)(:append)?$`)

func destGoogleError(w http.ResponseWriter, code int, msg, status string) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

func (g *destGoogle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if r.URL.Path == "/token" {
		g.token(w, r)
		return
	}
	// The range is path-escaped ('Leads 2026'!1:1): match against the escaped path, then unescape.
	m := destValuesPath.FindStringSubmatch(r.URL.EscapedPath())
	if m == nil {
		g.refused = append(g.refused, "path "+r.URL.EscapedPath())
		destGoogleError(w, 404, "Requested entity was not found.", "NOT_FOUND")
		return
	}
	if !g.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
		g.refused = append(g.refused, "authorization "+r.Header.Get("Authorization"))
		destGoogleError(w, 401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
		return
	}
	id, _ := url.PathUnescape(m[1])
	rng, _ := url.PathUnescape(m[2])
	if id != destSpreadsheet {
		g.refused = append(g.refused, "spreadsheet "+id)
		destGoogleError(w, 404, "Requested entity was not found.", "NOT_FOUND")
		return
	}
	switch {
	case r.Method == http.MethodGet && m[3] == "":
		if rng != "'"+destSheet+"'!1:1" {
			g.refused = append(g.refused, "header range "+rng)
			destGoogleError(w, 400, "Unable to parse range: "+rng, "INVALID_ARGUMENT")
			return
		}
		g.headerGETs++
		_ = json.NewEncoder(w).Encode(map[string]any{"range": "'" + destSheet + "'!A1:Z1", "majorDimension": "ROWS", "values": [][]any{destHeaders}})
	case r.Method == http.MethodPost && m[3] == ":append":
		var body struct {
			Range          string     `json:"range"`
			MajorDimension string     `json:"majorDimension"`
			Values         [][]string `json:"values"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Values) != 1 {
			g.refused = append(g.refused, fmt.Sprintf("append body: %v", err))
			destGoogleError(w, 400, "Invalid JSON payload received.", "INVALID_ARGUMENT")
			return
		}
		g.appendRng, g.appendQry = rng, r.URL.RawQuery
		g.appended = append(g.appended, body.Values[0])
		_ = json.NewEncoder(w).Encode(map[string]any{"spreadsheetId": id, "tableRange": "'" + destSheet + "'!A1:E1",
			"updates": map[string]any{"spreadsheetId": id, "updatedRange": "'" + destSheet + "'!A2:E2", "updatedRows": 1}})
	default:
		g.refused = append(g.refused, r.Method+" "+r.URL.Path)
		destGoogleError(w, 405, "Method not allowed.", "INVALID_ARGUMENT")
	}
}

// token is the JWT bearer flow (RFC 7523): the RS256 assertion must verify against the test
// service account's public key, with Google's claims.
func (g *destGoogle) token(w http.ResponseWriter, r *http.Request) {
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
	if err := rsa.VerifyPKCS1v15(g.pub, crypto.SHA256, sum[:], sig); err != nil {
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
	case header["alg"] != "RS256" || header["kid"] != destKeyID:
		bad(fmt.Sprintf("header %v", header))
	case claims["iss"] != destClientEmail:
		bad(fmt.Sprintf("iss %v", claims["iss"]))
	case claims["aud"] != g.tokenURL:
		bad(fmt.Sprintf("aud %v, want %s", claims["aud"], g.tokenURL))
	case claims["scope"] != destSheetsScope:
		bad(fmt.Sprintf("scope %v", claims["scope"]))
	case iat == 0 || iat > now+5 || exp <= now || exp-iat > 3600:
		bad(fmt.Sprintf("times iat %v exp %v", claims["iat"], claims["exp"]))
	default:
		tok := fmt.Sprintf("ya29.e2e-%d", g.tokenCalls)
		g.tokens[tok] = true
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
	}
}

func (g *destGoogle) snapshot() (appended [][]string, rng, query string, headerGETs int, refused []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]string(nil), g.appended...), g.appendRng, g.appendQry, g.headerGETs, append([]string(nil), g.refused...)
}

// ---- all three ----

type destinations struct {
	ca     *actiontest.TestCA
	mail   *destSMTP
	slack  *destSlack
	google *destGoogle
	saJSON string
}

func newDestinations(t *testing.T) *destinations {
	t.Helper()
	ca := actiontest.NewCA(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "proj", "private_key_id": destKeyID,
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": destClientEmail, "client_id": "1234567890",
		// Formward must use its configured token URL, never the key file's.
		"token_uri": "https://attacker.example/token",
	})
	d := &destinations{ca: ca, mail: startDestSMTP(t, ca), slack: &destSlack{}, saJSON: string(sa),
		google: &destGoogle{t: t, pub: &key.PublicKey, tokens: map[string]bool{}}}
	return d
}

// env points an instance at the three destinations, with the fast retry schedule of the other
// pipeline tests.
func (d *destinations) env(t *testing.T, in *instance) {
	t.Helper()
	slackSrv := d.ca.HTTPSServer(t, d.slack)
	googleSrv := d.ca.HTTPSServer(t, d.google)
	d.google.mu.Lock()
	d.google.tokenURL = googleSrv.URL + "/token"
	d.google.mu.Unlock()
	in.setEnv("FORMWARD_WEBHOOK_CA_FILE", d.ca.File)
	in.setEnv("FORMWARD_ALLOW_PRIVATE_DESTINATIONS", "true")
	in.setEnv("FORMWARD_RETRY_DELAYS", "200ms,200ms,200ms,200ms")
	in.setEnv("FORMWARD_BREAKER_COOLDOWN", "300ms")
	in.setEnv("FORMWARD_API_RATE_LIMIT", "0")
	in.setEnv("FORMWARD_SMTP_URL", "smtp://"+d.mail.addr)
	in.setEnv("FORMWARD_SMTP_FROM", destMailFrom)
	in.setEnv("FORMWARD_SLACK_API_URL", slackSrv.URL)
	in.setEnv("FORMWARD_GOOGLE_SHEETS_URL", googleSrv.URL)
	in.setEnv("FORMWARD_GOOGLE_TOKEN_URL", googleSrv.URL+"/token")
}

// TestWorkflowDestinationsEmbedded: send_email, chat_message and spreadsheet_append of one
// workflow reach a real SMTP server, a Slack fake and a Google fake from a published form's
// submission, in embedded mode (SQLite, one process).
func TestWorkflowDestinationsEmbedded(t *testing.T) {
	t.Parallel()
	d := newDestinations(t)
	in := newInstance(t, "", "")
	d.env(t, in)
	inServe(t, in, "destinations", func(key string) { testWorkflowDestinations(t, in, d, key) })
}

// TestWorkflowDestinationsKafka: the same with serve, relay and worker as separate processes on
// PostgreSQL and Kafka.
func TestWorkflowDestinationsKafka(t *testing.T) {
	t.Parallel()
	d := newDestinations(t)
	in, _ := newKafkaInstance(t)
	d.env(t, in)
	inThreeProcesses(t, in, "kafka-destinations", func(key string) { testWorkflowDestinations(t, in, d, key) })
}

func testWorkflowDestinations(t *testing.T, in *instance, d *destinations, key string) {
	t.Helper()

	// Integrations: the Slack bot token and the service-account key file (as the JSON object).
	r := in.do("POST", "/v1/integrations", key, map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": destSlackToken}})
	r.expect(t, http.StatusCreated)
	if bytes.Contains(r.raw, []byte(destSlackToken)) {
		t.Fatalf("POST /v1/integrations returned the bot token: %s", r.raw)
	}
	r = in.do("POST", "/v1/integrations", key, map[string]any{"type": "google_sheets",
		"credentials": map[string]any{"service_account_json": json.RawMessage(d.saJSON)}})
	r.expect(t, http.StatusCreated)
	if bytes.Contains(r.raw, []byte("PRIVATE KEY")) {
		t.Fatalf("POST /v1/integrations returned the private key: %s", r.raw)
	}

	// A published form with two fields.
	r = in.do("POST", "/v1/forms", key, map[string]any{"name": "Leads", "fields": []map[string]any{
		{"label": "Name", "type": "text", "required": true},
		{"label": "Note", "type": "text", "required": true},
	}})
	r.expect(t, http.StatusCreated)
	formID := r.str(t, "id")
	fields, _ := r.obj["fields"].([]any)
	if len(fields) != 2 {
		t.Fatalf("form fields = %v", r.obj["fields"])
	}
	nameID := fields[0].(map[string]any)["id"].(string)
	noteID := fields[1].(map[string]any)["id"].(string)
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)

	wfID, actIDs := createWorkflow(t, in, key, formID, "Route lead",
		map[string]any{"type": "send_email", "config": map[string]any{
			"to":      destMailTo,
			"subject": "New {{form_name}} lead: {{" + nameID + "}}",
			"body":    "<h1>New lead</h1><p>Name: {{" + nameID + "}}</p><p>Note: {{" + noteID + "}}</p>",
		}},
		map[string]any{"type": "chat_message", "config": map[string]any{
			"channel": destSlackChannel,
			"message": "New lead on {{form_name}}: {{" + nameID + "}} says {{" + noteID + "}}",
		}},
		map[string]any{"type": "spreadsheet_append", "config": map[string]any{
			"spreadsheet_id": destSpreadsheet, "sheet_name": destSheet,
			"row_mapping": map[string]any{
				"name": nameID, "NOTE": noteID, "Source": destSheetSource, "Submission": "{{submission_id}}",
			},
		}})
	if len(actIDs) != 3 {
		t.Fatalf("workflow actions = %v", actIDs)
	}

	r = in.do("POST", "/v1/forms/"+formID+"/submissions", key, map[string]any{"data": map[string]any{nameID: destNameValue, noteID: destNoteValue}})
	r.expect(t, http.StatusCreated)
	subID := r.str(t, "id")

	// All three destinations received it.
	arrived := func() bool {
		appended, _, _, _, _ := d.google.snapshot()
		return len(d.mail.messages()) >= 1 && len(d.slack.received()) >= 1 && len(appended) >= 1
	}
	if !testkit.Wait(30*time.Second, arrived) {
		appended, _, _, _, refused := d.google.snapshot()
		t.Fatalf("timed out after 30s waiting for the destinations: %d mails, %d Slack posts, %d sheet rows (Google refused %q); runs: %v",
			len(d.mail.messages()), len(d.slack.received()), len(appended), refused, runsOf(t, in, key, wfID))
	}

	// The run log: one run, succeeded, three succeeded actions in order.
	run := finishedRun(t, in, key, wfID)
	if run["status"] != "succeeded" || run["submission_id"] != subID || run["event"] != "submission.created" || run["finished_at"] == nil {
		t.Fatalf("run = %v", run)
	}
	acts := runActions(run)
	if len(acts) != 3 {
		t.Fatalf("run actions = %v", acts)
	}
	for i, a := range acts {
		if a["action_id"] != actIDs[i] || a["status"] != "succeeded" || len(attemptsOf(a)) != 1 {
			t.Fatalf("run action %d = %v (want %s succeeded at the first attempt)", i, a, actIDs[i])
		}
	}

	// send_email: one message over STARTTLS to the recipient, templated subject, the value
	// escaped in the HTML part, a text/plain alternative reading it as itself.
	msgs := d.mail.messages()
	if len(msgs) != 1 {
		t.Fatalf("SMTP server got %d messages, want 1", len(msgs))
	}
	mail := msgs[0]
	if mail.from != destMailFrom || len(mail.rcpts) != 1 || mail.rcpts[0] != destMailTo {
		t.Fatalf("envelope from %q to %v", mail.from, mail.rcpts)
	}
	if !mail.tls {
		t.Errorf("the mail was not sent over STARTTLS, though the server offered it")
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(mail.headers.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "New Leads lead: " + destNameValue; subject != want {
		t.Errorf("Subject = %q, want %q", subject, want)
	}
	if to := mail.headers.Get("To"); !strings.Contains(to, destMailTo) {
		t.Errorf("To = %q", to)
	}
	parts := mailParts(t, mail)
	htmlPart, plain := parts["text/html"], parts["text/plain"]
	if !strings.Contains(htmlPart, "<p>Note: "+destNoteEscaped+"</p>") || strings.Contains(htmlPart, destNoteValue) ||
		!strings.Contains(htmlPart, "<p>Name: "+destNameValue+"</p>") {
		t.Errorf("HTML part does not carry the escaped value:\n%s", htmlPart)
	}
	if plain == "" {
		t.Errorf("no text/plain alternative; parts: %v", parts)
	} else if strings.Contains(plain, "<p>") || !strings.Contains(plain, "Note: "+destNoteValue) || !strings.Contains(plain, "Name: "+destNameValue) {
		t.Errorf("text/plain alternative:\n%s", plain)
	}

	// chat_message: one chat.postMessage with the bot token and the rendered text.
	posts := d.slack.received()
	if len(posts) != 1 {
		t.Fatalf("Slack got %d posts, want 1", len(posts))
	}
	p := posts[0]
	if p.auth != "Bearer "+destSlackToken || !strings.HasPrefix(p.contentType, "application/json") {
		t.Errorf("Slack request Authorization %q Content-Type %q", p.auth, p.contentType)
	}
	if want := "New lead on Leads: " + destNameValue + " says " + destNoteValue; p.body["channel"] != destSlackChannel || p.body["text"] != want {
		t.Errorf("Slack body = %v, want channel %q text %q", p.body, destSlackChannel, want)
	}

	// spreadsheet_append: the row follows the header row (case-insensitive), unmapped columns
	// empty, static and templated values written.
	appended, rng, query, headerGETs, refused := d.google.snapshot()
	if len(refused) > 0 {
		t.Errorf("the Google fake refused: %q", refused)
	}
	want := []string{subID, destNameValue, "", destNoteValue, destSheetSource}
	if len(appended) != 1 || strings.Join(appended[0], "|") != strings.Join(want, "|") {
		t.Fatalf("appended rows %q, want one row %q", appended, want)
	}
	if headerGETs != 1 || rng != "'"+destSheet+"'!A1" || query != "valueInputOption=RAW&insertDataOption=INSERT_ROWS" {
		t.Errorf("header reads %d, append range %q query %q", headerGETs, rng, query)
	}
}
