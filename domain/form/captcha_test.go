package form_test

import (
	"errors"
	"testing"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

// The captcha providers a form may name are the ones the limits list (the build's); without a
// list, the three Formward ships.
func TestCaptchaProviderIsOneTheLimitsKnow(t *testing.T) {
	custom := form.DefaultLimits
	custom.CaptchaProviders = []form.CaptchaProvider{"friendly", form.CaptchaTurnstile}
	ids, _ := seqIDs()
	withCaptcha := func(p form.CaptchaProvider) form.Draft {
		s := form.DefaultSettings()
		s.Spam.Captcha = &form.Captcha{Provider: p, SiteKey: "site", Secret: "secret"}
		return form.Draft{Name: "Contact", Settings: &s}
	}
	for _, tc := range []struct {
		lim      form.Limits
		provider form.CaptchaProvider
		message  string // "" when accepted
	}{
		{form.DefaultLimits, form.CaptchaHCaptcha, ""},
		{form.DefaultLimits, form.CaptchaReCAPTCHA, ""},
		{form.DefaultLimits, "friendly", "provider must be one of turnstile, hcaptcha, recaptcha"},
		{custom, "friendly", ""},
		{custom, form.CaptchaTurnstile, ""},
		{custom, form.CaptchaHCaptcha, "provider must be one of friendly, turnstile"},
	} {
		_, err := form.New("frm_1", "wsp_1", withCaptcha(tc.provider), ids, tc.lim, t0)
		var ve *domain.ValidationError
		switch {
		case tc.message == "" && err != nil:
			t.Errorf("%s under %v: %v", tc.provider, tc.lim.CaptchaProviders, err)
		case tc.message != "" && (!errors.As(err, &ve) || len(ve.Violations) != 1 ||
			ve.Violations[0].Field != "settings.spam.captcha.provider" || ve.Violations[0].Message != tc.message):
			t.Errorf("%s under %v: %v, want %q", tc.provider, tc.lim.CaptchaProviders, err, tc.message)
		}
		s := withCaptcha(tc.provider).Settings
		if err := form.CheckSettings(*s, tc.lim); (err == nil) != (tc.message == "") {
			t.Errorf("CheckSettings(%s) = %v", tc.provider, err)
		}
	}
	// An update is checked under the limits it is given too.
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Contact"}, ids, custom, t0)
	if err != nil {
		t.Fatal(err)
	}
	s := withCaptcha("friendly").Settings
	if _, err := f.Apply(form.Patch{Settings: s}, ids, custom, t1); err != nil {
		t.Fatalf("update to a known provider: %v", err)
	}
	if _, err := f.Apply(form.Patch{Settings: s}, ids, form.DefaultLimits, t1); err == nil {
		t.Fatal("update to an unknown provider accepted")
	}
}
