package email_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/adapters/email/smtptest"
	"github.com/formward/formward/ports"
)

// startSMTP starts a server; with ca it offers STARTTLS and requires AUTH PLAIN (over TLS only).
func startSMTP(t *testing.T, ca *actiontest.TestCA) *smtptest.Server {
	t.Helper()
	if ca == nil {
		return smtptest.Start(t, smtptest.Options{})
	}
	return smtptest.Start(t, smtptest.Options{TLS: ca.TLSConfig(), User: "mailer", Password: "s3cret"})
}

func newMailer(t *testing.T, url, caFile string) *email.Mailer {
	t.Helper()
	m, err := email.New(email.Config{URL: url, From: "forms@example.com", CAFile: caFile, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sendOne runs m with in, which must succeed, and returns the one message the server got.
func sendOne(t *testing.T, m *email.Mailer, srv *smtptest.Server, in ports.ActionInput) smtptest.Message {
	t.Helper()
	if out := m.Run(context.Background(), in); out.Err != nil {
		t.Fatalf("Run: %v", out.Err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages, want 1", len(msgs))
	}
	return msgs[0]
}

func input(cfg map[string]any, fields map[string]any) ports.ActionInput {
	in := actiontest.Input(cfg, nil)
	for k, v := range fields {
		in.Fields[k] = v
	}
	in.Render = actiontest.Renderer(in)
	return in
}

func TestContract(t *testing.T) {
	actiontest.Run(t, newMailer(t, "smtp://127.0.0.1:1", ""), actiontest.Contract{
		Valid: map[string]any{"to": "{{fld_email}}", "subject": "New lead", "body": "Hello", "from_name": "Sales"},
	})
}

func TestSendsTemplatedHTMLWithEscapingAndPlainAlternative(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.Addr, "")
	in := input(map[string]any{
		"to":      "{{fld_email}}",
		"subject": "New lead from {{fld_name}} ({{form_name}})",
		"body":    "<h1>New lead</h1><p>Name: {{fld_name}}</p><p>Note: {{fld_note}}</p><p>Tags: {{fld_tags}}</p>",
	}, map[string]any{"fld_note": `<script>alert("x")</script> & more`})

	got := sendOne(t, m, srv, in)
	if got.From != "forms@example.com" || len(got.Rcpts) != 1 || got.Rcpts[0] != "ada@example.com" {
		t.Fatalf("envelope from %q to %v", got.From, got.Rcpts)
	}
	if from := got.Header.Get("From"); !strings.Contains(from, `"Formward" <forms@example.com>`) {
		t.Errorf("From = %q, want the default display name Formward", from)
	}
	if s := got.Subject(t); s != "New lead from Ada Lovelace (Lead)" {
		t.Errorf("Subject = %q", s)
	}
	p := got.Parts(t)
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
	m := newMailer(t, "smtp://"+srv.Addr, "")
	got := sendOne(t, m, srv, input(map[string]any{
		"to": "sales@example.com", "subject": "Lead", "body": "Budget: {{fld_budget}} & a < b", "from_name": "Sales Bot",
	}, nil))
	p := got.Parts(t)
	if len(p) != 1 || strings.TrimSpace(p["text/plain"]) != "Budget: 1500 & a < b" {
		t.Fatalf("parts = %q", p)
	}
	if from := got.Header.Get("From"); !strings.Contains(from, `"Sales Bot" <forms@example.com>`) {
		t.Errorf("From = %q", from)
	}
}

func TestSTARTTLSWithAuth(t *testing.T) {
	ca := actiontest.NewCA(t)
	srv := startSMTP(t, ca)
	m := newMailer(t, "smtp://mailer:s3cret@"+srv.Addr, ca.File)
	got := sendOne(t, m, srv, input(map[string]any{"to": "{{fld_email}}", "subject": "s", "body": "b"}, nil))
	if !got.TLS || got.Authed != "mailer" {
		t.Fatalf("message = %+v, want one sent over STARTTLS after AUTH", got)
	}
}

func TestSTARTTLSWithUntrustedCertificateFails(t *testing.T) {
	srv := startSMTP(t, actiontest.NewCA(t))
	m := newMailer(t, "smtp://mailer:s3cret@"+srv.Addr, "") // the test CA is not trusted
	out := m.Run(context.Background(), input(map[string]any{"to": "a@example.com", "subject": "s", "body": "b"}, nil))
	if out.Err == nil || len(srv.Messages()) != 0 {
		t.Fatalf("Run = %+v, want a failure and no message", out)
	}
}

func TestHeaderInjectionIsNeutralised(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.Addr, "")
	evil := "Ada\r\nBcc: evil@example.org\r\nX-Injected: yes"

	got := sendOne(t, m, srv, input(map[string]any{
		"to": "{{fld_email}}", "subject": "Lead {{fld_name}}", "body": "b", "from_name": "Forms\r\nBcc: evil@example.org",
	}, map[string]any{"fld_name": evil}))
	if len(got.Rcpts) != 1 || got.Rcpts[0] != "ada@example.com" {
		t.Fatalf("recipients %v", got.Rcpts)
	}
	if got.Header.Get("Bcc") != "" || got.Header.Get("X-Injected") != "" {
		t.Fatalf("injected headers arrived:\n%s", got.Data)
	}
	if s := got.Subject(t); strings.ContainsAny(s, "\r\n") || !strings.HasPrefix(s, "Lead Ada") {
		t.Errorf("Subject = %q", s)
	}

	// A to whose value tries the same fails without reaching the server.
	out := m.Run(context.Background(), input(map[string]any{"to": "{{fld_email}}", "subject": "s", "body": "b"},
		map[string]any{"fld_email": "ada@example.com\r\nBcc: evil@example.org"}))
	if out.Err == nil || !out.Permanent {
		t.Fatalf("to with CRLF: %+v, want a permanent failure", out)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("server got %d messages, want still 1", n)
	}
}

func TestInvalidRecipientIsPermanent(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.Addr, "")
	for _, to := range []string{"not-an-address", "", "a@example.com, b@example.com", "ada@rejected.example"} {
		out := m.Run(context.Background(), input(map[string]any{"to": "{{fld_to}}", "subject": "s", "body": "b"},
			map[string]any{"fld_to": to}))
		if out.Err == nil || !out.Permanent {
			t.Errorf("to %q: %+v, want a permanent failure", to, out)
		}
	}
	if n := len(srv.Messages()); n != 0 {
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
