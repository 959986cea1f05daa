package httpapi

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/draft"
	"github.com/formward/formward/ports"
)

// draftJSON is a draft as the API shows it: where it stands, never its answers.
type draftJSON struct {
	ID        string `json:"id"`
	Page      int    `json:"page"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	ExpiresAt string `json:"expires_at"`
}

func presentDraft(d *draft.Draft) draftJSON {
	return draftJSON{ID: d.ID(), Page: d.Page(), CreatedAt: domain.FormatTime(d.CreatedAt()), UpdatedAt: domain.FormatTime(d.UpdatedAt()),
		ExpiresAt: domain.FormatTime(d.ExpiresAt())}
}

func (a *api) listDrafts(c *gin.Context) {
	p := principal(c)
	list := "drafts:" + p.WorkspaceID + ":" + c.Param("id")
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*draft.Draft, bool, error) {
		return a.App.Queries.ListDrafts.Handle(ctx, capture.ListDrafts{FormID: c.Param("id"), Page: page})
	}, func(d *draft.Draft) (any, ports.Position) {
		return presentDraft(d), ports.Position{CreatedAt: d.CreatedAt(), ID: d.ID()}
	})
}
