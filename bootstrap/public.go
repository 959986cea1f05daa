package bootstrap

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/extend"
	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// Key derivation labels of the public form; a new use takes a new label.
const (
	labelFormToken = "formward form render token v1"
	labelFormPoW   = "formward form proof of work v1"
)

// MountPublicForms adds the respondent's pages (/f/...) to the API router and returns the
// metrics registry, which serve exposes on FORMWARD_METRICS_ADDR only, never on the public
// listener.
func (rt *Runtime) MountPublicForms(cfg Config, r *httpapi.Router) (*prometheus.Registry, error) {
	reg := rt.Metrics.Registry
	metrics, err := web.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	rate := cfg.FormRateLimit
	if rate == 0 {
		rate = -1 // 0 in the configuration turns the limit off
	}
	master := rt.Keyring.Primary()
	tempDir, err := uploadTempDir(cfg)
	if err != nil {
		return nil, err
	}
	captchas, err := provideCaptchas(cfg, rt.Log)
	if err != nil {
		return nil, err
	}
	h, err := web.New(web.Deps{
		App: rt.App, Clock: rt.Clock, Logger: rt.Log.Named("web"), Metrics: metrics,
	}, web.Options{
		TokenKey: crypto.DeriveKey(master, labelFormToken), PoWKey: crypto.DeriveKey(master, labelFormPoW),
		TokenTTL: cfg.FormTokenTTL, PoWMaxNumber: cfg.PoWMaxNumber, RateLimit: rate, TrustedProxies: cfg.TrustedProxies,
		Captchas: captchas,
		TempDir:  tempDir, MaxFilesPerPost: cfg.MaxFilesPerPost, PublicURL: cfg.PublicURL,
	})
	if err != nil {
		return nil, err
	}
	h.Mount(r.Engine)
	return reg, nil
}

// bindPublicForms registers the public form settings of the serve role.
func bindPublicForms(b *binder, c *Config) {
	bindParsed(b, &c.TrustedProxies, "trusted-proxies", "", "cidrs", "comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For names the respondent's address", httpkit.ParseTrustedProxies)
	b.Int(&c.FormRateLimit, "form-rate-limit", 10, "public form posts per minute per IP hash and form (per process); 0 turns the limit off")
	b.Duration(&c.FormTokenTTL, "form-token-ttl", 24*time.Hour, "how long a rendered public form can be submitted")
	b.Int(&c.PoWMaxNumber, "pow-max-number", web.DefaultPoWMaxNumber, "upper bound of the proof-of-work search (the work a browser does, about 1 s per 100000)")
	b.String(&c.TurnstileVerifyURL, "turnstile-verify-url", web.DefaultCaptchaVerifyURLs[form.CaptchaTurnstile], "Cloudflare Turnstile siteverify endpoint")
	b.String(&c.HCaptchaVerifyURL, "hcaptcha-verify-url", web.DefaultCaptchaVerifyURLs[form.CaptchaHCaptcha], "hCaptcha siteverify endpoint")
	b.String(&c.RecaptchaVerifyURL, "recaptcha-verify-url", web.DefaultCaptchaVerifyURLs[form.CaptchaReCAPTCHA], "reCAPTCHA siteverify endpoint")
	bindMetrics(b, c)
	b.Int(&c.MaxFilesPerField, "max-files-per-field", submission.DefaultMaxFilesPerField, "most files one public post may upload to one file field")
	b.Int(&c.MaxFilesPerPost, "max-files-per-post", submission.DefaultMaxFilesPerPost, "most files one public post may upload in all")
	b.String(&c.TempDir, "temp-dir", "", "where uploads over 1 MiB are spooled while a public post is read; default <data dir>/tmp (created at start)")
}

// uploadTempDir is FORMWARD_TEMP_DIR, or <data dir>/tmp, created if missing and checked
// writable at start: a read-only root filesystem must fail here, not on the first large upload.
func uploadTempDir(cfg Config) (string, error) {
	dir := cfg.TempDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "tmp")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("FORMWARD_TEMP_DIR: %w", err)
	}
	f, err := os.CreateTemp(dir, "formward-check-*")
	if err != nil {
		return "", fmt.Errorf("FORMWARD_TEMP_DIR %s is not writable: %w", dir, err)
	}
	_ = f.Close()
	_ = os.Remove(f.Name())
	return dir, nil
}

// captchaProviders are the names of the registered captcha providers: the ones forms accept,
// listed (in the validation message) as ever, the built-in ones first, then the others sorted.
func captchaProviders() []form.CaptchaProvider {
	registered := extend.Captchas()
	var out, others []form.CaptchaProvider
	for _, p := range form.BuiltinCaptchaProviders {
		if _, ok := registered[string(p)]; ok {
			out = append(out, p)
		}
	}
	for name := range registered {
		if p := form.CaptchaProvider(name); !slices.Contains(form.BuiltinCaptchaProviders, p) {
			others = append(others, p)
		}
	}
	slices.Sort(others)
	return append(out, others...)
}

// provideCaptchas builds the public form's captcha providers from the registered ones.
func provideCaptchas(cfg Config, log *zap.Logger) (map[form.CaptchaProvider]web.Captcha, error) {
	out := map[form.CaptchaProvider]web.Captcha{}
	for name, c := range extend.Captchas() {
		v, err := c.Verifier(extend.CaptchaDeps{Getenv: cfg.Getenv, Logger: log.Named("captcha").With(zap.String("captcha_provider", name))})
		if err != nil {
			return nil, fmt.Errorf("captcha provider %s: %w", name, err)
		}
		out[form.CaptchaProvider(name)] = web.Captcha{
			CaptchaWidget: web.CaptchaWidget{Script: c.Script, Origins: c.Origins, Class: c.Class, Response: c.Response},
			Verifier:      v,
		}
	}
	return out, nil
}
