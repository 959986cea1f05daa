package form_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

func TestContrastKnownRatios(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#767676", "#ffffff", 4.54}, // the lightest grey that passes AA on white
		{"#777777", "#ffffff", 4.48}, // one step lighter fails
		{"#1d4ed8", "#ffffff", 6.70},
		{"#ff0000", "#ffffff", 4.00},
		{"#ffee00", "#ffffff", 1.20},
	}
	for _, tt := range tests {
		got := form.Contrast(tt.a, tt.b)
		if math.Abs(got-tt.want) > 0.01 {
			t.Errorf("Contrast(%s, %s) = %.3f, want %.2f", tt.a, tt.b, got, tt.want)
		}
		if back := form.Contrast(tt.b, tt.a); back != got {
			t.Errorf("Contrast is not symmetric for %s, %s", tt.a, tt.b)
		}
	}
}

func TestParseColor(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"#1D4ED8", "#1d4ed8", true},
		{" #1d4ed8 ", "#1d4ed8", true},
		{"#abc", "#aabbcc", true},
		{"1d4ed8", "", false},
		{"#1d4ed", "", false},
		{"#1d4ed8ff", "", false},
		{"#gggggg", "", false},
		{"red", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := form.ParseColor(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseColor(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAccentLabelPicksTheBetterText(t *testing.T) {
	if got := form.AccentLabel("#1d4ed8"); got != form.LightLabel {
		t.Errorf("label on dark blue = %s, want white", got)
	}
	if got := form.AccentLabel("#ffee00"); got != form.DarkLabel {
		t.Errorf("label on yellow = %s, want dark text", got)
	}
}

func themed(accent string, a form.Appearance) *form.Settings {
	s := form.DefaultSettings()
	s.Theme.Appearance = a
	if accent != "" {
		s.Theme.Accent = &accent
	}
	return &s
}

func TestThemeSettings(t *testing.T) {
	tests := []struct {
		name    string
		accent  string
		app     form.Appearance
		code    string // expected violation code ("" none)
		field   string
		message string // part of the message
		stored  string // canonical accent
	}{
		{"default accent", "", form.AppearanceLight, "", "", "", ""},
		{"blue on light", "#1D4ED8", form.AppearanceLight, "", "", "", "#1d4ed8"},
		{"short form expands", "#c00", form.AppearanceLight, "", "", "", "#cc0000"},
		{"mid blue works in auto", "#2563eb", form.AppearanceAuto, "", "", "", "#2563eb"},
		{"light blue works in dark", "#60a5fa", form.AppearanceDark, "", "", "", "#60a5fa"},
		{"yellow on light fails the background", "#ffee00", form.AppearanceLight, "low_contrast", "settings.theme.accent",
			"The accent #ffee00 gives a contrast of 1.1:1 with the light page background; it needs 3:1", ""},
		{"yellow is fine on dark", "#ffee00", form.AppearanceDark, "", "", "", "#ffee00"},
		{"dark blue fails dark", "#1d4ed8", form.AppearanceDark, "low_contrast", "settings.theme.accent", "with the dark page background", ""},
		{"dark blue fails auto", "#1d4ed8", form.AppearanceAuto, "low_contrast", "settings.theme.accent", "with the dark page background", ""},
		{"light blue fails auto on light", "#60a5fa", form.AppearanceAuto, "low_contrast", "settings.theme.accent", "with the light page background", ""},
		{"mid grey fails white text", "#777777", form.AppearanceLight, "low_contrast", "settings.theme.accent",
			"The accent #777777 gives a contrast of 4.4:1 with white text; it needs 4.5:1.", ""},
		{"lighter grey fails dark text too", "#7a7a7a", form.AppearanceLight, "low_contrast", "settings.theme.accent",
			"The accent #7a7a7a gives a contrast of 4.3:1 with dark text; it needs 4.5:1.", ""},
		{"not a colour", "blue", form.AppearanceLight, "invalid_color", "settings.theme.accent", "#rrggbb", ""},
		{"unknown appearance", "", "sepia", "invalid_value", "settings.theme.appearance", "light, dark, auto", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := seqIDs()
			f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Settings: themed(tt.accent, tt.app)}, ids, form.DefaultLimits, t0)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				th := f.Settings().Theme
				if tt.stored == "" && th.Accent != nil || tt.stored != "" && (th.Accent == nil || *th.Accent != tt.stored) {
					t.Fatalf("stored accent %v, want %q", th.Accent, tt.stored)
				}
				return
			}
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) != 1 {
				t.Fatalf("err = %v, want one violation", err)
			}
			v := ve.Violations[0]
			if v.Field != tt.field || v.Code != tt.code || !strings.Contains(v.Message, tt.message) {
				t.Fatalf("violation %+v, want %s %s %q", v, tt.field, tt.code, tt.message)
			}
		})
	}
}

func TestDefaultAccentsPassTheirAppearance(t *testing.T) {
	if p := form.AccentContrast(form.DefaultAccent, form.AppearanceLight); len(p) > 0 {
		t.Errorf("default light accent: %v", p)
	}
	if p := form.AccentContrast(form.DefaultDarkAccent, form.AppearanceDark); len(p) > 0 {
		t.Errorf("default dark accent: %v", p)
	}
}

func TestLogoKeptBySettingsAndSetBySetLogo(t *testing.T) {
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F"}, ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatal(err)
	}
	logo := form.Logo{Key: "k", ContentType: "image/png", Size: 100, Width: 10, Height: 10, Version: "v1"}
	if _, err := f.SetLogo(&logo, t0); err != nil {
		t.Fatalf("SetLogo: %v", err)
	}
	s := form.DefaultSettings() // no logo: a settings patch never removes it
	if _, err := f.Apply(form.Patch{Settings: &s}, ids, form.DefaultLimits, t0); err != nil {
		t.Fatal(err)
	}
	if got := f.Settings().Theme.Logo; got == nil || *got != logo {
		t.Fatalf("logo after settings patch = %+v", got)
	}
	bad := []form.Logo{
		{Key: "k", ContentType: "image/svg+xml", Size: 100, Width: 10, Height: 10, Version: "v"},
		{Key: "k", ContentType: "text/plain", Size: 100, Width: 10, Height: 10, Version: "v"},
		{Key: "k", ContentType: "image/png", Size: form.MaxLogoBytes + 1, Width: 10, Height: 10, Version: "v"},
		{Key: "k", ContentType: "image/png", Size: 100, Width: form.MaxLogoPixels + 1, Height: 10, Version: "v"},
	}
	for _, b := range bad {
		if _, err := f.SetLogo(&b, t0); err == nil {
			t.Errorf("SetLogo(%+v) accepted", b)
		}
	}
	if got := f.Settings().Theme.Logo; got == nil || *got != logo {
		t.Fatalf("a refused logo changed the form: %+v", got)
	}
	old, err := f.SetLogo(nil, t0)
	if err != nil || old == nil || *old != logo || f.Settings().Theme.Logo != nil {
		t.Fatalf("remove: old %+v err %v now %+v", old, err, f.Settings().Theme.Logo)
	}
}
