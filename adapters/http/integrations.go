package httpapi

import (
	"bytes"
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/ports"
)

var (
	integrationProps    = []string{"type", "credentials"}
	integrationReadOnly = []string{"id", "created_at", "credentials_set"}
)

type integrationJSON struct {
	ID             string `json:"id"`
	Type           string `json:"type"`
	CredentialsSet bool   `json:"credentials_set"`
	CreatedAt      string `json:"created_at"`
}

// presentIntegration shows an integration; its credentials never leave the server.
func presentIntegration(i *integration.Integration) integrationJSON {
	return integrationJSON{ID: i.ID(), Type: i.Type(), CredentialsSet: true, CreatedAt: domain.FormatTime(i.CreatedAt())}
}

func (a *api) listIntegrations(c *gin.Context) {
	p := principal(c)
	list := "integrations:" + p.WorkspaceID
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*integration.Integration, bool, error) {
		return a.App.Queries.ListIntegrations.Handle(ctx, workflows.ListIntegrations{Page: page})
	}, func(it *integration.Integration) (any, ports.Position) {
		return presentIntegration(it), ports.Position{CreatedAt: it.CreatedAt(), ID: it.ID()}
	})
}

func (a *api) createIntegration(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, integrationProps, integrationReadOnly)
	if !ok {
		return
	}
	var d integration.Draft
	d.Type, _ = o.str("type")
	if !o.has("type") {
		vs.Add("type", "required", "type is required")
	}
	if creds, present := o.object("credentials"); present {
		d.Credentials = map[string]string{}
		for k, raw := range creds.props {
			if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
				// A service account key file may be given as the JSON object itself.
				d.Credentials[k] = string(t)
			} else if v, _ := creds.str(k); v != "" {
				d.Credentials[k] = v
			} else if !creds.isNull(k) {
				d.Credentials[k] = ""
			}
		}
	} else {
		vs.Add("credentials", "required", "credentials is required")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	i, err := a.App.Commands.CreateIntegration.Handle(c.Request.Context(), workflows.CreateIntegration{Draft: d})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusCreated, presentIntegration(i))
}

func (a *api) getIntegration(c *gin.Context) {
	i, err := a.App.Queries.GetIntegration.Handle(c.Request.Context(), workflows.GetIntegration{ID: c.Param("id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentIntegration(i))
}

func (a *api) deleteIntegration(c *gin.Context) {
	if err := a.App.Commands.DeleteIntegration.Handle(c.Request.Context(), workflows.DeleteIntegration{ID: c.Param("id")}); err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}
