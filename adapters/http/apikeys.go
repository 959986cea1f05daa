package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

var (
	apiKeyProps    = []string{"name", "scope"}
	apiKeyReadOnly = []string{"id", "prefix", "created_at", "last_used_at", "created_by"}
)

type actorJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

func presentActor(a audit.Actor) actorJSON { return actorJSON{Type: a.Type, ID: a.ID, Name: a.Name} }

type apiKeyJSON struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Scope      string    `json:"scope"`
	Prefix     string    `json:"prefix"`
	CreatedAt  string    `json:"created_at"`
	LastUsedAt *string   `json:"last_used_at"`
	CreatedBy  actorJSON `json:"created_by"`
	// Key is the full key, present only in the answer that creates it.
	Key string `json:"key,omitempty"`
}

// presentAPIKey shows a key by its prefix; the secret is never stored, so never shown again.
func presentAPIKey(k *apikey.Key) apiKeyJSON {
	return apiKeyJSON{ID: k.ID(), Name: k.Name(), Scope: string(k.Scope()), Prefix: k.Prefix(),
		CreatedAt: domain.FormatTime(k.CreatedAt()), LastUsedAt: optionalTime(k.LastUsedAt()), CreatedBy: presentActor(k.CreatedBy())}
}

func (a *api) listAPIKeys(c *gin.Context) {
	list := "api-keys:" + principal(c).WorkspaceID
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*apikey.Key, bool, error) {
		return a.App.Queries.ListAPIKeys.Handle(ctx, accounts.ListAPIKeys{Page: page})
	}, func(k *apikey.Key) (any, ports.Position) {
		return presentAPIKey(k), ports.Position{CreatedAt: k.CreatedAt(), ID: k.ID()}
	})
}

func (a *api) createAPIKey(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, apiKeyProps, apiKeyReadOnly)
	if !ok {
		return
	}
	var cmd accounts.CreateAPIKey
	var present bool
	if cmd.Name, present = o.str("name"); !present {
		vs.Add("name", "required", "name is required")
	}
	if cmd.Scope, present = o.str("scope"); !present {
		vs.Add("scope", "required", "scope is required: admin, read-write or read-only")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	created, err := a.App.Commands.CreateAPIKey.Handle(c.Request.Context(), cmd)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	out := presentAPIKey(created.Key)
	out.Key = created.Token
	c.JSON(http.StatusCreated, out)
}

func (a *api) revokeAPIKey(c *gin.Context) {
	if err := a.App.Commands.RevokeAPIKey.Handle(c.Request.Context(), accounts.RevokeAPIKey{ID: c.Param("id")}); err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}
