package persistence

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// settingsJSON is the stored shape of a form's public settings. The captcha secret is sealed
// with the workspace data key; everything else is readable configuration.
type settingsJSON struct {
	RedirectURL     *string        `json:"redirect_url,omitempty"`
	ThankYouMessage *string        `json:"thank_you_message,omitempty"`
	Honeypot        bool           `json:"honeypot"`
	MinFillSeconds  int            `json:"min_fill_seconds"`
	ProofOfWork     bool           `json:"proof_of_work"`
	Captcha         *captcha       `json:"captcha,omitempty"`
	FrameAncestors  []string       `json:"frame_ancestors,omitempty"`
	CORSOrigins     []string       `json:"cors_origins,omitempty"`
	Closing         *storedClosing `json:"closing,omitempty"`
	AllowedOrigins  []string       `json:"allowed_origins,omitempty"`

	Notifications *notificationsJSON `json:"notifications,omitempty"`
	Theme         *storedTheme       `json:"theme,omitempty"`
	Partial       *storedPartial     `json:"partial,omitempty"`

	// Languages and Translations are the form's (formlanguages.go), stored with its settings.
	Languages    []string                       `json:"languages,omitempty"`
	Translations map[string]formTranslationJSON `json:"translations,omitempty"`
}

// storedPartial is settings.partial; forms stored without it keep no drafts.
type storedPartial struct {
	Enabled bool `json:"enabled"`
	TTLDays int  `json:"ttl_days"`
}

func encodePartial(p form.Partial) *storedPartial {
	if !p.Enabled && p.TTLDays == form.DefaultDraftTTLDays {
		return nil
	}
	return &storedPartial{Enabled: p.Enabled, TTLDays: p.TTLDays}
}

func (p *storedPartial) decode() form.Partial {
	if p == nil {
		return form.Partial{TTLDays: form.DefaultDraftTTLDays}
	}
	return form.Partial{Enabled: p.Enabled, TTLDays: p.TTLDays}
}

// storedTheme is the public page's theme; forms stored without one have the light default.
type storedTheme struct {
	Accent     *string     `json:"accent,omitempty"`
	Appearance string      `json:"appearance,omitempty"`
	Logo       *storedLogo `json:"logo,omitempty"`
}

type storedLogo struct {
	Key         string `json:"key"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Version     string `json:"version"`
}

func encodeTheme(t form.Theme) *storedTheme {
	if t.Accent == nil && t.Logo == nil && (t.Appearance == "" || t.Appearance == form.AppearanceLight) {
		return nil
	}
	out := &storedTheme{Accent: t.Accent, Appearance: string(t.Appearance)}
	if l := t.Logo; l != nil {
		out.Logo = &storedLogo{Key: l.Key, ContentType: l.ContentType, Size: l.Size, Width: l.Width, Height: l.Height, Version: l.Version}
	}
	return out
}

func (t *storedTheme) decode() form.Theme {
	if t == nil {
		return form.Theme{Appearance: form.AppearanceLight}
	}
	out := form.Theme{Accent: t.Accent, Appearance: form.Appearance(t.Appearance)}
	if out.Appearance == "" {
		out.Appearance = form.AppearanceLight
	}
	if l := t.Logo; l != nil {
		out.Logo = &form.Logo{Key: l.Key, ContentType: l.ContentType, Size: l.Size, Width: l.Width, Height: l.Height, Version: l.Version}
	}
	return out
}

type captcha struct {
	Provider     string `json:"provider"`
	SiteKey      string `json:"site_key"`
	SealedSecret string `json:"sealed_secret"`
}

func settingsAAD(formID string) []byte { return []byte("form-settings:" + formID) }

// encodeSettings returns the stored text of f's settings, sealing the captcha secret.
func encodeSettings(ctx context.Context, cipher ports.Cipher, f *form.Form) (string, error) {
	s := f.Settings()
	out := settingsJSON{RedirectURL: s.RedirectURL, ThankYouMessage: s.ThankYouMessage, Honeypot: s.Spam.Honeypot,
		MinFillSeconds: s.Spam.MinFillSeconds, ProofOfWork: s.Spam.ProofOfWork,
		FrameAncestors: form.OriginStrings(s.Embed.FrameAncestors), CORSOrigins: form.OriginStrings(s.Embed.CORSOrigins),
		Closing: encodeClosing(s.Closing), AllowedOrigins: form.OriginStrings(s.AllowedOrigins)}
	out.Notifications = encodeNotifications(s.Notifications)
	out.Theme = encodeTheme(s.Theme)
	out.Partial = encodePartial(s.Partial)
	out.Languages, out.Translations = f.Languages(), formTranslationsToJSON(f.Translations())
	if c := s.Spam.Captcha; c != nil {
		sealed, err := cipher.Seal(ctx, f.WorkspaceID(), []byte(c.Secret), settingsAAD(f.ID()))
		if err != nil {
			return "", fmt.Errorf("seal captcha secret: %w", err)
		}
		out.Captcha = &captcha{Provider: string(c.Provider), SiteKey: c.SiteKey, SealedSecret: base64.StdEncoding.EncodeToString(sealed)}
	}
	b, err := jsoncodec.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode form settings: %w", err)
	}
	return string(b), nil
}

// decodeSettings reads stored settings; the empty text of forms older than settings is the defaults.
func decodeSettings(ctx context.Context, cipher ports.Cipher, workspaceID, formID, raw string) (form.Settings, error) {
	if raw == "" {
		return form.DefaultSettings(), nil
	}
	var in settingsJSON
	if err := jsoncodec.Unmarshal([]byte(raw), &in); err != nil {
		return form.Settings{}, fmt.Errorf("decode settings of form %s: %w", formID, err)
	}
	s := form.Settings{RedirectURL: in.RedirectURL, ThankYouMessage: in.ThankYouMessage,
		Spam:    form.Spam{Honeypot: in.Honeypot, MinFillSeconds: in.MinFillSeconds, ProofOfWork: in.ProofOfWork},
		Closing: in.Closing.decode()}
	// Stored origins were written in canonical form; one that no longer parses is an error,
	// never dropped: an allowed_origins list emptied that way would let every site post.
	var vs domain.Violations
	s.Embed.FrameAncestors = form.ParseOrigins(&vs, "frame_ancestors", in.FrameAncestors)
	s.Embed.CORSOrigins = form.ParseOrigins(&vs, "cors_origins", in.CORSOrigins)
	s.AllowedOrigins = form.ParseOrigins(&vs, "allowed_origins", in.AllowedOrigins)
	if err := vs.Err(); err != nil {
		// %v: a broken row is a storage fault (500), not the caller's invalid input (422).
		return form.Settings{}, fmt.Errorf("decode origins of form %s: %v", formID, err)
	}
	s.Notifications = decodeNotifications(in.Notifications)
	s.Theme = in.Theme.decode()
	s.Partial = in.Partial.decode()
	if c := in.Captcha; c != nil {
		sealed, err := base64.StdEncoding.DecodeString(c.SealedSecret)
		if err != nil {
			return form.Settings{}, fmt.Errorf("decode captcha secret of form %s: %w", formID, err)
		}
		secret, err := cipher.Open(ctx, workspaceID, sealed, settingsAAD(formID))
		if err != nil {
			return form.Settings{}, fmt.Errorf("open captcha secret of form %s: %w", formID, err)
		}
		s.Spam.Captcha = &form.Captcha{Provider: form.CaptchaProvider(c.Provider), SiteKey: c.SiteKey, Secret: string(secret)}
	}
	return s, nil
}

// formToDomain rebuilds a stored form with its settings.
func (r *FormRepository) formToDomain(ctx context.Context, row formRow) (*form.Form, error) {
	fields, err := r.db.fields.get(row.ID, row.Fields)
	if err != nil {
		return nil, err
	}
	settings, err := decodeSettings(ctx, r.cipher, row.WorkspaceID, row.ID, row.Settings)
	if err != nil {
		return nil, err
	}
	removed, err := decodeRemovedFields(row.ID, row.RemovedFields)
	if err != nil {
		return nil, err
	}
	f := form.UnmarshalWithSettingsFromDatabase(row.ID, row.WorkspaceID, row.Name, row.Description, form.Status(row.Status), fields,
		settings, fromMillis(row.CreatedAt), fromMillis(row.UpdatedAt)).WithRemovedFieldsFromDatabase(removed).WithVersionFromDatabase(row.Version).WithRefFromDatabase(row.Ref)
	return withStoredLanguages(f, row.Settings)

}
