package email

import (
	"context"
	"errors"
	"fmt"

	mail "github.com/wneessen/go-mail"

	"github.com/formward/formward/ports"
)

// AccountMailer sends account mail (invitations, password links) through the relay that
// send_email uses (FORMWARD_SMTP_URL, FORMWARD_SMTP_FROM).
type AccountMailer struct {
	m *Mailer
}

// NewAccountMailer returns the account mailer, or nil when no relay is configured (then the
// links are only shown, never sent); a malformed relay setting is an error.
func NewAccountMailer(cfg Config) (*AccountMailer, error) {
	if cfg.URL == "" || cfg.From == "" {
		return nil, nil
	}
	m, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &AccountMailer{m: m}, nil
}

// Send delivers one plain-text message to one address.
func (a *AccountMailer) Send(ctx context.Context, in ports.Mail) error {
	to, err := parseOne(headerValue(in.To))
	if err != nil {
		return fmt.Errorf("account mail: %q is not one valid email address", headerValue(in.To))
	}
	subject := headerValue(in.Subject)
	if subject == "" {
		return errors.New("account mail: a subject is required")
	}
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := msg.FromFormat(DefaultFromName, a.m.from); err != nil {
		return fmt.Errorf("account mail from: %w", err)
	}
	if err := msg.To(to); err != nil {
		return fmt.Errorf("account mail: %q is not one valid email address", to)
	}
	msg.Subject(subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(mail.TypeTextPlain, in.Text)
	if err := a.m.send(ctx, msg); err != nil {
		return fmt.Errorf("account mail: %w", err)
	}
	return nil
}

var _ ports.Mailer = (*AccountMailer)(nil)
