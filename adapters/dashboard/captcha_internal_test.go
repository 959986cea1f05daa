package dashboard

import (
	"reflect"
	"testing"

	"github.com/formward/formward/domain/form"
)

// The builder offers the captcha providers of the build: the built-in ones by their names,
// one a custom build adds by its registered name.
func TestCaptchaOptions(t *testing.T) {
	got := captchaOptions(form.Limits{CaptchaProviders: []form.CaptchaProvider{"friendly", form.CaptchaReCAPTCHA, form.CaptchaTurnstile}}, "friendly")
	want := []selectOption{
		{Value: "turnstile", Label: "Cloudflare Turnstile"},
		{Value: "recaptcha", Label: "reCAPTCHA"},
		{Value: "friendly", Label: "friendly", Selected: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got := captchaOptions(form.Limits{}, "hcaptcha"); len(got) != 3 || !got[1].Selected || got[1].Label != "hCaptcha" {
		t.Fatalf("default limits: %+v", got)
	}
}
