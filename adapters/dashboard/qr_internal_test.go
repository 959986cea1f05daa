package dashboard

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"strings"
	"testing"
)

// TestQRCodeFillsItsImage: the code is drawn over the whole image (inside the quiet zone),
// not in a corner, so an authenticator app can scan it at the size the page shows.
func TestQRCodeFillsItsImage(t *testing.T) {
	u, err := qrDataURL("otpauth://totp/Formward:ada@example.org?secret=LNHZHV7QDTXJNBFTIRFCCLH3RLSVBEL7&issuer=Formward")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(u, "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() < 150 || b.Dx() != b.Dy() {
		t.Fatalf("image %v", b)
	}
	// Each quadrant holds dark modules (the three finder patterns and the data).
	for _, q := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		dark := 0
		for y := b.Dy() / 2 * q[1]; y < b.Dy()/2*(q[1]+1); y++ {
			for x := b.Dx() / 2 * q[0]; x < b.Dx()/2*(q[0]+1); x++ {
				if r, _, _, _ := img.At(x, y).RGBA(); r < 0x8000 {
					dark++
				}
			}
		}
		if dark < b.Dx()*b.Dy()/40 {
			t.Errorf("quadrant %v has %d dark pixels of %d", q, dark, b.Dx()*b.Dy()/4)
		}
	}
	// The quiet zone: the first rows are white.
	for x := 0; x < b.Dx(); x++ {
		if r, _, _, _ := img.At(x, 2).RGBA(); r < 0x8000 {
			t.Fatal("no quiet zone around the code")
		}
	}
}
