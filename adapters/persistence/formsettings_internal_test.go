package persistence

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
)

// Origins are stored in canonical form and read back as the same origin.Origin values, IPv6
// literals included.
func TestSettingsOriginsRoundTrip(t *testing.T) {
	s := form.DefaultSettings()
	var vs domain.Violations
	s.AllowedOrigins = form.ParseOrigins(&vs, "a", []string{"http://[::1]:8080", "HTTPS://Owner.Example:443"})
	s.Embed.CORSOrigins = form.ParseOrigins(&vs, "c", []string{"http://127.0.0.1:8081"})
	s.Embed.FrameAncestors = form.ParseOrigins(&vs, "f", []string{"https://[2001:db8::1]:8443"})
	if err := vs.Err(); err != nil {
		t.Fatal(err)
	}
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Settings: &s}, nil, form.DefaultLimits, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := encodeSettings(context.Background(), nil, f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(raw, `"allowed_origins":["http://[::1]:8080","https://owner.example"]`) {
		t.Fatalf("stored %s", raw)
	}
	got, err := decodeSettings(context.Background(), nil, "wsp_1", "frm_1", raw)
	if err != nil {
		t.Fatal(err)
	}
	want := f.Settings()
	for _, pair := range [][2][]origin.Origin{{got.AllowedOrigins, want.AllowedOrigins}, {got.Embed.CORSOrigins, want.Embed.CORSOrigins},
		{got.Embed.FrameAncestors, want.Embed.FrameAncestors}} {
		if strings.Join(form.OriginStrings(pair[0]), " ") != strings.Join(form.OriginStrings(pair[1]), " ") {
			t.Fatalf("read back %v, stored %v", pair[0], pair[1])
		}
	}
}

// A stored origin that does not parse (a wildcard, text that would add a CSP directive) makes
// the settings unreadable, as a storage fault: it is never dropped, since an allowed_origins
// list emptied that way would let every site post.
func TestStoredOriginThatDoesNotParse(t *testing.T) {
	for _, raw := range []string{
		`{"honeypot":true,"allowed_origins":["https://*.example.org"]}`,
		`{"honeypot":true,"frame_ancestors":["https://b.example; script-src *"]}`,
		`{"honeypot":true,"cors_origins":["https://c.example\r\nX-Injected: 1"]}`,
	} {
		_, err := decodeSettings(context.Background(), nil, "wsp_1", "frm_1", raw)
		var ve *domain.ValidationError
		if err == nil || errors.As(err, &ve) {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
