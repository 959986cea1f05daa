package dashboard

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"

	"rsc.io/qr"
)

// qrDataURL draws text as a QR code, a PNG data: URL: the two-step setup's secret and a
// form's public link.
func qrDataURL(text string) (string, error) {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return "", err
	}
	// Drawn here, module by module, with the standard quiet zone of four modules.
	const scale, quiet = 5, 4
	n := (code.Size + 2*quiet) * scale
	img := image.NewGray(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			mx, my := x/scale-quiet, y/scale-quiet
			shade := color.Gray{Y: 255}
			if mx >= 0 && my >= 0 && mx < code.Size && my < code.Size && code.Black(mx, my) {
				shade = color.Gray{Y: 0}
			}
			img.SetGray(x, y, shade)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
