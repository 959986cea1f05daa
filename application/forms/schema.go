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

// Handle returns the schema as a JSON document. Until forms keep their versions, a form has
// one version, 1, whose fields are its current fields; any other version is not found.
func (h GetVersionSchemaHandler) Handle(ctx context.Context, q GetVersionSchema) (map[string]any, error) {
	_, f, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return nil, err
	}
	if q.Version != 1 {
		return nil, domain.ErrNotFound
	}
	return formschema.ForFields(q.SchemaURL, f.Fields()), nil
}
