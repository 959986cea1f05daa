package email_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/ports"
)

func ownerInput(to any) ports.ActionInput {
	return ports.ActionInput{
		RunID: "run_1", ActionID: "owner", Attempt: 1, Notification: email.OwnerNotification, Config: map[string]any{"to": to},
		FormID: "frm_1", FormName: "Contact <us>", SubmissionID: "sub_1", SubmittedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		ReplyTo: "ada@example.com",
		Answers: []ports.Answer{
			{FieldID: "fld_name", Label: "Name", Values: []string{`Ada "<b>" & co`}},
			{FieldID: "fld_email", Label: "Email", Values: []string{"ada@example.com"}},
			{FieldID: "fld_topics", Label: "Topics", Values: []string{"sales", "press"}},
			{FieldID: "fld_cv", Label: "CV", File: true, Values: []string{"https://forms.example/files/x/cv.pdf?expires=1&sig=a", "javascript:alert(1)"}},
			{FieldID: "fld_note", Label: "Note"},
		},
	}
}

func TestOwnerNotificationListsEveryAnswerByLabel(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.Addr, "")
	got := sendOne(t, m, srv, ownerInput([]any{"owner@example.com", "Boss <boss@example.com>"})) // one for every owner
	if strings.Join(got.Rcpts, ",") != "owner@example.com,boss@example.com" {
		t.Fatalf("recipients %v", got.Rcpts)
	}
	if rt := got.Header.Get("Reply-To"); !strings.Contains(rt, "ada@example.com") {
		t.Fatalf("Reply-To = %q", rt)
	}
	if s := got.Subject(t); s != "New response to Contact <us>" {
		t.Fatalf("Subject = %q", s)
	}
	p := got.Parts(t)
	h, plain := p["text/html"], strings.ReplaceAll(p["text/plain"], "\r\n", "\n")
	for _, want := range []string{"Ada &#34;&lt;b&gt;&#34; &amp; co", "<th align=\"left\" valign=\"top\">Topics</th><td>sales, press</td>",
		`<a href="https://forms.example/files/x/cv.pdf?expires=1&amp;sig=a">cv.pdf</a>`, "javascript:alert(1)", "New response to Contact &lt;us&gt;"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML part lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, `href="javascript`) || strings.Contains(h, "<b>") {
		t.Errorf("HTML part carries markup from the answers:\n%s", h)
	}
	order := []string{"Name:", "Email:", "Topics:\nsales, press", "CV:\nhttps://forms.example/files/x/cv.pdf?expires=1&sig=a", "Note:\n—"}
	last := -1
	for _, w := range order {
		i := strings.Index(plain, w)
		if i <= last {
			t.Fatalf("plain part lacks %q in form order:\n%s", w, plain)
		}
		last = i
	}
	if !strings.Contains(plain, `Ada "<b>" & co`) {
		t.Errorf("plain part:\n%s", plain)
	}
}

func TestOwnerNotificationSubjectAndReplyToOverridesAndHeaderSafety(t *testing.T) {
	srv := startSMTP(t, nil)
	m := newMailer(t, "smtp://"+srv.Addr, "")
	in := ownerInput([]string{"owner@example.com"})
	in.Subject = "Quote request\r\nBcc: evil@example.com"
	in.ReplyTo = "not an address"
	got := sendOne(t, m, srv, in)
	if s := got.Subject(t); s != "Quote request  Bcc: evil@example.com" || got.Header.Get("Bcc") != "" {
		t.Fatalf("Subject = %q", s)
	}
	if rt := got.Header.Get("Reply-To"); rt != "" {
		t.Fatalf("Reply-To = %q for an invalid address", rt)
	}
}

func TestOwnerNotificationBadRecipientsFailPermanently(t *testing.T) {
	m := newMailer(t, "smtp://127.0.0.1:1", "")
	for _, to := range []any{nil, "owner@example.com", []any{}, []any{"nope"}, []any{1}} {
		if out := m.Run(context.Background(), ownerInput(to)); out.Err == nil || !out.Permanent {
			t.Fatalf("to %#v: %+v", to, out)
		}
	}
}

func TestOwnerNotificationWithoutSMTPFailsPermanently(t *testing.T) {
	m, err := email.New(email.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out := m.Run(context.Background(), ownerInput([]any{"owner@example.com"})); !errors.Is(out.Err, email.ErrNotConfigured) || !out.Permanent {
		t.Fatalf("Run = %+v", out)
	}
}
