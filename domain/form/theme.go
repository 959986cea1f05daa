package form

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/formward/formward/domain"
)

// Appearance is the colour scheme of the public page.
type Appearance string

// The appearances: light (the default, the page as it always looked), dark, or auto (the
// respondent's system setting, prefers-color-scheme).
const (
	AppearanceLight Appearance = "light"
	AppearanceDark  Appearance = "dark"
	AppearanceAuto  Appearance = "auto"
)

// ParseAppearance reads an appearance; ok is false for any other text.
func ParseAppearance(s string) (Appearance, bool) {
	switch a := Appearance(s); a {
	case AppearanceLight, AppearanceDark, AppearanceAuto:
		return a, true
	}
	return "", false
}

// Theme is how the public page looks. No custom CSS: the page keeps its strict CSP.
type Theme struct {
	// Accent is the colour of the buttons and choices, "#rrggbb" (lower case); nil uses the
	// page's own blue. CheckSettings refuses an accent whose button label or whose contrast
	// with the page falls below WCAG AA (see AccentContrast).
	Accent *string
	// Appearance is light, dark or auto; the zero value is light.
	Appearance Appearance
	// Logo is the image shown at the top of the page. Settings never change it: a settings
	// patch keeps the stored logo, Form.SetLogo replaces or removes it.
	Logo *Logo
}

// Logo is an image the owner uploaded, stored in the object store under Key.
type Logo struct {
	Key         string
	ContentType string
	Size        int64
	Width       int
	Height      int
	// Version is a digest of the image's bytes: it goes into the public URL, so a new logo
	// gets a new URL and caches never serve the old one.
	Version string
}

// The logo limits: content types are detected from the bytes, never taken from the name.
const (
	MaxLogoBytes  = 512 << 10
	MaxLogoPixels = 4096
)

// LogoTypes are the image types a logo may have (SVG is refused: it can carry script).
var LogoTypes = []string{"image/png", "image/jpeg", "image/webp", "image/gif"}

// CheckLogo checks an uploaded logo's detected type, size and pixel dimensions; violations
// are on settings.theme.logo.
func CheckLogo(l Logo) error {
	var vs domain.Violations
	const path = "settings.theme.logo"
	okType := false
	for _, t := range LogoTypes {
		okType = okType || l.ContentType == t
	}
	switch {
	case !okType:
		vs.Add(path, "invalid_type", "The logo must be a PNG, JPEG, WebP or GIF image (SVG is not accepted).")
	case l.Size <= 0:
		vs.Add(path, "required", "The logo file is empty.")
	case l.Size > MaxLogoBytes:
		vs.Add(path, "too_large", fmt.Sprintf("The logo is %d KB; it must be at most %d KB.", (l.Size+1023)/1024, MaxLogoBytes>>10))
	case l.Width <= 0 || l.Height <= 0:
		vs.Add(path, "invalid_type", "The logo could not be read as an image.")
	case l.Width > MaxLogoPixels || l.Height > MaxLogoPixels:
		vs.Add(path, "too_large", fmt.Sprintf("The logo is %d×%d pixels; it must be at most %d pixels wide and high.", l.Width, l.Height, MaxLogoPixels))
	}
	if l.Key == "" || l.Version == "" {
		vs.Add(path, "required", "The logo must be stored before it is used.")
	}
	return vs.Err()
}

// The colours of the public page that an accent meets (adapters/web/assets/form.css): the
// button label is white or dark text, whichever reads better; the accent stands on the page
// background and the card of the appearance it is shown in.
const (
	// DefaultAccent is the page's own blue (light appearance).
	DefaultAccent = "#1d4ed8"
	// DefaultDarkAccent is the page's own blue on the dark appearance.
	DefaultDarkAccent = "#60a5fa"
	// LightLabel and DarkLabel are the two button label colours.
	LightLabel = "#ffffff"
	DarkLabel  = "#111111"
)

// surfaces are the backgrounds an accent stands on, per appearance: the page and the card.
var surfaces = map[Appearance][2]string{
	AppearanceLight: {"#f4f5f7", "#ffffff"},
	AppearanceDark:  {"#121417", "#1e2126"},
}

// WCAG AA minimums: text (the button label) and non-text (a button or choice on the page).
const (
	MinTextContrast    = 4.5
	MinNonTextContrast = 3.0
)

// ParseColor reads "#rrggbb" or the short "#rgb" (expanded: "#abc" is "#aabbcc"), in any case,
// and returns the long lower-case form.
func ParseColor(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) == 4 && s[0] == '#' {
		s = "#" + strings.Repeat(s[1:2], 2) + strings.Repeat(s[2:3], 2) + strings.Repeat(s[3:4], 2)
	}
	if len(s) != 7 || s[0] != '#' {
		return "", false
	}
	for _, r := range s[1:] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return "", false
		}
	}
	return s, true
}

// luminance is the WCAG relative luminance of a colour ParseColor accepted.
func luminance(c string) float64 {
	var l float64
	for i, w := range [3]float64{0.2126, 0.7152, 0.0722} {
		var v int
		fmt.Sscanf(c[1+2*i:3+2*i], "%02x", &v)
		s := float64(v) / 255
		if s <= 0.04045 {
			s /= 12.92
		} else {
			s = math.Pow((s+0.055)/1.055, 2.4)
		}
		l += w * s
	}
	return l
}

// Contrast is the WCAG contrast ratio of two colours ParseColor accepted (1 to 21).
func Contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// AccentLabel is the button label colour on the accent: white or dark text, the one with the
// higher contrast.
func AccentLabel(accent string) string {
	if Contrast(accent, LightLabel) >= Contrast(accent, DarkLabel) {
		return LightLabel
	}
	return DarkLabel
}

// ratio writes a contrast rounded down to one decimal, so a ratio just below a minimum never
// reads as the minimum.
func ratio(r float64) string {
	return fmt.Sprintf("%.1f:1", math.Floor(r*10)/10)
}

// appearancesOf are the appearances a page with appearance a is shown in.
func appearancesOf(a Appearance) []Appearance {
	switch a {
	case AppearanceDark:
		return []Appearance{AppearanceDark}
	case AppearanceAuto:
		return []Appearance{AppearanceLight, AppearanceDark}
	}
	return []Appearance{AppearanceLight}
}

// AccentContrast checks an accent (as ParseColor returns it) for a page of appearance a and
// returns what falls short, as sentences for the owner; none when the accent passes: its
// button label (white or dark text) at 4.5:1, and the accent on each background the page
// shows (page and card, light and/or dark) at 3:1.
func AccentContrast(accent string, a Appearance) []string {
	var out []string
	label := AccentLabel(accent)
	if r := Contrast(accent, label); r < MinTextContrast {
		name := "white text"
		if label == DarkLabel {
			name = "dark text"
		}
		out = append(out, fmt.Sprintf("The accent %s gives a contrast of %s with %s; it needs %s.", accent, ratio(r), name, "4.5:1"))
	}
	for _, ap := range appearancesOf(a) {
		worst := math.Inf(1)
		for _, bg := range surfaces[ap] {
			worst = math.Min(worst, Contrast(accent, bg))
		}
		if worst < MinNonTextContrast {
			out = append(out, fmt.Sprintf("The accent %s gives a contrast of %s with the %s page background; it needs 3:1 so that buttons and choices stand out.",
				accent, ratio(worst), ap))
		}
	}
	return out
}

// checkTheme validates the theme and returns it in canonical form (lower-case long accent,
// light for an empty appearance).
func checkTheme(vs *domain.Violations, t Theme) Theme {
	if t.Appearance == "" {
		t.Appearance = AppearanceLight
	}
	appearanceOK := true
	if _, ok := ParseAppearance(string(t.Appearance)); !ok {
		vs.Add("settings.theme.appearance", "invalid_value", "appearance must be one of light, dark, auto")
		appearanceOK = false
	}
	if t.Accent != nil {
		c, ok := ParseColor(*t.Accent)
		if !ok {
			vs.Add("settings.theme.accent", "invalid_color", "The accent must be a colour written #rrggbb, such as #1d4ed8.")
		} else {
			t.Accent = &c
			if appearanceOK {
				if problems := AccentContrast(c, t.Appearance); len(problems) > 0 {
					vs.Add("settings.theme.accent", "low_contrast", strings.Join(problems, " "))
				}
			}
		}
	}
	if t.Logo != nil {
		if err := CheckLogo(*t.Logo); err != nil {
			if ve, ok := err.(*domain.ValidationError); ok {
				*vs = append(*vs, ve.Violations...)
			}
		}
	}
	return t
}

// SetLogo replaces the form's logo (nil removes it) and returns the one it replaced.
func (f *Form) SetLogo(l *Logo, now time.Time) (old *Logo, err error) {
	if l != nil {
		if err := CheckLogo(*l); err != nil {
			return nil, err
		}
		c := *l
		l = &c
	}
	old = f.settings.Theme.Logo
	f.settings.Theme.Logo = l
	f.updatedAt = now.UTC()
	return old, nil
}
