package bootstrap

import (
	"fmt"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/email"
	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/ports"
)

// labelDashboardCookies derives the key that seals the dashboard's short-lived sign-in cookies.
const labelDashboardCookies = "formward dashboard cookies v1"

// MountDashboard adds the dashboard (/app/...) and the redirect of / to it to the API router.
func (rt *Runtime) MountDashboard(cfg Config, r *httpapi.Router) error {
	// The workflow editor's "Send a test" goes through a mailer built from the same relay
	// settings as send_email; without SMTP there is none and the editor warns instead.
	var mail ports.ActionRunner
	if cfg.SMTPURL != "" && cfg.SMTPFrom != "" {
		m, err := email.New(email.Config{URL: cfg.SMTPURL, From: cfg.SMTPFrom, CAFile: cfg.WebhookCAFile, Timeout: cfg.DeliveryTimeout})
		if err != nil {
			return fmt.Errorf("send_email: %w", err)
		}
		mail = m
	}
	h, err := dashboard.New(dashboard.Deps{App: rt.App, Clock: rt.Clock, Logger: rt.Log.Named("dashboard"), FileURL: rt.FileLinker(cfg), Preview: web.Preview}, dashboard.Options{
		PublicURL:      publicURL(cfg),
		CookieKey:      crypto.DeriveKey(rt.Keyring.Primary(), labelDashboardCookies),
		TrustedProxies: cfg.TrustedProxies,
		SSO:            cfg.OIDCEnabled(),
		Mail:           mail,
	})
	if err != nil {
		return err
	}
	h.Mount(r.Engine)
	r.Fallback("/app", h.NotFound)
	return nil
}
