package bootstrap

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/adapters/oidc"
	"github.com/formward/formward/application/accounts"
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

// startAccountMail runs the account mail sender (password links queued by requests) until stop
// is called; without SMTP there is none and nothing is queued.
func startAccountMail(rt *Runtime) (stop func()) {
	sender := rt.App.AccountMail
	if sender == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { sender.Run(ctx, accountMailLog{log: rt.Log.Named("account_mail")}) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// accountMailLog logs the account mail sender's failures: the kind and attempt, never a link.
type accountMailLog struct{ log *zap.Logger }

var _ accounts.AccountMailObserver = accountMailLog{}

func (l accountMailLog) Failed(kind string, attempt int, gaveUp bool, err error) {
	if gaveUp {
		l.log.Error("account mail given up", zap.String("kind", kind), zap.Int("attempt", attempt), zap.Error(err))
		return
	}
	l.log.Warn("account mail failed, will retry", zap.String("kind", kind), zap.Int("attempt", attempt), zap.Error(err))
}
