package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/integration"
)

// mountIntegrations adds the integrations page: connect Slack or Google Sheets, disconnect.
func (h *Handler) mountIntegrations(w *gin.RouterGroup) {
	w.GET("/integrations", h.integrations)
	w.POST("/integrations", h.connectIntegration)
	w.GET("/integrations/:id/disconnect", h.disconnectConfirm)
	w.POST("/integrations/:id/disconnect", h.disconnectIntegration)
}

type integrationRow struct {
	ID, Type, Label string
	Connected       time.Time
}

type integrationsData struct {
	Integrations []integrationRow
	Pager        pager
}

func integrationLabel(typ string) string {
	switch typ {
	case integration.TypeSlack:
		return "Slack"
	case integration.TypeGoogleSheets:
		return "Google Sheets"
	}
	return typ
}

func (h *Handler) integrationsData(c *gin.Context) (integrationsData, error) {
	is, more, err := h.app.Queries.ListIntegrations.Handle(c.Request.Context(), workflows.ListIntegrations{
		Page: pageOf(c)})
	if err != nil {
		return integrationsData{}, err
	}
	d := integrationsData{}
	for _, i := range is {
		d.Integrations = append(d.Integrations, integrationRow{ID: i.ID(), Type: i.Type(), Label: integrationLabel(i.Type()), Connected: i.CreatedAt()})
	}
	if n := len(is); n > 0 {
		d.Pager = pagerFor(c, more, is[n-1].CreatedAt(), is[n-1].ID())
	}
	return d, nil
}

func (h *Handler) integrations(c *gin.Context) {
	d, err := h.integrationsData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "integrations", &view{Title: "Integrations", Data: d})
}

// connectIntegration stores the credentials of one type; they are never drawn back, not even
// after a failed post.
func (h *Handler) connectIntegration(c *gin.Context) {
	typ := c.PostForm("type")
	creds := map[string]string{}
	if keys, ok := integration.CredentialKeys(typ); ok {
		for _, k := range keys {
			creds[k] = c.PostForm(k)
		}
	}
	noStore(c)
	_, err := h.app.Commands.CreateIntegration.Handle(c.Request.Context(), workflows.CreateIntegration{
		Draft: integration.Draft{Type: typ, Credentials: creds}})
	if err == nil {
		h.redirect(c, "/app/integrations", integrationLabel(typ)+" connected.")
		return
	}
	b, ok := h.invalid(c, err)
	if !ok {
		return
	}
	d, lerr := h.integrationsData(c)
	if lerr != nil {
		h.fail(c, lerr)
		return
	}
	known := map[string]string{}
	for _, det := range b.Details {
		if k, ok := strings.CutPrefix(det.Field, "credentials."); ok {
			known[det.Field] = typ + "." + k
		}
	}
	v := &view{Title: "Integrations", Data: d}
	v.Errors, v.Error = fieldErrors(b, known)
	h.render(c, b.Status, "integrations", v)
}

func (h *Handler) disconnectConfirm(c *gin.Context) {
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return
	}
	i, err := h.app.Queries.GetIntegration.Handle(c.Request.Context(), workflows.GetIntegration{ID: c.Param("id")})
	if err != nil {
		h.fail(c, err)
		return
	}
	if i == nil {
		h.fail(c, domain.ErrNotFound)
		return
	}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Disconnect " + integrationLabel(i.Type()), Data: confirmData{
		Heading: "Disconnect " + integrationLabel(i.Type()) + "?",
		Paragraphs: []string{"The stored credentials are deleted. Workflow actions that post through this integration fail from their next run on, " +
			"until you connect it again."},
		Action: "/app/integrations/" + i.ID() + "/disconnect", Button: "Disconnect", Cancel: "/app/integrations", Danger: true}})
}

func (h *Handler) disconnectIntegration(c *gin.Context) {
	if err := h.app.Commands.DeleteIntegration.Handle(c.Request.Context(), workflows.DeleteIntegration{
		ID: c.Param("id")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/integrations", "Integration disconnected.")
}
