package bootstrap

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/formward/formward/adapters/crypto"
	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/domain/form"
)

// Key derivation labels of the public form; a new use takes a new label.
const (
	labelFormToken = "formward form render token v1"
	labelFormPoW   = "formward form proof of work v1"
)

// MountPublicForms adds the respondent's pages (/f/...) to the API router and returns the
// metrics registry, which serve exposes on FORMWARD_METRICS_ADDR only, never on the public
// listener (its labels name every workspace's forms).
func (rt *Runtime) MountPublicForms(cfg Config, r *httpapi.Router) (*prometheus.Registry, error) {
	proxies, err := web.ParseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("FORMWARD_TRUSTED_PROXIES: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := web.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	rate := cfg.FormRateLimit
	if rate == 0 {
		rate = -1 // 0 in the configuration turns the limit off
	}
	master := rt.Keyring.Primary()
	var uploader web.Uploader
	if rt.Files != nil {
		uploader = formUploader{store: rt.Files, signer: rt.FileSigner(cfg), workspaces: persistence.NewWorkspaceRepository(rt.DB)}
	}
	h, err := web.New(web.Deps{
		App: rt.App, IPHasher: provideIPHasher(cfg, rt.Keyring),
		Clock: rt.Clock, Logger: rt.Log.Named("web"), Metrics: metrics,
	}, web.Options{
		TokenKey: crypto.DeriveKey(master, labelFormToken), PoWKey: crypto.DeriveKey(master, labelFormPoW),
		TokenTTL: cfg.FormTokenTTL, PoWMaxNumber: cfg.PoWMaxNumber, RateLimit: rate, TrustedProxies: proxies,
		CaptchaVerifyURLs: map[form.CaptchaProvider]string{
			form.CaptchaTurnstile: cfg.TurnstileVerifyURL, form.CaptchaHCaptcha: cfg.HCaptchaVerifyURL, form.CaptchaReCAPTCHA: cfg.RecaptchaVerifyURL,
		},
		Uploader: uploader,
	})
	if err != nil {
		return nil, err
	}
	h.Mount(r.Engine)
	return reg, nil
}

// bindPublicForms registers the public form settings of the serve role.
func bindPublicForms(b *binder, c *Config) {
	b.String(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For names the respondent's address")
	b.Int(&c.FormRateLimit, "form-rate-limit", 10, "public form posts per minute per IP hash and form (per process); 0 turns the limit off")
	b.Duration(&c.FormTokenTTL, "form-token-ttl", 24*time.Hour, "how long a rendered public form can be submitted")
	b.Int(&c.PoWMaxNumber, "pow-max-number", web.DefaultPoWMaxNumber, "upper bound of the proof-of-work search (the work a browser does, about 1 s per 100000)")
	b.String(&c.TurnstileVerifyURL, "turnstile-verify-url", web.DefaultCaptchaVerifyURLs[form.CaptchaTurnstile], "Cloudflare Turnstile siteverify endpoint")
	b.String(&c.HCaptchaVerifyURL, "hcaptcha-verify-url", web.DefaultCaptchaVerifyURLs[form.CaptchaHCaptcha], "hCaptcha siteverify endpoint")
	b.String(&c.RecaptchaVerifyURL, "recaptcha-verify-url", web.DefaultCaptchaVerifyURLs[form.CaptchaReCAPTCHA], "reCAPTCHA siteverify endpoint")
	b.String(&c.MetricsAddr, "metrics-addr", "127.0.0.1:9464", "address of the Prometheus /metrics listener (never the public one); empty turns it off")
}
