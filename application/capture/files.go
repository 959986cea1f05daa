package capture

import (
	"context"
	"fmt"
	"strings"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// deleteSubmissionFiles removes the files uploaded with a submission: everything under its own
// prefix, and older uploads its file fields name. Only keys under the form's own prefix are
// deleted, whatever a value holds.
func deleteSubmissionFiles(ctx context.Context, forms ports.FormRepository, submissions ports.SubmissionRepository,
	files ports.ObjectStore, workspaceID, formID, id string) error {
	if files == nil {
		return nil
	}
	s, err := submissions.Get(ctx, workspaceID, formID, id)
	if err != nil {
		return err
	}
	f, err := forms.Get(ctx, workspaceID, formID)
	if err != nil {
		return err
	}
	if err := files.DeletePrefix(ctx, ports.SubmissionFilesPrefix(workspaceID, formID, id)); err != nil {
		return fmt.Errorf("delete submission files: %w", err)
	}
	// Uploads stored before files had a per-submission prefix are named by their values.
	prefix := ports.FormFilesPrefix(workspaceID, formID)
	data := s.Data()
	for _, fld := range f.Fields() {
		if fld.Type != form.TypeFile {
			continue
		}
		v, ok := data[fld.ID]
		if !ok {
			continue
		}
		for _, ref := range v.Strings() {
			key, ok := FileKey(ref, prefix)
			if !ok {
				continue
			}
			if err := files.Delete(ctx, key); err != nil {
				return fmt.Errorf("delete submission file: %w", err)
			}
		}
	}
	return nil
}

// fileKey reads the object key out of a stored file reference: a bare key, or a URL whose path
// continues after "/files/" with the key (signed or not).
func FileKey(ref, prefix string) (string, bool) {
	if i := strings.Index(ref, "/files/"); i >= 0 {
		ref = ref[i+len("/files/"):]
	}
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = ref[:i]
	}
	if !strings.HasPrefix(ref, prefix) || len(ref) == len(prefix) || strings.Contains(ref, "..") {
		return "", false
	}
	return ref, true
}
