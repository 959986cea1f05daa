package bootstrap

import (
	"fmt"

	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/adapters/oidc"
	"github.com/formward/formward/ports"
)

// provideOIDC is the OpenID Connect provider of the dashboard's sign-in, or nil when
// FORMWARD_OIDC_ISSUER is unset. It does not contact the issuer: discovery happens on the
// first sign-in, so the server starts while the provider is down.
func provideOIDC(cfg Config) (ports.OIDCProvider, error) {
	if !cfg.OIDCEnabled() {
		return nil, nil
	}
	p, err := oidc.New(oidc.Config{
		Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret,
		PublicURL: publicURL(cfg), CAFile: cfg.OIDCCAFile,
	})
	if err != nil {
		return nil, fmt.Errorf("openid connect: %w", err)
	}
	return p, nil
}

// provideAccountMailer sends invitations and password links through the SMTP relay of
// send_email, or is nil when FORMWARD_SMTP_URL or FORMWARD_SMTP_FROM is unset (the links are
// then only shown to the person who made them).
func provideAccountMailer(cfg Config) (ports.Mailer, error) {
	m, err := email.NewAccountMailer(email.Config{URL: cfg.SMTPURL, From: cfg.SMTPFrom, CAFile: cfg.WebhookCAFile, Timeout: cfg.DeliveryTimeout})
	if err != nil {
		return nil, fmt.Errorf("account mail: %w", err)
	}
	if m == nil {
		return nil, nil
	}
	return m, nil
}
