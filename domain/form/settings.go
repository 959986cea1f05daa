package form

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
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
	Notifications   Notifications
	// Closing closes the form to respondents at a time, after a number of submissions, or
	// per email answer.
	Closing Closing
	// AllowedOrigins are the sites whose plain HTML forms may post here (form-backend mode).
	AllowedOrigins []string
}

// DefaultSettings turn on every spam rule a respondent without JavaScript can pass (honeypot,
// render token with a minimum fill time; the rate limit always applies) and allow no framing.
// Proof of work needs the page's script, so an owner turns it on deliberately.
func DefaultSettings() Settings {
	return Settings{Spam: Spam{Honeypot: true, MinFillSeconds: 3}}
}

const (
	maxThankYou    = 5000
	maxRedirectURL = 2000
	maxOrigins     = 20
	maxMinFill     = 3600
	maxCaptchaKey  = 500
)

// checkSettings validates settings and returns them with URLs and origins in canonical form;
// violation fields are JSON paths under "settings".
func checkSettings(s Settings) (Settings, error) {
	var vs domain.Violations
	if s.RedirectURL != nil {
		if u, err := ParseRedirectURL(*s.RedirectURL); err != nil {
			vs.Add("settings.redirect_url", "invalid_url", err.Error())
		} else {
			canonical := u.URL
			s.RedirectURL = &canonical
		}
	}
	if s.ThankYouMessage != nil {
		if text.Field(&vs, "settings.thank_you_message", *s.ThankYouMessage) && utf8.RuneCountInString(*s.ThankYouMessage) > maxThankYou {
			vs.Add("settings.thank_you_message", "too_long", fmt.Sprintf("thank_you_message must be at most %d characters", maxThankYou))
		}
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
		} else {
			text.Field(&vs, "settings.spam.captcha.site_key", c.SiteKey)
		}
		if strings.TrimSpace(c.Secret) == "" || len(c.Secret) > maxCaptchaKey {
			vs.Add("settings.spam.captcha.secret", "required", "secret is required")
		} else {
			text.Field(&vs, "settings.spam.captcha.secret", c.Secret)
		}
	}
	s.Embed.FrameAncestors = checkOrigins(&vs, "settings.embed.frame_ancestors", s.Embed.FrameAncestors)
	s.Embed.CORSOrigins = checkOrigins(&vs, "settings.embed.cors_origins", s.Embed.CORSOrigins)
	s.Notifications = checkNotifications(&vs, s.Notifications)
	s.Closing = checkClosing(&vs, s.Closing)
	s.AllowedOrigins = checkOrigins(&vs, "settings.allowed_origins", s.AllowedOrigins)
	return s, vs.Err()
}

// CheckSettings validates settings; violation fields are JSON paths under "settings".
func CheckSettings(s Settings) error {
	_, err := checkSettings(s)
	return err
}

// checkOrigins accepts scheme://host[:port] origins only (no paths, no wildcards, no keywords)
// and returns them in canonical form.
func checkOrigins(vs *domain.Violations, path string, origins []string) []string {
	if len(origins) > maxOrigins {
		vs.Add(path, "too_many", fmt.Sprintf("at most %d origins", maxOrigins))
		return origins
	}
	if origins == nil {
		return nil
	}
	out := make([]string, 0, len(origins))
	for i, o := range origins {
		canonical, err := ParseOrigin(o)
		if err != nil {
			vs.Add(fmt.Sprintf("%s[%d]", path, i), "invalid_origin", err.Error())
		}
		out = append(out, canonical)
	}
	return out
}

// IsOrigin reports whether s is a plain web origin such as https://example.com:8443.
func IsOrigin(s string) bool {
	_, err := ParseOrigin(s)
	return err == nil
}

// RedirectURL is a parsed redirect target: URL in canonical form, safe for a Location header,
// and Origin (scheme://host[:port]), safe as a source in a Content-Security-Policy.
type RedirectURL struct {
	URL    string
	Origin string
}

// unsafeInURL are the characters that could end a header value, a CSP directive or source
// list, or an HTML attribute; a URL that needs them must percent-encode them.
const unsafeInURL = ";,'\"\\`<>"

// ParseRedirectURL accepts an absolute https URL with a host, no user information, no
// whitespace, control characters, semicolons, commas, quotes, backslashes or angle brackets,
// and at most 2,000 characters. Stored settings are re-parsed with it before any use in a header.
func ParseRedirectURL(raw string) (RedirectURL, error) {
	if len(raw) > maxRedirectURL {
		return RedirectURL{}, fmt.Errorf("redirect_url must be at most %d characters", maxRedirectURL)
	}
	if err := plainURLText(raw); err != nil {
		return RedirectURL{}, err
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return RedirectURL{}, errors.New("redirect_url must be an absolute https URL such as https://example.com/thanks")
	}
	if u.Scheme != "https" {
		return RedirectURL{}, errors.New("redirect_url must use https")
	}
	if u.User != nil {
		return RedirectURL{}, errors.New("redirect_url must not carry a user name or password")
	}
	host, err := canonicalHost(u)
	if err != nil {
		return RedirectURL{}, fmt.Errorf("redirect_url: %w", err)
	}
	u.Host = host
	canonical := u.String()
	if err := plainURLText(canonical); err != nil { // String re-escapes; the result must stay plain too
		return RedirectURL{}, err
	}
	return RedirectURL{URL: canonical, Origin: u.Scheme + "://" + host}, nil
}

// ParseOrigin accepts a web origin, scheme://host[:port] with scheme http or https and nothing
// else, and returns it in canonical form (lower case, no default port).
func ParseOrigin(raw string) (string, error) {
	const msg = "an origin is https://host or http://host[:port], without a path"
	if len(raw) > maxRedirectURL || plainURLText(raw) != nil {
		return "", errors.New(msg)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Opaque != "" ||
		u.User != nil || !strings.EqualFold(raw, u.Scheme+"://"+u.Host) {
		return "", errors.New(msg)
	}
	host, err := canonicalHost(u)
	if err != nil {
		return "", fmt.Errorf("%s: %w", msg, err)
	}
	return u.Scheme + "://" + host, nil
}

// plainURLText refuses text that is not valid, contains whitespace, or contains one of unsafeInURL.
func plainURLText(s string) error {
	if !text.Valid(s) {
		return errors.New("must not contain control characters")
	}
	for _, r := range s {
		if unicode.IsSpace(r) {
			return errors.New("must not contain whitespace")
		}
		if strings.ContainsRune(unsafeInURL, r) {
			return fmt.Errorf("must not contain %q (percent-encode it)", r)
		}
	}
	return nil
}

// canonicalHost checks the host (an ASCII name of letters, digits, hyphens and dots, or an IP
// literal) and the port (1-65535), and returns host[:port] in lower case without the
// scheme's default port.
func canonicalHost(u *url.URL) (string, error) {
	name, port := strings.ToLower(u.Hostname()), u.Port()
	if name == "" {
		return "", errors.New("a host is required")
	}
	if strings.Contains(name, ":") { // an IPv6 literal
		ip, err := netip.ParseAddr(name)
		if err != nil || ip.Zone() != "" || !strings.HasPrefix(u.Host, "[") {
			return "", errors.New("the host is not a valid IPv6 address")
		}
		name = "[" + ip.String() + "]"
	} else {
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
				return "", errors.New("the host must be an ASCII name (use the xn-- form of international names) or an IP address")
			}
		}
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-") || strings.Contains(name, "..") {
			return "", errors.New("the host is not a valid name")
		}
	}
	if strings.HasSuffix(u.Host, ":") {
		return "", errors.New("the port is empty")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New("the port must be 1 to 65535")
		}
		if (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
			return name, nil
		}
		return name + ":" + strconv.Itoa(n), nil
	}
	return name, nil
}

// Settings returns a copy of the public form settings.
func (f *Form) Settings() Settings {
	s := f.settings
	s.Embed.FrameAncestors = append([]string(nil), s.Embed.FrameAncestors...)
	s.Embed.CORSOrigins = append([]string(nil), s.Embed.CORSOrigins...)
	s.AllowedOrigins = append([]string(nil), s.AllowedOrigins...)
	s.Closing = s.Closing.copy()
	if s.Spam.Captcha != nil {
		c := *s.Spam.Captcha
		s.Spam.Captcha = &c
	}
	s.Notifications.Owner.To = append([]string(nil), s.Notifications.Owner.To...)
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
