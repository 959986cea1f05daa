package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"mime/multipart"
	"net/http/httptest"
	"net/textproto"
	"testing"
	"time"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/workspace"
)

type oneWorkspace struct{ w *workspace.Workspace }

func (o oneWorkspace) Create(context.Context, *workspace.Workspace) error { return nil }
func (o oneWorkspace) Get(_ context.Context, id string) (*workspace.Workspace, error) {
	if id != o.w.ID() {
		return nil, domain.ErrNotFound
	}
	return o.w, nil
}
func (o oneWorkspace) List(context.Context) ([]*workspace.Workspace, error) {
	return []*workspace.Workspace{o.w}, nil
}
func (o oneWorkspace) Oldest(context.Context) (*workspace.Workspace, error) { return o.w, nil }

// fileHeader builds the multipart header of one uploaded file, as net/http parses it.
func fileHeader(t *testing.T, name, contentType string, body []byte) *multipart.FileHeader {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="f"; filename="`+name+`"`)
	h.Set("Content-Type", contentType)
	part, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(body)
	_ = w.Close()
	req := httptest.NewRequest("POST", "/", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if err := req.ParseMultipartForm(1 << 20); err != nil {
		t.Fatal(err)
	}
	return req.MultipartForm.File["f"][0]
}

func TestUploadsFollowTheFieldsRules(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ws := workspace.UnmarshalFromDatabase("wsp_1", "A", workspace.PlanBusiness, now)
	limit := int64(64)
	n := 0
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Jobs", Fields: []form.FieldSpec{
		{Label: "CV", Type: "file", Accept: []string{"application/pdf"}, MaxFileBytes: &limit},
		{Label: "Anything", Type: "file"},
	}}, func() string { n++; return "fld_" + string(rune('a'+n)) }, form.DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}
	store, err := objectstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	u := formUploader{store: store, signer: objectstore.Signer{Key: []byte("k"), BaseURL: "https://forms.example.com"}, workspaces: oneWorkspace{ws}}
	cv, anyField := f.Fields()[0].ID, f.Fields()[1].ID
	pdf := []byte("%PDF-1.4\n%test\n")
	ctx := context.Background()

	ref, err := u.Upload(ctx, f, cv, fileHeader(t, "cv.pdf", "application/pdf", pdf))
	if err != nil {
		t.Fatalf("a small PDF is accepted: %v", err)
	}
	key, _ := objectstore.KeyFromReference(ref)
	if _, _, err := store.Get(ctx, key); err != nil {
		t.Fatalf("stored file: %v", err)
	}
	u.Discard(ctx, f, []string{ref, "https://elsewhere.example/files/workspaces/wsp_2/forms/frm_9/x/y.pdf"})
	if _, _, err := store.Get(ctx, key); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a discarded file must be gone: %v", err)
	}
	if _, err := u.Upload(ctx, f, cv, fileHeader(t, "cv.txt", "text/plain", []byte("plain text"))); err == nil {
		t.Fatal("a text file must be refused by a field that accepts only PDF")
	}
	big := append(append([]byte{}, pdf...), bytes.Repeat([]byte("x"), 100)...)
	if _, err := u.Upload(ctx, f, cv, fileHeader(t, "cv.pdf", "application/pdf", big)); err == nil {
		t.Fatal("a file over the field's max_file_size must be refused")
	}
	if _, err := u.Upload(ctx, f, anyField, fileHeader(t, "notes.txt", "text/plain", []byte("plain text"))); err != nil {
		t.Fatalf("a field without rules takes any type within the default size: %v", err)
	}
}
