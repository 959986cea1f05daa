package forms

import (
	"context"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/formschema"
	"github.com/formward/formward/ports"
)

// GetVersionSchema reads the JSON Schema of the submission data of one version of a form.
// SchemaURL is where the schema is served (its `$id`):
// `<public URL>/v1/forms/{id}/versions/{n}/schema`.
type GetVersionSchema struct {
	FormID    string
	Version   int
	SchemaURL string
}

// GetVersionSchemaHandler answers any principal that may read forms.
type GetVersionSchemaHandler struct{ forms ports.FormRepository }

// NewGetVersionSchemaHandler makes the query.
func NewGetVersionSchemaHandler(forms ports.FormRepository) GetVersionSchemaHandler {
	return GetVersionSchemaHandler{forms: forms}
}

// Handle returns the schema of the version's fields as a JSON document; a version the form
// does not have is domain.ErrNotFound.
func (h GetVersionSchemaHandler) Handle(ctx context.Context, q GetVersionSchema) (map[string]any, error) {
	p, f, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return nil, err
	}
	if q.Version < 1 {
		return nil, domain.ErrNotFound
	}
	v, err := h.forms.GetVersion(ctx, p.WorkspaceID, f.ID(), q.Version)
	if err != nil {
		return nil, err
	}
	return formschema.ForFields(q.SchemaURL, v.Fields), nil
}
