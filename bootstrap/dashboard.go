package bootstrap

import (
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/dashboard"
	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/web"
)

// labelDashboardCookies derives the key that seals the dashboard's short-lived sign-in cookies.
const labelDashboardCookies = "formward dashboard cookies v1"

// MountDashboard adds the dashboard (/app/...) and the redirect of / to it to the API router.
func (rt *Runtime) MountDashboard(cfg Config, r *httpapi.Router) error {
	h, err := dashboard.New(dashboard.Deps{App: rt.App, Clock: rt.Clock, Logger: rt.Log.Named("dashboard"), FileURL: rt.FileLinker(cfg), Preview: web.Preview}, dashboard.Options{
		PublicURL:      publicURL(cfg),
		CookieKey:      crypto.DeriveKey(rt.Keyring.Primary(), labelDashboardCookies),
		TrustedProxies: cfg.TrustedProxies,
		SSO:            cfg.OIDCEnabled(),
	})
	if err != nil {
		return err
	}
	h.Mount(r.Engine)
	r.Fallback("/app", h.NotFound)
	return nil
}
