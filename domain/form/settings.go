package form

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/formward/formward/domain"
)

// CaptchaProvider is a third-party challenge the public form can require.
type CaptchaProvider string

// The supported captcha providers.
const (
	CaptchaTurnstile CaptchaProvider = "turnstile"
	CaptchaHCaptcha  CaptchaProvider = "hcaptcha"
	CaptchaReCAPTCHA CaptchaProvider = "recaptcha"
)

// Captcha is the owner's captcha account; Secret is write-only outside the domain and storage.
type Captcha struct {
	Provider CaptchaProvider
	SiteKey  string
	Secret   string
}

// Spam switches each spam rule of the public form.
type Spam struct {
	Honeypot       bool
	MinFillSeconds int
	ProofOfWork    bool
	Captcha        *Captcha
}

// Embed says where the public form may be framed and which sites may post JSON to it.
type Embed struct {
	FrameAncestors []string
	CORSOrigins    []string
}

// Settings are how the public form behaves.
type Settings struct {
	RedirectURL     *string
	ThankYouMessage *string
	Spam            Spam
	Embed           Embed
}

// DefaultSettings turn every spam rule on and allow no framing.
func DefaultSettings() Settings {
	return Settings{Spam: Spam{Honeypot: true, MinFillSeconds: 3, ProofOfWork: true}}
}

const (
	maxThankYou   = 2000
	maxOrigins    = 20
	maxMinFill    = 3600
	maxCaptchaKey = 500
)

// CheckSettings validates settings; path prefixes the violation fields.
func CheckSettings(s Settings) error {
	var vs domain.Violations
	if s.RedirectURL != nil {
		u, err := url.Parse(*s.RedirectURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(*s.RedirectURL) > 2000 {
			vs.Add("settings.redirect_url", "invalid_url", "redirect_url must be an https URL")
		}
	}
	if s.ThankYouMessage != nil && utf8.RuneCountInString(*s.ThankYouMessage) > maxThankYou {
		vs.Add("settings.thank_you_message", "too_long", fmt.Sprintf("thank_you_message must be at most %d characters", maxThankYou))
	}
	if s.Spam.MinFillSeconds < 0 || s.Spam.MinFillSeconds > maxMinFill {
		vs.Add("settings.spam.min_fill_seconds", "out_of_range", fmt.Sprintf("min_fill_seconds must be 0 to %d", maxMinFill))
	}
	if c := s.Spam.Captcha; c != nil {
		switch c.Provider {
		case CaptchaTurnstile, CaptchaHCaptcha, CaptchaReCAPTCHA:
		default:
			vs.Add("settings.spam.captcha.provider", "invalid_value", "provider must be one of turnstile, hcaptcha, recaptcha")
		}
		if strings.TrimSpace(c.SiteKey) == "" || len(c.SiteKey) > maxCaptchaKey {
			vs.Add("settings.spam.captcha.site_key", "required", "site_key is required")
		}
		if strings.TrimSpace(c.Secret) == "" || len(c.Secret) > maxCaptchaKey {
			vs.Add("settings.spam.captcha.secret", "required", "secret is required")
		}
	}
	checkOrigins(&vs, "settings.embed.frame_ancestors", s.Embed.FrameAncestors)
	checkOrigins(&vs, "settings.embed.cors_origins", s.Embed.CORSOrigins)
	return vs.Err()
}

// checkOrigins accepts scheme://host[:port] origins only (no paths, no wildcards).
func checkOrigins(vs *domain.Violations, path string, origins []string) {
	if len(origins) > maxOrigins {
		vs.Add(path, "too_many", fmt.Sprintf("at most %d origins", maxOrigins))
		return
	}
	for i, o := range origins {
		if !IsOrigin(o) {
			vs.Add(fmt.Sprintf("%s[%d]", path, i), "invalid_origin", "an origin is https://host or http://host[:port], without a path")
		}
	}
}

// IsOrigin reports whether s is a plain web origin such as https://example.com:8443.
func IsOrigin(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return false
	}
	if strings.ContainsAny(u.Host, "*;' \"") {
		return false
	}
	return u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil && s == u.Scheme+"://"+u.Host
}

// Settings returns a copy of the public form settings.
func (f *Form) Settings() Settings {
	s := f.settings
	s.Embed.FrameAncestors = append([]string(nil), s.Embed.FrameAncestors...)
	s.Embed.CORSOrigins = append([]string(nil), s.Embed.CORSOrigins...)
	if s.Spam.Captcha != nil {
		c := *s.Spam.Captcha
		s.Spam.Captcha = &c
	}
	return s
}

// HasFileFields reports whether the form asks for uploads.
func (f *Form) HasFileFields() bool {
	for _, fl := range f.fields {
		if fl.Type == TypeFile {
			return true
		}
	}
	return false
}
