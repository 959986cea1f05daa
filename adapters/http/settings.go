package httpapi

import (
	"encoding/json"
	"errors"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
)

var (
	settingsProps = []string{"redirect_url", "thank_you_message", "spam", "embed", "notifications", "closing", "allowed_origins", "theme", "partial"}
	partialProps  = []string{"enabled", "ttl_days"}
	themeProps    = []string{"accent", "appearance"}
	spamProps     = []string{"honeypot", "min_fill_seconds", "proof_of_work", "captcha"}
	captchaProps  = []string{"provider", "site_key", "secret"}
	embedProps    = []string{"frame_ancestors", "cors_origins"}
)

// child returns the object under name; ok is false when it is absent or null.
func (o object) child(name string) (object, bool) {
	raw, present := o.props[name]
	if !present || o.isNull(name) {
		return object{}, false
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(raw, &props); err != nil || props == nil {
		o.typeError(name, "an object")
		return object{}, false
	}
	return object{path: o.at(name), props: props, vs: o.vs}, true
}

func (o object) integer(name string) (int, bool) {
	raw, ok := o.props[name]
	if !ok {
		return 0, false
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil || o.isNull(name) {
		o.typeError(name, "an integer")
	}
	return v, true
}

// formSettings reads the settings object: it replaces the settings as a whole and omitted
// properties take their defaults. A captcha without secret keeps the stored secret.
func formSettings(o object, lim form.Limits) *form.Settings {
	so, ok := o.child("settings")
	if !ok {
		return nil
	}
	so.allow(settingsProps, nil)
	s := form.DefaultSettings()
	var bad domain.Violations
	s.RedirectURL, _ = so.nullableStr("redirect_url")
	s.ThankYouMessage, _ = so.nullableStr("thank_you_message")
	if sp, ok := so.child("spam"); ok {
		sp.allow(spamProps, nil)
		if v, present := sp.boolean("honeypot"); present {
			s.Spam.Honeypot = v
		}
		if v, present := sp.integer("min_fill_seconds"); present {
			s.Spam.MinFillSeconds = v
		}
		if v, present := sp.boolean("proof_of_work"); present {
			s.Spam.ProofOfWork = v
		}
		if c, ok := sp.child("captcha"); ok {
			c.allow(captchaProps, []string{"secret_set"})
			var cp form.Captcha
			p, _ := c.str("provider")
			cp.Provider = form.CaptchaProvider(p)
			cp.SiteKey, _ = c.str("site_key")
			cp.Secret, _ = c.str("secret")
			s.Spam.Captcha = &cp
		}
	}
	if em, ok := so.child("embed"); ok {
		em.allow(embedProps, nil)
		s.Embed.FrameAncestors = em.origins("frame_ancestors", &bad)
		s.Embed.CORSOrigins = em.origins("cors_origins", &bad)
	}
	s.Notifications = notificationSettings(so)
	s.Closing = closingSettings(so)
	s.AllowedOrigins = so.origins("allowed_origins", &bad)
	if th, ok := so.child("theme"); ok {
		th.allow(themeProps, []string{"logo"}) // the logo is uploaded through the dashboard
		s.Theme.Accent, _ = th.nullableStr("accent")
		if a, present := th.str("appearance"); present {
			ap, ok := form.ParseAppearance(a)
			if !ok {
				ap = form.Appearance(a) // the domain's check names it
				if a == "" {
					ap = "none"
				}
			}
			s.Theme.Appearance = ap
		}
	}
	if pa, ok := so.child("partial"); ok {
		pa.allow(partialProps, nil)
		if v, present := pa.boolean("enabled"); present {
			s.Partial.Enabled = v
		}
		if v, present := pa.integer("ttl_days"); present {
			s.Partial.TTLDays = v
			if v < form.MinDraftTTLDays || v > form.MaxDraftTTLDays {
				// 0 is the domain's "not set"; here it was sent, and is out of range.
				pa.vs.Add(pa.at("ttl_days"), "out_of_range", form.TTLDaysMessage)
			}
		}
	}
	if len(bad) > 0 {
		// The use case will not see these settings: the answer names the other settings'
		// problems too, as the domain's check of the whole would.
		*so.vs = append(*so.vs, bad...)
		chk := s
		if c := chk.Spam.Captcha; c != nil && c.Secret == "" {
			kept := *c
			kept.Secret = "kept" // a captcha without secret keeps the stored one: not a problem
			chk.Spam.Captcha = &kept
		}
		var ve *domain.ValidationError
		if errors.As(form.CheckSettings(chk, lim), &ve) {
			*so.vs = append(*so.vs, ve.Violations...)
		}
	}
	return &s
}

// origins reads a list of origins (origin.Parse), adding to bad an invalid_origin violation
// per entry that is not one.
func (o object) origins(name string, bad *domain.Violations) []origin.Origin {
	raw, _ := o.strings(name)
	return form.ParseOrigins(bad, o.at(name), raw)
}

type captchaJSON struct {
	Provider  string `json:"provider"`
	SiteKey   string `json:"site_key"`
	SecretSet bool   `json:"secret_set"`
}

type spamJSON struct {
	Honeypot       bool         `json:"honeypot"`
	MinFillSeconds int          `json:"min_fill_seconds"`
	ProofOfWork    bool         `json:"proof_of_work"`
	Captcha        *captchaJSON `json:"captcha"`
}

type embedJSON struct {
	FrameAncestors []string `json:"frame_ancestors"`
	CORSOrigins    []string `json:"cors_origins"`
}

type settingsJSON struct {
	RedirectURL     *string     `json:"redirect_url"`
	ThankYouMessage *string     `json:"thank_you_message"`
	Spam            spamJSON    `json:"spam"`
	Embed           embedJSON   `json:"embed"`
	Closing         closingJSON `json:"closing"`
	AllowedOrigins  []string    `json:"allowed_origins"`

	Notifications notificationsJSON `json:"notifications"`
	Theme         themeJSON         `json:"theme"`
	Partial       partialJSON       `json:"partial"`
}

type partialJSON struct {
	Enabled bool `json:"enabled"`
	TTLDays int  `json:"ttl_days"`
}

type themeJSON struct {
	Accent     *string   `json:"accent"`
	Appearance string    `json:"appearance"`
	Logo       *logoJSON `json:"logo"`
}

// logoJSON is the uploaded logo, read-only in the API.
type logoJSON struct {
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
}

func presentTheme(formID string, t form.Theme) themeJSON {
	out := themeJSON{Accent: t.Accent, Appearance: string(t.Appearance)}
	if out.Appearance == "" {
		out.Appearance = string(form.AppearanceLight)
	}
	if l := t.Logo; l != nil {
		out.Logo = &logoJSON{URL: httpkit.FormLogoPath(formID, l.Version), ContentType: l.ContentType, Size: l.Size, Width: l.Width, Height: l.Height}
	}
	return out
}

// presentSettings never shows the captcha secret, only whether one is stored.
func presentSettings(formID string, s form.Settings) *settingsJSON {
	out := &settingsJSON{RedirectURL: s.RedirectURL, ThankYouMessage: s.ThankYouMessage,
		Spam:  spamJSON{Honeypot: s.Spam.Honeypot, MinFillSeconds: s.Spam.MinFillSeconds, ProofOfWork: s.Spam.ProofOfWork},
		Embed: embedJSON{FrameAncestors: form.OriginStrings(s.Embed.FrameAncestors), CORSOrigins: form.OriginStrings(s.Embed.CORSOrigins)}}
	out.Notifications = presentNotifications(s.Notifications)
	out.Theme = presentTheme(formID, s.Theme)
	out.Partial = partialJSON{Enabled: s.Partial.Enabled, TTLDays: s.Partial.TTLDays}
	if out.Embed.FrameAncestors == nil {
		out.Embed.FrameAncestors = []string{}
	}
	out.Closing = presentClosing(s.Closing)
	out.AllowedOrigins = form.OriginStrings(s.AllowedOrigins)
	if out.AllowedOrigins == nil {
		out.AllowedOrigins = []string{}
	}
	if out.Embed.CORSOrigins == nil {
		out.Embed.CORSOrigins = []string{}
	}
	if c := s.Spam.Captcha; c != nil {
		out.Spam.Captcha = &captchaJSON{Provider: string(c.Provider), SiteKey: c.SiteKey, SecretSet: c.Secret != ""}
	}
	return out
}
