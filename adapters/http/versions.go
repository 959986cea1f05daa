package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// A form's versions: GET /v1/forms/{id}/versions, GET /v1/forms/{id}/versions/{n} and
// POST /v1/forms/{id}/versions/{n}/restore.

type formVersionSummaryJSON struct {
	Version     int        `json:"version"`
	CreatedAt   string     `json:"created_at"`
	CreatedBy   *actorJSON `json:"created_by"`
	FieldsCount int        `json:"fields_count"`
}

type formVersionJSON struct {
	Version   int         `json:"version"`
	CreatedAt string      `json:"created_at"`
	Fields    []fieldJSON `json:"fields"`
}

// versionParam reads {n}: a positive integer, else a 400 naming it.
func versionParam(c *gin.Context) (int, error) {
	n, err := strconv.Atoi(c.Param("version"))
	if err != nil || n < 1 || c.Param("version") != strconv.Itoa(n) {
		return 0, badRequest("version must be a positive whole number such as 1")
	}
	return n, nil
}

// listFormVersions pages like every list (limit, cursor); the cursor's position is the last
// version shown (its number as the position's ID), signed for this form's list.
func (a *api) listFormVersions(c *gin.Context) {
	id := c.Param("id")
	listPage(a, c, "form_versions:"+id, func(ctx context.Context, page ports.Page) ([]ports.FormVersion, bool, error) {
		q := forms.ListFormVersions{ID: id, Limit: page.Limit}
		if page.After != nil {
			q.Before, _ = strconv.Atoi(page.After.ID)
		}
		return a.App.Queries.ListFormVersions.Handle(ctx, q)
	}, func(v ports.FormVersion) (any, ports.Position) {
		s := formVersionSummaryJSON{Version: v.Version, CreatedAt: domain.FormatTime(v.CreatedAt), FieldsCount: len(v.Fields)}
		if v.CreatedBy != nil {
			by := presentActor(*v.CreatedBy)
			s.CreatedBy = &by
		}
		return s, ports.Position{CreatedAt: v.CreatedAt, ID: strconv.Itoa(v.Version)}
	})
}

func (a *api) getFormVersion(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	v, err := a.App.Queries.GetFormVersion.Handle(c.Request.Context(), forms.GetFormVersion{ID: c.Param("id"), Version: n})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentFormVersion(v))
}

func presentFormVersion(v ports.FormVersion) formVersionJSON {
	fields := make([]fieldJSON, 0, len(v.Fields))
	for _, f := range v.Fields {
		fields = append(fields, presentField(f))
	}
	return formVersionJSON{Version: v.Version, CreatedAt: domain.FormatTime(v.CreatedAt), Fields: fields}
}

func (a *api) restoreFormVersion(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	v, err := a.App.Commands.RestoreFormVersion.Handle(c.Request.Context(), forms.RestoreFormVersion{ID: c.Param("id"), Version: n})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusCreated, presentForm(v, true, a.Clock.Now()))
}
