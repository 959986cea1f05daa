package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

var (
	webhookProps    = []string{"url", "events", "form_id", "secret", "enabled"}
	webhookReadOnly = []string{"id", "created_at", "updated_at", "secret_set"}
)

func (a *api) listWebhooks(c *gin.Context) {
	p := principal(c)
	list := "webhooks:" + p.WorkspaceID
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*webhook.Webhook, bool, error) {
		return a.App.Queries.ListWebhooks.Handle(ctx, webhooks.ListWebhooks{Page: page})
	}, func(w *webhook.Webhook) (any, ports.Position) {
		return presentWebhook(w), ports.Position{CreatedAt: w.CreatedAt(), ID: w.ID()}
	})
}

func (a *api) createWebhook(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, webhookProps, webhookReadOnly)
	if !ok {
		return
	}
	var d webhook.Draft
	d.URL, _ = o.str("url")
	if !o.has("url") {
		vs.Add("url", "required", "url is required")
	}
	d.Events, _ = o.strings("events")
	if !o.has("events") {
		vs.Add("events", "required", "events is required")
	}
	d.FormID, _ = o.nullableStr("form_id")
	d.Secret, _ = o.nullableStr("secret")
	if en, present := o.boolean("enabled"); present {
		d.Enabled = &en
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	w, err := a.App.Commands.CreateWebhook.Handle(c.Request.Context(), webhooks.CreateWebhook{Draft: d})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusCreated, presentWebhook(w))
}

func (a *api) getWebhook(c *gin.Context) {
	w, err := a.App.Queries.GetWebhook.Handle(c.Request.Context(), webhooks.GetWebhook{ID: c.Param("id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentWebhook(w))
}

func (a *api) updateWebhook(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, webhookProps, webhookReadOnly)
	if !ok {
		return
	}
	var p webhook.Patch
	if u, present := o.str("url"); present {
		p.URL = &u
	}
	if evs, present := o.strings("events"); present {
		p.Events = &evs
	}
	if f, present := o.nullableStr("form_id"); present {
		p.FormID = &f
	}
	if s, present := o.nullableStr("secret"); present {
		p.Secret = &s
	}
	if en, present := o.boolean("enabled"); present {
		p.Enabled = &en
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	w, err := a.App.Commands.UpdateWebhook.Handle(c.Request.Context(), webhooks.UpdateWebhook{ID: c.Param("id"), Patch: p})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentWebhook(w))
}

func (a *api) deleteWebhook(c *gin.Context) {
	if err := a.App.Commands.DeleteWebhook.Handle(c.Request.Context(), webhooks.DeleteWebhook{ID: c.Param("id")}); err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (a *api) listDeliveries(c *gin.Context) {
	p := principal(c)
	list := "deliveries:" + p.WorkspaceID + ":" + c.Param("id")
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*webhook.Delivery, bool, error) {
		return a.App.Queries.ListDeliveries.Handle(ctx, webhooks.ListDeliveries{WebhookID: c.Param("id"), Page: page})
	}, func(d *webhook.Delivery) (any, ports.Position) {
		return presentDelivery(d), ports.Position{CreatedAt: d.CreatedAt(), ID: d.ID()}
	})
}

func (a *api) retryDelivery(c *gin.Context) {
	d, err := a.App.Commands.RetryDelivery.Handle(c.Request.Context(), webhooks.RetryDelivery{
		WebhookID: c.Param("id"), ID: c.Param("delivery_id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentDelivery(d))
}
