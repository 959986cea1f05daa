package dashboard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

// settingsForm is the builder's Settings tab as drawn, and as posted back when refused.
type settingsForm struct {
	Name, ThankYou, Redirect, MinFill           string
	Honeypot, ProofOfWork                       bool
	FrameAncestors, CORSOrigins, AllowedOrigins string
	// Captcha: the provider ("" for none) and its site key; the secret is never drawn, and an
	// empty one keeps the stored secret.
	Captcha, SiteKey, Secret string
	HasSecret                bool
	// Closing: a UTC time as <input type="datetime-local"> holds it, a number, an email field.
	ClosesAt, MaxSubmissions, OnePerEmail, ClosedMessage string
	// Accent is the theme's accent as typed ("" for the page's own blue); Appearance is
	// light, dark or auto.
	Accent, Appearance string
	// Logo is the URL of the current logo ("" without one), with its size in pixels.
	Logo                  string
	LogoWidth, LogoHeight int
	// Save and resume: on, and the days a draft lives after its last save, as typed.
	PartialOn   bool
	PartialDays string
	// Notifications.
	OwnerOn, RespondentOn                                       bool
	OwnerTo, RespondentField, RespondentSubject, RespondentBody string
}

// localMinute is <input type="datetime-local">'s format.
const localMinute = "2006-01-02T15:04"

func settingsFormOf(f *form.Form) settingsForm {
	s := f.Settings()
	sf := settingsForm{Name: f.Name(), ThankYou: deref(s.ThankYouMessage), Redirect: deref(s.RedirectURL), MinFill: strconv.Itoa(s.Spam.MinFillSeconds),
		Honeypot: s.Spam.Honeypot, ProofOfWork: s.Spam.ProofOfWork, FrameAncestors: strings.Join(form.OriginStrings(s.Embed.FrameAncestors), "\n"),
		CORSOrigins: strings.Join(form.OriginStrings(s.Embed.CORSOrigins), "\n"), AllowedOrigins: strings.Join(form.OriginStrings(s.AllowedOrigins), "\n"),
		OnePerEmail: deref(s.Closing.OnePerEmailField), ClosedMessage: deref(s.Closing.Message),
		OwnerOn: s.Notifications.Owner.Enabled, OwnerTo: strings.Join(s.Notifications.Owner.To, "\n"),
		RespondentOn: s.Notifications.Respondent.Enabled, RespondentField: s.Notifications.Respondent.EmailFieldID,
		RespondentSubject: s.Notifications.Respondent.Subject, RespondentBody: s.Notifications.Respondent.Body,
		Accent: deref(s.Theme.Accent), Appearance: string(s.Theme.Appearance),
		PartialOn: s.Partial.Enabled, PartialDays: strconv.Itoa(s.Partial.TTLDays)}
	sf = sf.withLogo(f)
	if s.Spam.Captcha != nil {
		sf.Captcha, sf.SiteKey, sf.HasSecret = string(s.Spam.Captcha.Provider), s.Spam.Captcha.SiteKey, s.Spam.Captcha.Secret != ""
	}
	if s.Closing.ClosesAt != nil {
		sf.ClosesAt = s.Closing.ClosesAt.UTC().Format(localMinute)
	}
	if s.Closing.MaxSubmissions != nil {
		sf.MaxSubmissions = strconv.FormatInt(*s.Closing.MaxSubmissions, 10)
	}
	return sf
}

// postedSettings reads the Settings tab as posted.
func postedSettings(c *gin.Context) settingsForm {
	return settingsForm{Name: c.PostForm("name"), ThankYou: c.PostForm("thank_you_message"), Redirect: strings.TrimSpace(c.PostForm("redirect_url")),
		MinFill: strings.TrimSpace(c.PostForm("min_fill_seconds")), Honeypot: c.PostForm("honeypot") != "", ProofOfWork: c.PostForm("proof_of_work") != "",
		FrameAncestors: c.PostForm("frame_ancestors"), CORSOrigins: c.PostForm("cors_origins"), AllowedOrigins: c.PostForm("allowed_origins"),
		Captcha: c.PostForm("captcha"), SiteKey: strings.TrimSpace(c.PostForm("captcha_site_key")), Secret: c.PostForm("captcha_secret"),
		ClosesAt: strings.TrimSpace(c.PostForm("closes_at")), MaxSubmissions: strings.TrimSpace(c.PostForm("max_submissions")),
		OnePerEmail: c.PostForm("one_per_email_field"), ClosedMessage: c.PostForm("closed_message"),
		OwnerOn: c.PostForm("owner_enabled") != "", OwnerTo: c.PostForm("owner_to"),
		RespondentOn: c.PostForm("respondent_enabled") != "", RespondentField: c.PostForm("respondent_email_field"),
		RespondentSubject: c.PostForm("respondent_subject"), RespondentBody: c.PostForm("respondent_body"),
		Accent: strings.TrimSpace(c.PostForm("accent")), Appearance: c.PostForm("appearance"),
		PartialOn: c.PostForm("partial_enabled") != "", PartialDays: strings.TrimSpace(c.PostForm("partial_ttl_days"))}
}

// apply writes what the tab holds onto the stored settings; what does not parse is a violation
// named like the domain's own, so it shows next to its control with the domain's refusals.
func (sf settingsForm) apply(s form.Settings, vs *domain.Violations) form.Settings {
	s.ThankYouMessage, s.RedirectURL = nil, nil
	if strings.TrimSpace(sf.ThankYou) != "" {
		s.ThankYouMessage = &sf.ThankYou
	}
	if sf.Redirect != "" {
		s.RedirectURL = &sf.Redirect
	}
	s.Spam.Honeypot, s.Spam.ProofOfWork = sf.Honeypot, sf.ProofOfWork
	s.Spam.MinFillSeconds = 0
	if sf.MinFill != "" {
		n, err := strconv.Atoi(sf.MinFill)
		if err != nil {
			n = -1 // the domain names the range
		}
		s.Spam.MinFillSeconds = n
	}
	switch {
	case sf.Captcha == "":
		s.Spam.Captcha = nil
	default:
		secret := sf.Secret
		if secret == "" && s.Spam.Captcha != nil {
			secret = s.Spam.Captcha.Secret // kept: the page never shows it
		}
		s.Spam.Captcha = &form.Captcha{Provider: form.CaptchaProvider(sf.Captcha), SiteKey: sf.SiteKey, Secret: secret}
	}
	// Origins are read as the API reads them (origin.Parse).
	s.Embed.FrameAncestors = form.ParseOrigins(vs, "settings.embed.frame_ancestors", lines(sf.FrameAncestors))
	s.Embed.CORSOrigins = form.ParseOrigins(vs, "settings.embed.cors_origins", lines(sf.CORSOrigins))
	s.AllowedOrigins = form.ParseOrigins(vs, "settings.allowed_origins", lines(sf.AllowedOrigins))

	s.Closing = form.Closing{}
	if sf.ClosesAt != "" {
		if t, err := time.Parse(localMinute, sf.ClosesAt); err != nil {
			vs.Add("settings.closing.closes_at", "invalid_value", "enter the closing time as a date and a time, such as 2026-12-31 17:00")
		} else {
			s.Closing.ClosesAt = &t
		}
	}
	if sf.MaxSubmissions != "" {
		if n, err := strconv.ParseInt(sf.MaxSubmissions, 10, 64); err != nil {
			vs.Add("settings.closing.max_submissions", "invalid_value", "enter a whole number of responses, such as 100")
		} else {
			s.Closing.MaxSubmissions = &n
		}
	}
	if sf.OnePerEmail != "" {
		s.Closing.OnePerEmailField = &sf.OnePerEmail
	}
	if strings.TrimSpace(sf.ClosedMessage) != "" {
		s.Closing.Message = &sf.ClosedMessage
	}
	s.Partial = form.Partial{Enabled: sf.PartialOn, TTLDays: form.DefaultDraftTTLDays}
	if sf.PartialDays != "" {
		if n, err := strconv.Atoi(sf.PartialDays); err != nil || n < form.MinDraftTTLDays || n > form.MaxDraftTTLDays {
			vs.Add("settings.partial.ttl_days", "out_of_range", "enter a number of days from 1 to 365")
		} else {
			s.Partial.TTLDays = n
		}
	}
	s.Notifications.Owner = form.OwnerNotification{Enabled: sf.OwnerOn, To: splitList(sf.OwnerTo)}
	s.Notifications.Respondent = form.RespondentNotification{Enabled: sf.RespondentOn, EmailFieldID: sf.RespondentField,
		Subject: sf.RespondentSubject, Body: sf.RespondentBody}
	return s
}

// splitList reads addresses one per line or separated by commas.
func splitList(s string) []string {
	return lines(strings.ReplaceAll(s, ",", "\n"))
}

func (h *Handler) saveFormSettings(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	f := fv.Form
	sf := postedSettings(c)
	var vs domain.Violations
	s := f.Settings()
	if _, posted := c.GetPostForm("accent"); posted { // a post without the control keeps the accent
		s.Theme.Accent = nil
		if sf.Accent != "" {
			s.Theme.Accent = &sf.Accent
		}
	} else {
		sf.Accent = deref(s.Theme.Accent)
	}
	if sf.Appearance == "" {
		sf.Appearance = string(s.Theme.Appearance) // a post without the choice keeps it
	}
	s.Theme.Appearance = form.Appearance(sf.Appearance)
	s = sf.apply(s, &vs)
	name := sf.Name
	var ve *domain.ValidationError
	if len(vs) > 0 && errors.As(form.CheckSettings(s, h.app.FormLimits), &ve) {
		vs = append(vs, ve.Violations...) // the other settings' problems, shown in the same answer
	}
	err := vs.Err()
	if err == nil {
		err = h.updateForm(c, f.ID(), form.Patch{Name: &name, Settings: &s})
	}
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		errs := map[string]string{}
		var other []string
		for _, d := range b.Details {
			ctl := settingsControl(d.Field)
			if ctl == "" {
				other = append(other, sentence(d.Message))
			} else if errs[ctl] == "" {
				errs[ctl] = sentence(d.Message)
			}
		}
		sf = sf.withLogo(f)
		sf.Secret, sf.HasSecret = "", f.Settings().Spam.Captcha != nil && f.Settings().Spam.Captcha.Secret != ""
		h.drawBuilder(c, fv, builderState{status: b.Status, settings: &sf, setErr: errs, rest: strings.Join(other, " "), tab: "settings"})
		return
	}
	h.redirect(c, "/app/forms/"+f.ID()+"?tab=settings#settings", "Settings saved.")
}

// settingsControl names the settings control a domain path belongs to.
func settingsControl(path string) string {
	for _, m := range []struct{ prefix, control string }{
		{"name", "name"}, {"settings.thank_you_message", "thank_you_message"}, {"settings.redirect_url", "redirect_url"},
		{"settings.spam.min_fill_seconds", "min_fill_seconds"}, {"settings.embed.frame_ancestors", "frame_ancestors"},
		{"settings.embed.cors_origins", "cors_origins"}, {"settings.allowed_origins", "allowed_origins"},
		{"settings.spam.captcha.provider", "captcha"}, {"settings.spam.captcha.site_key", "captcha_site_key"},
		{"settings.spam.captcha.secret", "captcha_secret"}, {"settings.spam.captcha", "captcha"},
		{"settings.closing.closes_at", "closes_at"}, {"settings.closing.max_submissions", "max_submissions"},
		{"settings.closing.one_per_email_field", "one_per_email_field"}, {"settings.closing.message", "closed_message"},
		{"settings.notifications.owner", "owner_to"}, {"settings.notifications.respondent.email_field_id", "respondent_email_field"},
		{"settings.notifications.respondent.subject", "respondent_subject"}, {"settings.notifications.respondent.body", "respondent_body"},
		{"settings.notifications.respondent", "respondent_email_field"},
		{"settings.partial.ttl_days", "partial_ttl_days"}, {"settings.partial", "partial_ttl_days"},
		{"settings.theme.accent", "accent"}, {"settings.theme.appearance", "appearance"}, {"settings.theme.logo", "logo"},
	} {
		if path == m.prefix || strings.HasPrefix(path, m.prefix+"[") || strings.HasPrefix(path, m.prefix+".") {
			return m.control
		}
	}
	return ""
}

// appearances are the theme's appearance choices, in the order shown.
var appearances = []struct{ Value, Label string }{
	{string(form.AppearanceLight), "Light"}, {string(form.AppearanceDark), "Dark"}, {string(form.AppearanceAuto), "Follow the respondent's device"},
}

// withLogo fills in the form's current logo (a failed post keeps what was typed, but the logo
// is the stored one).
func (sf settingsForm) withLogo(f *form.Form) settingsForm {
	sf.Logo, sf.LogoWidth, sf.LogoHeight = "", 0, 0
	if l := f.Settings().Theme.Logo; l != nil {
		sf.Logo, sf.LogoWidth, sf.LogoHeight = httpkit.FormLogoPath(f.ID(), l.Version), l.Width, l.Height
	}
	if sf.Appearance == "" {
		sf.Appearance = string(form.AppearanceLight)
	}
	return sf
}

// uploadLogo sets the form's logo from the posted file (POST /app/forms/{id}/logo, multipart):
// its type is detected from its bytes, and a refused file changes nothing; the rest of the
// settings is a form of its own, so nothing typed there is lost.
func (h *Handler) uploadLogo(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	f := fv.Form
	refuse := func(status int, msg string) {
		sf := settingsFormOf(f)
		h.drawBuilder(c, fv, builderState{status: status, settings: &sf, setErr: map[string]string{"logo": msg}, tab: "settings"})
	}
	// The post is the file and the form's few fields: a little over the logo limit.
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, form.MaxLogoBytes+64<<10)
	fh, err := c.FormFile("logo")
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("The logo is larger than %d KB. Choose a smaller image.", form.MaxLogoBytes>>10))
		return
	case err != nil:
		refuse(http.StatusUnprocessableEntity, "Choose an image file to upload as the logo.")
		return
	}
	file, err := fh.Open()
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The logo could not be read. Please try again.")
		return
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, form.MaxLogoBytes+1))
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The logo could not be read. Please try again.")
		return
	}
	if _, err := h.app.Commands.SetFormLogo.Handle(c.Request.Context(), forms.SetFormLogo{ID: f.ID(), Data: data}); err != nil {
		if errors.Is(err, forms.ErrNoObjectStore) {
			refuse(http.StatusUnprocessableEntity, "Logos need file storage, and none is configured on this server.")
			return
		}
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		msg := "The logo was not accepted."
		if len(b.Details) > 0 {
			msg = sentence(b.Details[0].Message)
		}
		refuse(b.Status, msg)
		return
	}
	h.redirect(c, "/app/forms/"+f.ID()+"?tab=settings#s-logo", "Logo uploaded.")
}

// removeLogo takes the logo off the form (POST /app/forms/{id}/logo/remove).
func (h *Handler) removeLogo(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	if _, err := h.app.Commands.RemoveFormLogo.Handle(c.Request.Context(), forms.RemoveFormLogo{ID: fv.Form.ID()}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/forms/"+fv.Form.ID()+"?tab=settings#s-logo", "Logo removed.")
}
