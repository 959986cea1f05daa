package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
)

// schemaContentType is the media type of a JSON Schema document.
const schemaContentType = "application/schema+json"

// getVersionSchema serves the JSON Schema of the submission data of one version of a form.
// A version that is not a positive whole number names no version: not found.
func (a *api) getVersionSchema(c *gin.Context) {
	id := c.Param("id")
	n, err := strconv.Atoi(c.Param("version"))
	if err != nil || n < 1 || strconv.Itoa(n) != c.Param("version") {
		fail(c, a.Logger, domain.ErrNotFound)
		return
	}
	url := strings.TrimSuffix(a.publicURL, "/") + "/v1/forms/" + id + "/versions/" + strconv.Itoa(n) + "/schema"
	s, err := a.App.Queries.GetVersionSchema.Handle(c.Request.Context(), forms.GetVersionSchema{FormID: id, Version: n, SchemaURL: url})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	body, err := json.Marshal(s)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Data(http.StatusOK, schemaContentType, body)
}
