package email_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/ports"
)

// received is one message the test server accepted.
type received struct {
	from    string
	rcpts   []string
	data    []byte
	tls     bool
	authed  string
	headers netmail.Header
	body    []byte
}

// smtpServer is a real SMTP server in-process (emersion/go-smtp) collecting messages.
type smtpServer struct {
	addr string
	mu   sync.Mutex
	msgs []received
}

func (s *smtpServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

type session struct {
	srv  *smtpServer
	conn *smtp.Conn
	cur  received
	auth bool // the server requires AUTH
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "mailer" || pass != "s3cret" {
			return errors.New("bad credentials")
		}
		s.cur.authed = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.auth && s.cur.authed == "" {
		return smtp.ErrAuthRequired
	}
	_, s.cur.tls = s.conn.TLSConnectionState()
	s.cur.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if strings.HasSuffix(to, "@rejected.example") {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	s.cur.rcpts = append(s.cur.rcpts, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = data
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return err
	}
	s.cur.headers = m.Header
	s.cur.body, _ = io.ReadAll(m.Body)
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, s.cur)
	s.srv.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{authed: s.cur.authed} }
func (s *session) Logout() error { return nil }

// startSMTP starts a server; with ca it offers STARTTLS and requires AUTH PLAIN (over TLS only).
func startSMTP(t *testing.T, ca *actiontest.TestCA) *smtpServer {
	t.Helper()
	srv := &smtpServer{}
	be := smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{srv: srv, conn: c, auth: ca != nil}, nil
	})
	s := smtp.NewServer(be)
	s.Domain = "localhost"
	s.ReadTimeout = 5 * time.Second
	s.WriteTimeout = 5 * time.Second
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

func newMailer(t *testing.T, url, caFile string) *email.Mailer {
	t.Helper()
	m, err := email.New(email.Config{URL: url, From: "forms@example.com", CAFile: caFile, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func input(cfg map[string]any, fields map[string]any) ports.ActionInput {
	in := actiontest.Input(cfg, nil)
	for k, v := range fields {
		in.Fields[k] = v
	}
	in.Render = actiontest.Renderer(in)
	return in
}

// parts returns the decoded parts of a message by media type.
func parts(t *testing.T, m received) map[string]string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(m.headers.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if !strings.HasPrefix(mt, "multipart/") {
		out[mt] = decode(t, m.headers.Get("Content-Transfer-Encoding"), m.body)
		return out
	}
	if mt != "multipart/alternative" {
		t.Fatalf("Content-Type %s, want multipart/alternative", mt)
	}
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
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out[pt] = decode(t, p.Header.Get("Content-Transfer-Encoding"), raw)
	}
	return out
}

func decode(t *testing.T, cte string, raw []byte) string {
	t.Helper()
	if strings.EqualFold(cte, "quoted-printable") {
		b, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return string(raw)
}

func subject(t *testing.T, m received) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(m.headers.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	actiontest.Run(t, newMailer(t, "smtp://127.0.0.1:1", ""), actiontest.Contract{
		Valid: map[string]any{"to": "{{fld_email}}", "subject": "New lead", "body": "Hello", "from_name": "Sales"},
	})
}

func TestSendsTemplatedHTMLWithEscapingAndPlainAlternative(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.addr, "")
	in := input(map[string]any{
		"to":      "{{fld_email}}",
		"subject": "New lead from {{fld_name}} ({{form_name}})",
		"body":    "<h1>New lead</h1><p>Name: {{fld_name}}</p><p>Note: {{fld_note}}</p><p>Tags: {{fld_tags}}</p>",
	}, map[string]any{"fld_note": `<script>alert("x")</script> & more`})

	out := m.Run(context.Background(), in)
	if out.Err != nil {
		t.Fatalf("Run: %v", out.Err)
	}
	msgs := srv.messages()
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages, want 1", len(msgs))
	}
	got := msgs[0]
	if got.from != "forms@example.com" || len(got.rcpts) != 1 || got.rcpts[0] != "ada@example.com" {
		t.Fatalf("envelope from %q to %v", got.from, got.rcpts)
	}
	if from := got.headers.Get("From"); !strings.Contains(from, `"Formward" <forms@example.com>`) {
		t.Errorf("From = %q, want the default display name Formward", from)
	}
	if s := subject(t, got); s != "New lead from Ada Lovelace (Lead)" {
		t.Errorf("Subject = %q", s)
	}
	p := parts(t, got)
	htmlPart, plain := p["text/html"], p["text/plain"]
	if !strings.Contains(htmlPart, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more") || strings.Contains(htmlPart, "<script>") {
		t.Errorf("HTML part does not escape the value:\n%s", htmlPart)
	}
	if !strings.Contains(htmlPart, "<p>Name: Ada Lovelace</p>") || !strings.Contains(htmlPart, "Tags: urgent, b2b") {
		t.Errorf("HTML part:\n%s", htmlPart)
	}
	if plain == "" {
		t.Fatal("no text/plain alternative")
	}
	if strings.Contains(plain, "<p>") || !strings.Contains(plain, "Name: Ada Lovelace") ||
		!strings.Contains(plain, `Note: <script>alert("x")</script> & more`) {
		t.Errorf("plain alternative:\n%s", plain)
	}
}

func TestPlainBodyIsSentAsIs(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.addr, "")
	out := m.Run(context.Background(), input(map[string]any{
		"to": "sales@example.com", "subject": "Lead", "body": "Budget: {{fld_budget}} & a < b", "from_name": "Sales Bot",
	}, nil))
	if out.Err != nil {
		t.Fatalf("Run: %v", out.Err)
	}
	got := srv.messages()[0]
	p := parts(t, got)
	if len(p) != 1 || strings.TrimSpace(p["text/plain"]) != "Budget: 1500 & a < b" {
		t.Fatalf("parts = %q", p)
	}
	if from := got.headers.Get("From"); !strings.Contains(from, `"Sales Bot" <forms@example.com>`) {
		t.Errorf("From = %q", from)
	}
}

func TestSTARTTLSWithAuth(t *testing.T) {
	ca := actiontest.NewCA(t)
	srv := startSMTP(t, ca)
	m := newMailer(t, "smtp://mailer:s3cret@"+srv.addr, ca.File)
	out := m.Run(context.Background(), input(map[string]any{"to": "{{fld_email}}", "subject": "s", "body": "b"}, nil))
	if out.Err != nil {
		t.Fatalf("Run: %v", out.Err)
	}
	got := srv.messages()
	if len(got) != 1 || !got[0].tls || got[0].authed != "mailer" {
		t.Fatalf("messages = %+v, want one sent over STARTTLS after AUTH", got)
	}
}

func TestSTARTTLSWithUntrustedCertificateFails(t *testing.T) {
	srv := startSMTP(t, actiontest.NewCA(t))
	m := newMailer(t, "smtp://mailer:s3cret@"+srv.addr, "") // the test CA is not trusted
	out := m.Run(context.Background(), input(map[string]any{"to": "a@example.com", "subject": "s", "body": "b"}, nil))
	if out.Err == nil || len(srv.messages()) != 0 {
		t.Fatalf("Run = %+v, want a failure and no message", out)
	}
}

func TestHeaderInjectionIsNeutralised(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.addr, "")
	evil := "Ada\r\nBcc: evil@example.org\r\nX-Injected: yes"

	out := m.Run(context.Background(), input(map[string]any{
		"to": "{{fld_email}}", "subject": "Lead {{fld_name}}", "body": "b", "from_name": "Forms\r\nBcc: evil@example.org",
	}, map[string]any{"fld_name": evil}))
	if out.Err != nil {
		t.Fatalf("Run: %v", out.Err)
	}
	got := srv.messages()[0]
	if len(got.rcpts) != 1 || got.rcpts[0] != "ada@example.com" {
		t.Fatalf("recipients %v", got.rcpts)
	}
	if got.headers.Get("Bcc") != "" || got.headers.Get("X-Injected") != "" {
		t.Fatalf("injected headers arrived:\n%s", got.data)
	}
	if s := subject(t, got); strings.ContainsAny(s, "\r\n") || !strings.HasPrefix(s, "Lead Ada") {
		t.Errorf("Subject = %q", s)
	}

	// A to whose value tries the same fails without reaching the server.
	out = m.Run(context.Background(), input(map[string]any{"to": "{{fld_email}}", "subject": "s", "body": "b"},
		map[string]any{"fld_email": "ada@example.com\r\nBcc: evil@example.org"}))
	if out.Err == nil || !out.Permanent {
		t.Fatalf("to with CRLF: %+v, want a permanent failure", out)
	}
	if n := len(srv.messages()); n != 1 {
		t.Fatalf("server got %d messages, want still 1", n)
	}
}

func TestInvalidRecipientIsPermanent(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.addr, "")
	for _, to := range []string{"not-an-address", "", "a@example.com, b@example.com", "ada@rejected.example"} {
		out := m.Run(context.Background(), input(map[string]any{"to": "{{fld_to}}", "subject": "s", "body": "b"},
			map[string]any{"fld_to": to}))
		if out.Err == nil || !out.Permanent {
			t.Errorf("to %q: %+v, want a permanent failure", to, out)
		}
	}
	if n := len(srv.messages()); n != 0 {
		t.Fatalf("server got %d messages", n)
	}
	if vs := m.Validate(map[string]any{"to": "two@example.com, addresses@example.com", "subject": "s", "body": "b"}); len(vs) != 1 || vs[0].Key != "to" {
		t.Errorf("Validate(two addresses) = %+v", vs)
	}
}

func TestServerDownIsRetryable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	m, err := email.New(email.Config{URL: "smtp://" + addr, From: "forms@example.com", Timeout: time.Second,
		Breaker: actionkit.BreakerOptions{Failures: 2, Cooldown: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	in := input(map[string]any{"to": "a@example.com", "subject": "s", "body": "b"}, nil)
	for i := 0; i < 2; i++ {
		out := m.Run(context.Background(), in)
		if out.Err == nil || out.Permanent || out.BreakerOpen {
			t.Fatalf("attempt %d: %+v, want a retryable failure", i+1, out)
		}
	}
	out := m.Run(context.Background(), in)
	if !out.BreakerOpen || out.RetryAt.Before(time.Now().Add(50*time.Second)) {
		t.Fatalf("third attempt: %+v, want the action's breaker open for the cooldown", out)
	}
}

func TestNotConfiguredFailsPermanently(t *testing.T) {
	m, err := email.New(email.Config{})
	if err != nil {
		t.Fatal(err)
	}
	out := m.Run(context.Background(), input(map[string]any{"to": "a@example.com", "subject": "s", "body": "b"}, nil))
	if !errors.Is(out.Err, email.ErrNotConfigured) || !out.Permanent {
		t.Fatalf("Run = %+v", out)
	}
	if _, err := email.New(email.Config{URL: "http://x", From: "a@example.com"}); err == nil {
		t.Fatal("New accepted an http:// SMTP URL")
	}
}

func TestPlainText(t *testing.T) {
	got := email.PlainText("<html><head><style>p{}</style></head><body><p>Hi &amp; bye</p>line<br>next</body></html>")
	if got != "Hi & bye\nline\nnext" {
		t.Fatalf("PlainText = %q", got)
	}
	if email.IsHTML("a < b and c > d") || !email.IsHTML("Hello<br/>") {
		t.Fatal("IsHTML")
	}
}
