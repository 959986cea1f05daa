package forms

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig reads the logo types
	_ "image/jpeg"
	_ "image/png"
	"io"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// ErrNoObjectStore is returned when a logo is uploaded but no object store is configured.
var ErrNoObjectStore = errors.New("no file storage is configured for logos")

// SetFormLogo uploads a form's logo; Data is the file as sent (the caller reads at most
// form.MaxLogoBytes+1 bytes, so a larger file is reported as too large).
type SetFormLogo struct {
	ID   string
	Data []byte
}

// RemoveFormLogo takes the logo off a form.
type RemoveFormLogo struct {
	ID string
}

// logoStore is what the logo commands share: the forms, the object store and the clock.
type logoStore struct {
	forms ports.FormRepository
	files ports.ObjectStore
	ids   ports.IDs
	clock ports.Clock
}

// SetFormLogoHandler uploads the logos of forms. The image's type is detected from its bytes
// (never from the file name or the client's type) and its size in pixels read from its header;
// it is stored in the object store under the form's prefix, so it counts towards the form's
// storage and goes when the form goes.
type SetFormLogoHandler struct{ logoStore }

// NewSetFormLogoHandler makes the command; files may be nil (no object store): uploads are
// refused then with ErrNoObjectStore.
func NewSetFormLogoHandler(forms ports.FormRepository, files ports.ObjectStore, ids ports.IDs, clock ports.Clock) SetFormLogoHandler {
	return SetFormLogoHandler{logoStore{forms: forms, files: files, ids: ids, clock: clock}}
}

// RemoveFormLogoHandler takes logos off forms and deletes their images.
type RemoveFormLogoHandler struct{ logoStore }

// NewRemoveFormLogoHandler makes the command; files may be nil (no object store).
func NewRemoveFormLogoHandler(forms ports.FormRepository, files ports.ObjectStore, ids ports.IDs, clock ports.Clock) RemoveFormLogoHandler {
	return RemoveFormLogoHandler{logoStore{forms: forms, files: files, ids: ids, clock: clock}}
}

// ReadLogo describes an uploaded image for the form's theme: detected type, size, pixel size
// and version (a digest of the bytes). Its check is form.CheckLogo.
func ReadLogo(workspaceID, formID string, data []byte) form.Logo {
	sum := sha256.Sum256(data)
	version := hex.EncodeToString(sum[:8])
	l := form.Logo{ContentType: sniffImage(data), Size: int64(len(data)), Version: version,
		Key: ports.FormFilesPrefix(workspaceID, formID) + "theme/logo-" + version}
	switch l.ContentType {
	case "image/webp":
		l.Width, l.Height = webpSize(data)
	case "image/png", "image/jpeg", "image/gif":
		if c, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
			l.Width, l.Height = c.Width, c.Height
		}
	}
	return l
}

// sniffImage is the image type the bytes begin with: the signatures of the WHATWG sniffing
// rules for the four types a logo may be; anything else is application/octet-stream.
func sniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 14 && string(data[0:4]) == "RIFF" && string(data[8:14]) == "WEBPVP":
		return "image/webp"
	}
	return "application/octet-stream"
}

// webpSize reads the canvas size of a WebP file (lossy VP8, lossless VP8L or extended VP8X);
// 0, 0 when the header is not one of them.
func webpSize(b []byte) (int, int) {
	if len(b) < 30 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0
	}
	switch string(b[12:16]) {
	case "VP8 ":
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0
		}
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff)
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		return int(bits&0x3fff) + 1, int((bits>>14)&0x3fff) + 1
	case "VP8X":
		w := int(b[24]) | int(b[25])<<8 | int(b[26])<<16
		h := int(b[27]) | int(b[28])<<8 | int(b[29])<<16
		return w + 1, h + 1
	}
	return 0, 0
}

// Handle checks and stores the image, then makes it the form's logo; the replaced image is
// deleted. A refused image changes nothing (nothing is stored).
func (h SetFormLogoHandler) Handle(ctx context.Context, cmd SetFormLogo) (FormView, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return FormView{}, err
	}
	f, err := h.forms.Get(ctx, p.WorkspaceID, cmd.ID)
	if err != nil {
		return FormView{}, err
	}
	logo := ReadLogo(p.WorkspaceID, cmd.ID, cmd.Data)
	if err := form.CheckLogo(logo); err != nil {
		return FormView{}, err
	}
	if cur := f.Settings().Theme.Logo; cur != nil && cur.Key == logo.Key {
		return withCount(ctx, h.forms, f) // the same image again: nothing to change
	}
	if h.files == nil {
		return FormView{}, ErrNoObjectStore
	}
	if err := h.files.Put(ctx, logo.Key, bytes.NewReader(cmd.Data), logo.Size, logo.ContentType); err != nil {
		return FormView{}, fmt.Errorf("store logo: %w", err)
	}
	return h.replace(ctx, p, cmd.ID, &logo)
}

// Handle takes the logo off the form and deletes its image.
func (h RemoveFormLogoHandler) Handle(ctx context.Context, cmd RemoveFormLogo) (FormView, error) {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return FormView{}, err
	}
	return h.replace(ctx, p, cmd.ID, nil)
}

// replace makes logo (nil: none) the form's logo, then deletes the image it replaced; when the
// form cannot be updated, the new image is deleted again.
func (h logoStore) replace(ctx context.Context, p auth.Principal, formID string, logo *form.Logo) (FormView, error) {
	var old *form.Logo
	f, err := h.forms.Update(ctx, p.WorkspaceID, formID, func(f *form.Form) (ports.Effects, error) {
		now := h.clock.Now()
		before := *f
		var err error
		if old, err = f.SetLogo(logo, now); err != nil {
			return ports.Effects{}, err
		}
		action, details, changed := formChange(&before, f)
		if !changed {
			return ports.Effects{}, nil
		}
		e, err := p.AuditEvent(h.ids, now, action, formTarget(f), details)
		return ports.Effects{Audit: []audit.Event{e}}, err
	})
	if err != nil {
		if logo != nil && h.files != nil {
			_ = h.files.Delete(ctx, logo.Key)
		}
		return FormView{}, err
	}
	if old != nil && h.files != nil && (logo == nil || old.Key != logo.Key) {
		if err := h.files.Delete(ctx, old.Key); err != nil {
			return FormView{}, fmt.Errorf("delete old logo: %w", err)
		}
	}
	return withCount(ctx, h.forms, f)
}

// GetFormLogo asks for the logo image of a form, as the public page shows it.
type GetFormLogo struct {
	FormID, Version string
}

// FormLogo is an open logo image; the caller closes Body.
type FormLogo struct {
	Logo form.Logo
	Body io.ReadCloser
}

// GetFormLogoHandler serves logos to anyone: the public page shows them.
type GetFormLogoHandler struct {
	forms ports.FormRepository
	files ports.ObjectStore
}

// NewGetFormLogoHandler makes the query; files may be nil (no logo is ever found then).
func NewGetFormLogoHandler(forms ports.FormRepository, files ports.ObjectStore) GetFormLogoHandler {
	return GetFormLogoHandler{forms: forms, files: files}
}

// Handle opens the form's logo when it is the version asked for; domain.ErrNotFound otherwise.
func (h GetFormLogoHandler) Handle(ctx context.Context, q GetFormLogo) (FormLogo, error) {
	if h.files == nil {
		return FormLogo{}, domain.ErrNotFound
	}
	f, err := h.forms.Find(ctx, q.FormID)
	if err != nil {
		return FormLogo{}, err
	}
	l := f.Settings().Theme.Logo
	if l == nil || l.Version != q.Version {
		return FormLogo{}, domain.ErrNotFound
	}
	body, _, err := h.files.Get(ctx, l.Key)
	if err != nil {
		return FormLogo{}, err
	}
	return FormLogo{Logo: *l, Body: body}, nil
}
