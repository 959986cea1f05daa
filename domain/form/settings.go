package form

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/domain/text"
	"github.com/formward/formward/domain/weburl"
)

// CaptchaProvider is a third-party challenge the public form can require.
type CaptchaProvider string

// The supported captcha providers.
const (
	CaptchaTurnstile CaptchaProvider = "turnstile"
	CaptchaHCaptcha  CaptchaProvider = "hcaptcha"
	CaptchaReCAPTCHA CaptchaProvider = "recaptcha"
)

// BuiltinCaptchaProviders are the captcha providers Formward ships.
var BuiltinCaptchaProviders = []CaptchaProvider{CaptchaTurnstile, CaptchaHCaptcha, CaptchaReCAPTCHA}

// captchaProviders are the providers lim accepts.
func (lim Limits) captchaProviders() []CaptchaProvider {
	if lim.CaptchaProviders == nil {
		return BuiltinCaptchaProviders
	}
	return lim.CaptchaProviders
}

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
	FrameAncestors []origin.Origin
	CORSOrigins    []origin.Origin
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
	AllowedOrigins []origin.Origin
	// Theme is the public page's accent colour, appearance and logo.
	Theme Theme
	// Partial lets respondents save their progress and resume it later (drafts).
	Partial Partial
}

// DefaultSettings turn on every spam rule a respondent without JavaScript can pass (honeypot,
// render token with a minimum fill time; the rate limit always applies) and allow no framing.
// Proof of work needs the page's script, so an owner turns it on deliberately.
func DefaultSettings() Settings {
	return Settings{Spam: Spam{Honeypot: true, MinFillSeconds: 3}, Theme: Theme{Appearance: AppearanceLight},
		Partial: Partial{TTLDays: DefaultDraftTTLDays}}
}

const (
	maxThankYou    = 5000
	maxRedirectURL = 2000
	maxOrigins     = 20
	maxMinFill     = 3600
	maxCaptchaKey  = 500
)

// checkSettings validates settings and returns them with the redirect URL in canonical form
// (origins are origin.Origin values, canonical already); violation fields are JSON paths
// under "settings".
func checkSettings(s Settings, lim Limits) (Settings, error) {
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
		if known := lim.captchaProviders(); !slices.Contains(known, c.Provider) {
			names := make([]string, len(known))
			for i, p := range known {
				names[i] = string(p)
			}
			vs.Add("settings.spam.captcha.provider", "invalid_value", "provider must be one of "+strings.Join(names, ", "))
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
	checkOrigins(&vs, "settings.embed.frame_ancestors", s.Embed.FrameAncestors)
	checkOrigins(&vs, "settings.embed.cors_origins", s.Embed.CORSOrigins)
	s.Notifications = checkNotifications(&vs, s.Notifications)
	s.Closing = checkClosing(&vs, s.Closing)
	checkOrigins(&vs, "settings.allowed_origins", s.AllowedOrigins)
	s.Theme = checkTheme(&vs, s.Theme)
	s.Partial = checkPartial(&vs, s.Partial)
	return s, vs.Err()
}

// CheckSettings validates settings under lim; violation fields are JSON paths under "settings".
func CheckSettings(s Settings, lim Limits) error {
	_, err := checkSettings(s, lim)
	return err
}

// checkOrigins bounds a list of origins; each is an origin.Origin, parsed where it was read.
func checkOrigins(vs *domain.Violations, path string, origins []origin.Origin) {
	if len(origins) > maxOrigins {
		vs.Add(path, "too_many", fmt.Sprintf("at most %d origins", maxOrigins))
	}
	for i, o := range origins {
		if o.IsZero() {
			vs.Add(fmt.Sprintf("%s[%d]", path, i), "invalid_origin", "an origin is required")
		}
	}
}

// ParseOrigins reads a settings list of origins (path is its JSON path, such as
// "settings.allowed_origins"), adding an invalid_origin violation at path[i] for each entry
// that is not one. nil stays nil.
func ParseOrigins(vs *domain.Violations, path string, raw []string) []origin.Origin {
	if raw == nil {
		return nil
	}
	out := make([]origin.Origin, 0, len(raw))
	for i, r := range raw {
		o, err := origin.Parse(r)
		if err != nil {
			vs.Add(fmt.Sprintf("%s[%d]", path, i), "invalid_origin", err.Error())
			continue
		}
		out = append(out, o)
	}
	return out
}

// OriginStrings writes origins out in canonical form.
func OriginStrings(origins []origin.Origin) []string {
	if origins == nil {
		return nil
	}
	out := make([]string, len(origins))
	for i, o := range origins {
		out[i] = o.String()
	}
	return out
}

// RedirectURL is a parsed redirect target: URL in canonical form, safe for a Location header,
// and its Origin, safe as a source in a Content-Security-Policy.
type RedirectURL struct {
	URL    string
	Origin origin.Origin
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
	u, err := weburl.ParseHTTPS(raw)
	switch {
	case errors.Is(err, weburl.ErrNotAbsolute), errors.Is(err, weburl.ErrNoScheme):
		return RedirectURL{}, errors.New("redirect_url must be an absolute https URL such as https://example.com/thanks")
	case errors.Is(err, weburl.ErrScheme):
		return RedirectURL{}, errors.New("redirect_url must use https")
	case errors.Is(err, weburl.ErrUserInfo):
		return RedirectURL{}, errors.New("redirect_url must not carry a user name or password")
	}
	canonical, o, err := u.Canonical()
	if err != nil {
		return RedirectURL{}, fmt.Errorf("redirect_url: %w", err)
	}
	if err := plainURLText(canonical); err != nil { // String re-escapes; the result must stay plain too
		return RedirectURL{}, err
	}
	return RedirectURL{URL: canonical, Origin: o}, nil
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

// Settings returns a copy of the public form settings.
func (f *Form) Settings() Settings {
	s := f.settings
	s.Embed.FrameAncestors = append([]origin.Origin(nil), s.Embed.FrameAncestors...)
	s.Embed.CORSOrigins = append([]origin.Origin(nil), s.Embed.CORSOrigins...)
	s.AllowedOrigins = append([]origin.Origin(nil), s.AllowedOrigins...)
	s.Closing = s.Closing.copy()
	if s.Spam.Captcha != nil {
		c := *s.Spam.Captcha
		s.Spam.Captcha = &c
	}
	s.Notifications.Owner.To = append([]string(nil), s.Notifications.Owner.To...)
	if s.Theme.Accent != nil {
		a := *s.Theme.Accent
		s.Theme.Accent = &a
	}
	if s.Theme.Logo != nil {
		l := *s.Theme.Logo
		s.Theme.Logo = &l
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
