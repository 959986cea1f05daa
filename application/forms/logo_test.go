package forms_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// webpLossless is the header of a lossless WebP of w×h pixels.
func webpLossless(w, h int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f")
	bits := uint32(w-1) | uint32(h-1)<<14
	b = binary.LittleEndian.AppendUint32(b, bits)
	return append(b, make([]byte, 16)...)
}

func TestReadLogo(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 7, 5))
	var p, j, g bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&g, img, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		data     []byte
		typ      string
		w, h     int
		accepted bool
	}{
		{"png", p.Bytes(), "image/png", 7, 5, true},
		{"jpeg", j.Bytes(), "image/jpeg", 7, 5, true},
		{"gif", g.Bytes(), "image/gif", 7, 5, true},
		{"webp", webpLossless(300, 120), "image/webp", 300, 120, true},
		{"webp too wide", webpLossless(5000, 10), "image/webp", 5000, 10, false},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), "application/octet-stream", 0, 0, false},
		{"svg with prolog", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"></svg>`), "application/octet-stream", 0, 0, false},
		{"text", []byte("hello"), "application/octet-stream", 0, 0, false},
		{"riff, not webp", []byte("RIFF\x00\x00\x00\x00WAVEfmt "), "application/octet-stream", 0, 0, false},
		{"png header only", []byte("\x89PNG\r\n\x1a\nrest"), "image/png", 0, 0, false},
	}
	for _, tt := range tests {
		l := forms.ReadLogo("wsp_1", "frm_1", tt.data)
		if l.ContentType != tt.typ || l.Width != tt.w || l.Height != tt.h || l.Size != int64(len(tt.data)) {
			t.Errorf("%s: %+v", tt.name, l)
		}
		if err := form.CheckLogo(l); (err == nil) != tt.accepted {
			t.Errorf("%s: CheckLogo = %v, accepted %v", tt.name, err, tt.accepted)
		}
	}
	a, b := forms.ReadLogo("wsp_1", "frm_1", p.Bytes()), forms.ReadLogo("wsp_1", "frm_1", j.Bytes())
	if a.Version == b.Version || a.Key == b.Key || a.Key != "workspaces/wsp_1/forms/frm_1/theme/logo-"+a.Version {
		t.Errorf("keys %q %q", a.Key, b.Key)
	}
}
