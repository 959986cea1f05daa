package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/invitation"
	"github.com/formward/formward/ports"
)

var (
	invitationProps    = []string{"email", "role"}
	invitationReadOnly = []string{"id", "expires_at", "created_at"}
)

type invitationJSON struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	ExpiresAt string `json:"expires_at"`
	CreatedAt string `json:"created_at"`
	// AcceptURL is present only in the answer that creates the invitation: only the hash of
	// its token is stored.
	AcceptURL string `json:"accept_url,omitempty"`
}

func presentInvitation(i *invitation.Invitation) invitationJSON {
	return invitationJSON{ID: i.ID(), Email: i.Email(), Role: string(i.Role()),
		ExpiresAt: domain.FormatTime(i.ExpiresAt()), CreatedAt: domain.FormatTime(i.CreatedAt())}
}

func (a *api) listInvitations(c *gin.Context) {
	list := "invitations:" + principal(c).WorkspaceID
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*invitation.Invitation, bool, error) {
		return a.App.Queries.ListInvitations.Handle(ctx, accounts.ListInvitations{Page: page})
	}, func(inv *invitation.Invitation) (any, ports.Position) {
		return presentInvitation(inv), ports.Position{CreatedAt: inv.CreatedAt(), ID: inv.ID()}
	})
}

func (a *api) createInvitation(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, invitationProps, invitationReadOnly)
	if !ok {
		return
	}
	var cmd accounts.InviteMember
	var present bool
	if cmd.Email, present = o.str("email"); !present {
		vs.Add("email", "required", "email is required")
	}
	if cmd.Role, present = o.str("role"); !present {
		vs.Add("role", "required", "role is required: owner, admin, editor or viewer")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	created, err := a.App.Commands.InviteMember.Handle(c.Request.Context(), cmd)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	out := presentInvitation(created.Invitation)
	out.AcceptURL = created.AcceptURL
	c.JSON(http.StatusCreated, out)
}

func (a *api) withdrawInvitation(c *gin.Context) {
	if err := a.App.Commands.WithdrawInvitation.Handle(c.Request.Context(), accounts.WithdrawInvitation{ID: c.Param("id")}); err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}
