package email_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/ports"
)

func TestAccountMailIsNotConfiguredWithoutARelay(t *testing.T) {
	for _, cfg := range []email.Config{{}, {URL: "smtp://127.0.0.1:2525"}, {From: "forms@example.com"}} {
		m, err := email.NewAccountMailer(cfg)
		if err != nil || m != nil {
			t.Fatalf("NewAccountMailer(%+v) = %v, %v; want nil, nil", cfg, m, err)
		}
	}
	if _, err := email.NewAccountMailer(email.Config{URL: "http://127.0.0.1:2525", From: "forms@example.com"}); err == nil {
		t.Fatal("a relay URL of another scheme was accepted")
	}
}

func TestAccountMailGoesThroughTheRelay(t *testing.T) {
	ca := actiontest.NewCA(t)
	srv := startSMTP(t, ca)
	m, err := email.NewAccountMailer(email.Config{URL: "smtp://mailer:s3cret@" + srv.Addr, From: "forms@example.com", CAFile: ca.File, Timeout: 3 * time.Second})
	if err != nil || m == nil {
		t.Fatalf("NewAccountMailer: %v, %v", m, err)
	}
	text := "Ada invited you to Acme.\n\nAccept: https://forms.example/app/invitations/tok_123\n"
	err = m.Send(context.Background(), ports.Mail{To: "Grace <grace@example.com>", Subject: "You are invited\r\nBcc: evil@example.com", Text: text})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	got := msgs[0]
	if !got.TLS || got.Authed != "mailer" || got.From != "forms@example.com" || strings.Join(got.Rcpts, ",") != "grace@example.com" {
		t.Fatalf("envelope: tls %v, auth %q, from %q, rcpts %v", got.TLS, got.Authed, got.From, got.Rcpts)
	}
	if s := got.Subject(t); s != "You are invited  Bcc: evil@example.com" {
		t.Fatalf("Subject = %q", s)
	}
	if got.Header.Get("Bcc") != "" {
		t.Fatal("the subject started a header")
	}
	if body := strings.ReplaceAll(got.Parts(t)["text/plain"], "\r\n", "\n"); body != text {
		t.Fatalf("body %q, want %q", body, text)
	}
}

func TestAccountMailRefusesABadRecipient(t *testing.T) {
	srv := startSMTP(t, nil)
	m, err := email.NewAccountMailer(email.Config{URL: "smtp://" + srv.Addr, From: "forms@example.com", Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"", "not an address", "a@example.com, b@example.com"} {
		if err := m.Send(context.Background(), ports.Mail{To: to, Subject: "Hello", Text: "x"}); err == nil {
			t.Errorf("Send to %q succeeded", to)
		}
	}
	if len(srv.Messages()) != 0 {
		t.Fatal("a message was sent")
	}
	if err := m.Send(context.Background(), ports.Mail{To: "someone@rejected.example", Subject: "Hello", Text: "x"}); err == nil {
		t.Fatal("a recipient the relay refused was reported as sent")
	}
}
