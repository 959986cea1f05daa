package bootstrap

import (
	"context"
	"fmt"
	"mime/multipart"
	"strings"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// maxUploadBytes bounds one uploaded file of the public form (the multipart body is bounded
// by adapters/web.MaxMultipartBytes).
const maxUploadBytes = 25 * objectstore.MB

// formUploader keeps the public form's uploads in the object store under the form's prefix,
// within the workspace plan's storage quota, and returns the stable reference a submission keeps.
type formUploader struct {
	store      ports.ObjectStore
	signer     objectstore.Signer
	workspaces ports.WorkspaceRepository
}

func (u formUploader) Upload(ctx context.Context, f *form.Form, fieldID string, fh *multipart.FileHeader) (string, error) {
	ws, err := u.workspaces.Get(ctx, f.WorkspaceID())
	if err != nil {
		return "", fmt.Errorf("upload: %w", err)
	}
	if err := objectstore.CheckQuota(ctx, u.store, objectstore.FormPrefix(f.WorkspaceID(), f.ID()), ws.Plan(), fh.Size); err != nil {
		return "", err
	}
	file, err := fh.Open()
	if err != nil {
		return "", fmt.Errorf("upload: %w", err)
	}
	defer file.Close()
	head, all, err := objectstore.Peek(file)
	if err != nil {
		return "", err
	}
	ct, err := fileRules(f, fieldID).Check(fh.Size, fh.Header.Get("Content-Type"), head)
	if err != nil {
		return "", err
	}
	key, err := objectstore.NewKey(f.WorkspaceID(), f.ID(), fh.Filename)
	if err != nil {
		return "", err
	}
	if err := u.store.Put(ctx, key, all, fh.Size, ct); err != nil {
		return "", fmt.Errorf("upload: %w", err)
	}
	return u.signer.Reference(key), nil
}

// Discard deletes files of this form that a refused post uploaded (best effort: a failure
// leaves an unreferenced object, never a broken submission).
func (u formUploader) Discard(ctx context.Context, f *form.Form, refs []string) {
	prefix := objectstore.FormPrefix(f.WorkspaceID(), f.ID())
	for _, ref := range refs {
		if key, ok := objectstore.KeyFromReference(ref); ok && strings.HasPrefix(key, prefix) {
			_ = u.store.Delete(ctx, key)
		}
	}
}

// fileRules are the field's own limits: its accepted content types and size, or the server's
// default size.
func fileRules(f *form.Form, fieldID string) objectstore.FileRules {
	rules := objectstore.FileRules{MaxBytes: maxUploadBytes}
	if fl, ok := f.Field(fieldID); ok {
		rules.Accept = fl.Accept
		if fl.MaxFileBytes > 0 {
			rules.MaxBytes = fl.MaxFileBytes
		}
	}
	return rules
}
