package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

var (
	memberProps    = []string{"role"}
	memberReadOnly = []string{"id", "user", "created_at"}
)

type memberUserJSON struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

type memberJSON struct {
	ID        string         `json:"id"`
	User      memberUserJSON `json:"user"`
	Role      string         `json:"role"`
	CreatedAt string         `json:"created_at"`
}

func presentMember(m ports.Member) memberJSON {
	return memberJSON{ID: m.Membership.ID(), User: memberUserJSON{ID: m.User.ID(), Email: m.User.Email(), Name: m.User.Name()},
		Role: string(m.Membership.Role()), CreatedAt: domain.FormatTime(m.Membership.CreatedAt())}
}

func (a *api) listMembers(c *gin.Context) {
	list := "members:" + principal(c).WorkspaceID
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]ports.Member, bool, error) {
		return a.App.Queries.ListMembers.Handle(ctx, accounts.ListMembers{Page: page})
	}, func(m ports.Member) (any, ports.Position) {
		return presentMember(m), ports.Position{CreatedAt: m.Membership.CreatedAt(), ID: m.Membership.ID()}
	})
}

func (a *api) updateMember(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, memberProps, memberReadOnly)
	if !ok {
		return
	}
	role, present := o.str("role")
	if !present {
		vs.Add("role", "required", "role is required: owner, admin, editor or viewer")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	m, err := a.App.Commands.ChangeMemberRole.Handle(c.Request.Context(), accounts.ChangeMemberRole{ID: c.Param("id"), Role: role})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentMember(m))
}

func (a *api) removeMember(c *gin.Context) {
	if err := a.App.Commands.RemoveMember.Handle(c.Request.Context(), accounts.RemoveMember{ID: c.Param("id")}); err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}
