package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
)

// API keys: the workspace's keys, a new key shown once, and revocation.

// mountKeys adds the API keys page to the workspace routes.
func (h *Handler) mountKeys(w *gin.RouterGroup) {
	w.GET("/settings/api-keys", h.keys)
	w.POST("/settings/api-keys", h.createKey)
	w.GET("/settings/api-keys/:id/revoke", h.revokeKeyConfirm)
	w.POST("/settings/api-keys/:id/revoke", h.revokeKey)
}

type keyRow struct {
	ID, Name, Prefix, Scope, CreatedBy string
	Created                            time.Time
	LastUsed                           *time.Time
}

// createdKey is a new key, shown once from its flash.
type createdKey struct{ Name, Token string }

type keysData struct {
	Keys    []keyRow
	Created *createdKey
	// ShownOnce: the page was reloaded after showing a new key, which is not shown again.
	ShownOnce bool
	Pager     pager
}

func (h *Handler) keysData(c *gin.Context) (keysData, error) {
	keys, more, err := h.app.Queries.ListAPIKeys.Handle(c.Request.Context(), accounts.ListAPIKeys{Page: pageOf(c)})
	if err != nil {
		return keysData{}, err
	}
	d := keysData{}
	for _, k := range keys {
		if !k.Active() {
			continue
		}
		d.Keys = append(d.Keys, keyRow{ID: k.ID(), Name: k.Name(), Prefix: k.Prefix(), Scope: string(k.Scope()),
			CreatedBy: actorName(k.CreatedBy()), Created: k.CreatedAt(), LastUsed: k.LastUsedAt()})
	}
	if n := len(keys); n > 0 {
		d.Pager = pagerFor(c, more, keys[n-1].CreatedAt(), keys[n-1].ID())
	}
	return d, nil
}

func (h *Handler) keys(c *gin.Context) {
	// The page's data first: a page that cannot be drawn leaves the flash for a retry.
	d, err := h.keysData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	var created createdKey
	once, err := h.takeOnce(c, onceAPIKey, &created)
	if err != nil {
		h.fail(c, err)
		return
	}
	switch once {
	case onceShown:
		d.Created = &created
	case onceGone:
		d.ShownOnce = true
	}
	h.render(c, http.StatusOK, "keys", &view{Title: "API keys", Data: d})
}

func (h *Handler) createKey(c *gin.Context) {
	name, scope := strings.TrimSpace(c.PostForm("name")), c.PostForm("scope")
	created, err := h.app.Commands.CreateAPIKey.Handle(c.Request.Context(), accounts.CreateAPIKey{Name: name, Scope: scope})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		d, lerr := h.keysData(c)
		if lerr != nil {
			h.fail(c, lerr)
			return
		}
		v := &view{Title: "API keys", Data: d, Form: map[string]string{"name": name, "scope": scope}}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"name": "name", "scope": "scope"})
		h.render(c, b.Status, "keys", v)
		return
	}
	key := createdKey{Name: created.Key.Name(), Token: created.Token}
	if h.showOnce(c, "/app/settings/api-keys", onceAPIKey, "Key created.", key) {
		return
	}
	d, err := h.keysData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Created = &key
	h.renderSecret(c, "keys", &view{Title: "API keys", Flash: "Key created.", Data: d})
}

func (h *Handler) revokeKeyConfirm(c *gin.Context) {
	if err := principal(c).Require(access.ManageAccount); err != nil {
		h.fail(c, err)
		return
	}
	d, err := h.keysData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, k := range d.Keys {
		if k.ID == c.Param("id") {
			h.render(c, http.StatusOK, "confirm", &view{Title: "Revoke key", Data: confirmData{
				Heading:    "Revoke the key “" + k.Name + "”?",
				Paragraphs: []string{"Programs using the key " + k.Prefix + "… are refused from their next request on. This cannot be undone."},
				Action:     "/app/settings/api-keys/" + k.ID + "/revoke", Button: "Revoke key", Cancel: "/app/settings/api-keys", Danger: true}})
			return
		}
	}
	h.fail(c, domain.ErrNotFound)
}

func (h *Handler) revokeKey(c *gin.Context) {
	if err := h.app.Commands.RevokeAPIKey.Handle(c.Request.Context(), accounts.RevokeAPIKey{ID: c.Param("id")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/settings/api-keys", "Key revoked. It no longer works.")
}
