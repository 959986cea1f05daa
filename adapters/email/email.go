// Package email runs the send_email workflow action over SMTP (github.com/wneessen/go-mail):
// STARTTLS when the server offers it on smtp://, implicit TLS on smtps://, a templated
// recipient, subject and body, an HTML body sent with a plain-text alternative.
package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/ports"
)

// Type is the action type.
const Type = "send_email"

// DefaultFromName is the sender's display name when the action sets none.
const DefaultFromName = "Formward"

// ErrNotConfigured fails every send when FORMWARD_SMTP_URL or FORMWARD_SMTP_FROM is unset.
var ErrNotConfigured = errors.New("email is not configured: set FORMWARD_SMTP_URL and FORMWARD_SMTP_FROM")

// Config is the SMTP relay mail goes through.
type Config struct {
	// URL is smtp://user:pass@host:port (STARTTLS when offered; port 587 by default) or
	// smtps://user:pass@host:port (implicit TLS; port 465 by default).
	URL string
	// From is the envelope and header sender address, e.g. forms@example.com.
	From string
	// CAFile is a PEM file of extra CA certificates trusted for the server's TLS certificate.
	CAFile string
	// Timeout bounds connecting and each SMTP command.
	Timeout time.Duration
	Breaker actionkit.BreakerOptions
}

// Mailer runs send_email.
type Mailer struct {
	host     string
	port     int
	implicit bool
	user     string
	pass     string
	from     string
	tls      *tls.Config
	timeout  time.Duration
	breakers *actionkit.Breakers
	err      error // ErrNotConfigured when there is no relay
}

// New builds the runner. An empty URL or From gives a runner whose sends fail permanently with
// ErrNotConfigured, so that workflows can still be created; a malformed one is an error.
func New(cfg Config) (*Mailer, error) {
	m := &Mailer{timeout: cfg.Timeout, breakers: actionkit.NewBreakers(cfg.Breaker)}
	if m.timeout <= 0 {
		m.timeout = actionkit.DefaultTimeout
	}
	if cfg.URL == "" || cfg.From == "" {
		m.err = ErrNotConfigured
		return m, nil
	}
	from, err := netmail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp from %q: %w", cfg.From, err)
	}
	m.from = from.Address
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, errors.New("smtp url is not a valid URL")
	}
	switch u.Scheme {
	case "smtp":
		m.port = 587
	case "smtps":
		m.port, m.implicit = 465, true
	default:
		return nil, fmt.Errorf("smtp url: scheme must be smtp or smtps, not %q", u.Scheme)
	}
	m.host = u.Hostname()
	if m.host == "" {
		return nil, errors.New("smtp url: host is required")
	}
	if p := u.Port(); p != "" {
		if m.port, err = strconv.Atoi(p); err != nil || m.port < 1 || m.port > 65535 {
			return nil, fmt.Errorf("smtp url: bad port %q", p)
		}
	}
	if u.User != nil {
		m.user = u.User.Username()
		m.pass, _ = u.User.Password()
	}
	roots, err := delivery.RootCAs(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("smtp: %w", err)
	}
	m.tls = &tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12, RootCAs: roots}
	return m, nil
}

// Type is "send_email".
func (*Mailer) Type() string { return Type }

// Integration is "": mail goes through the installation's relay.
func (*Mailer) Integration() string { return "" }

// Validate checks to, subject and body (required strings, templates allowed) and from_name. A
// to without a template must already be one valid address.
func (*Mailer) Validate(cfg map[string]any) []ports.ConfigViolation {
	c := actionkit.Check(cfg)
	if to, ok := c.String("to", true); ok && !strings.Contains(to, "{{") {
		if _, err := parseOne(to); err != nil {
			c.Add("to", "invalid_value", "to must be one email address or a template giving one")
		}
	}
	c.String("subject", true)
	c.String("body", true)
	c.String("from_name", false)
	return c.Violations()
}

// Run sends one message.
func (m *Mailer) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	if ctx.Err() != nil {
		return actionkit.Canceled(ctx)
	}
	start := time.Now()
	fail := func(permanent bool, err error) ports.ActionOutcome {
		return ports.ActionOutcome{Duration: time.Since(start), Err: err, Permanent: permanent}
	}
	compose := m.compose
	if in.Notification == OwnerNotification {
		compose = m.composeOwner
	} else if vs := m.Validate(in.Config); len(vs) > 0 {
		return fail(true, fmt.Errorf("invalid action config: %s: %s", vs[0].Key, vs[0].Message))
	}
	if m.err != nil {
		return fail(true, m.err)
	}
	msg, err := compose(in)
	if err != nil {
		return fail(true, err)
	}
	out := m.breakers.Do(ctx, in.ActionID, func() ports.ActionOutcome {
		err := m.send(ctx, msg)
		if err == nil {
			return ports.ActionOutcome{Duration: time.Since(start)}
		}
		if ctx.Err() != nil {
			return fail(false, fmt.Errorf("send canceled: %w", ctx.Err()))
		}
		return fail(isPermanent(err), err)
	})
	return out
}

// compose renders the templates into a message. A recipient that is not exactly one valid
// address after substitution is a permanent failure.
func (m *Mailer) compose(in ports.ActionInput) (*mail.Msg, error) {
	render := in.Render
	if render == nil {
		render = func(t string, _ bool) string { return t }
	}
	cfgTo, _ := in.Config["to"].(string)
	rawTo := headerValue(render(cfgTo, false))
	to, err := parseOne(rawTo)
	if err != nil {
		return nil, fmt.Errorf("to %q is not one valid email address", rawTo)
	}
	subjectTmpl, _ := in.Config["subject"].(string)
	bodyTmpl, _ := in.Config["body"].(string)
	fromName, _ := in.Config["from_name"].(string)
	fromName = headerValue(fromName)
	if strings.TrimSpace(fromName) == "" {
		fromName = DefaultFromName
	}

	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := msg.FromFormat(fromName, m.from); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	if err := msg.To(to); err != nil {
		return nil, fmt.Errorf("to %q is not one valid email address", to)
	}
	msg.Subject(headerValue(render(subjectTmpl, false)))
	msg.SetDate()
	msg.SetMessageID()
	if IsHTML(bodyTmpl) {
		htmlBody := render(bodyTmpl, true)
		msg.SetBodyString(mail.TypeTextPlain, PlainText(htmlBody))
		msg.AddAlternativeString(mail.TypeTextHTML, htmlBody)
	} else {
		msg.SetBodyString(mail.TypeTextPlain, render(bodyTmpl, false))
	}
	return msg, nil
}

func (m *Mailer) send(ctx context.Context, msg *mail.Msg) error {
	opts := []mail.Option{
		mail.WithPort(m.port),
		mail.WithTimeout(m.timeout),
		mail.WithTLSConfig(m.tls.Clone()),
	}
	if m.implicit {
		opts = append(opts, mail.WithSSL())
	} else {
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if m.user != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(m.user), mail.WithPassword(m.pass))
	}
	c, err := mail.NewClient(m.host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*m.timeout)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	return nil
}

// isPermanent: the server refused the recipient for good (5xx on RCPT TO). Anything else —
// unreachable server, 4xx, a failed handshake — may pass later.
func isPermanent(err error) bool {
	var se *mail.SendError
	if errors.As(err, &se) {
		return se.Reason == mail.ErrSMTPRcptTo && se.ErrorCode() >= 500 && se.ErrorCode() < 600
	}
	return false
}

// parseOne accepts exactly one address ("a@b.c" or "Name <a@b.c>") and returns it bare.
func parseOne(s string) (string, error) {
	list, err := netmail.ParseAddressList(s)
	if err != nil {
		return "", err
	}
	if len(list) != 1 {
		return "", errors.New("not exactly one address")
	}
	return list[0].Address, nil
}

// headerValue removes CR and LF (and other control characters) so no value can start a new
// header, and trims the result.
func headerValue(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		if r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s))
}

var (
	tagRe      = regexp.MustCompile(`(?s)<[a-zA-Z/!][^>]*>`)
	htmlTagRe  = regexp.MustCompile(`<(?:[a-zA-Z][a-zA-Z0-9]*)(?:\s[^>]*)?/?>|</[a-zA-Z][a-zA-Z0-9]*\s*>`)
	dropRe     = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)\s*>`)
	breakRe    = regexp.MustCompile(`(?i)<br\s*/?>|</(p|div|h[1-6]|li|tr|table|blockquote|pre)\s*>`)
	blankRunRe = regexp.MustCompile(`\n{3,}`)
	spaceRe    = regexp.MustCompile(`[ \t]+`)
)

// IsHTML reports whether a body template contains HTML tags.
func IsHTML(body string) bool { return htmlTagRe.MatchString(body) }

// PlainText derives the plain-text alternative of a rendered HTML body: script, style and head
// dropped, line breaks at <br> and block ends, every other tag removed, entities decoded (so a
// value escaped in the HTML reads as itself).
func PlainText(htmlBody string) string {
	s := dropRe.ReplaceAllString(htmlBody, "")
	s = breakRe.ReplaceAllString(s, "\n")
	s = tagRe.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(spaceRe.ReplaceAllString(l, " "))
	}
	s = strings.Join(lines, "\n")
	return strings.TrimSpace(blankRunRe.ReplaceAllString(s, "\n\n"))
}
