package dashboard

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/ports"
)

// Members and invitations: roles, removal, and invitations by email.

// mountMembers adds the members page (and its invitations) to the workspace routes.
func (h *Handler) mountMembers(w *gin.RouterGroup) {
	w.GET("/settings/members", h.members)
	w.POST("/settings/members/:id/role", h.changeRole)
	w.GET("/settings/members/:id/remove", h.removeMemberConfirm)
	w.POST("/settings/members/:id/remove", h.removeMember)
	w.POST("/settings/invitations", h.invite)
	w.POST("/settings/invitations/:id/withdraw", h.withdrawInvitation)
}

type roleSelect struct {
	ID      string
	Error   bool
	Options []selectOption
}

func rolesFor(id string, current member.Role, owners bool) roleSelect {
	s := roleSelect{ID: id}
	for _, r := range []member.Role{member.RoleViewer, member.RoleEditor, member.RoleAdmin, member.RoleOwner} {
		if r == member.RoleOwner && !owners && current != member.RoleOwner {
			continue
		}
		s.Options = append(s.Options, selectOption{Value: string(r), Label: roleLabel(r), Selected: r == current})
	}
	return s
}

type memberRow struct {
	ID, Name, Email, Role, Error string
	Joined                       time.Time
	You, Editable, Removable     bool
	RoleSelect                   roleSelect
}

type invitationRow struct {
	ID, Email, Role  string
	Created, Expires time.Time
}

// invitedView is a new invitation's link, shown once from its flash.
type invitedView struct {
	Email, URL string
	Expires    time.Time
	Emailed    bool
}

type membersData struct {
	Members     []memberRow
	Invitations []invitationRow
	InviteRoles roleSelect
	Invited     *invitedView
	// InviteShownOnce: the page was reloaded after showing an invitation link, which is not
	// shown again.
	InviteShownOnce bool
	Pager           pager
}

// membersData reads the members (and, for those who manage the account, the invitations);
// rowErrors puts a message next to one member's controls.
func (h *Handler) membersData(c *gin.Context, rowErrors map[string]string, inviteRole member.Role) (membersData, error) {
	p := principal(c)
	ctx := c.Request.Context()
	members, more, err := h.app.Queries.ListMembers.Handle(ctx, accounts.ListMembers{Page: pageOf(c)})
	if err != nil {
		return membersData{}, err
	}
	manage, owners := p.Allows(access.ManageAccount), p.Allows(access.ManageOwners)
	if inviteRole == "" {
		inviteRole = member.RoleEditor
	}
	d := membersData{InviteRoles: rolesFor("invite-role", inviteRole, owners)}
	for _, m := range members {
		if m.Membership == nil || m.User == nil {
			continue
		}
		role := m.Membership.Role()
		editable := manage && (role != member.RoleOwner || owners)
		row := memberRow{ID: m.Membership.ID(), Name: m.User.Name(), Email: m.User.Email(), Role: roleLabel(role), Joined: m.Membership.CreatedAt(),
			You: m.User.ID() == p.Actor.ID, Editable: editable, Removable: editable, Error: rowErrors[m.Membership.ID()]}
		if row.Name == "" {
			row.Name = row.Email
		}
		row.RoleSelect = rolesFor("role-"+row.ID, role, owners)
		row.RoleSelect.Error = row.Error != ""
		d.Members = append(d.Members, row)
	}
	if n := len(members); n > 0 && members[n-1].Membership != nil {
		d.Pager = pagerFor(c, more, members[n-1].Membership.CreatedAt(), members[n-1].Membership.ID())
	}
	if manage {
		invs, _, err := h.app.Queries.ListInvitations.Handle(ctx, accounts.ListInvitations{Page: ports.Page{Limit: 100}})
		if err != nil {
			return membersData{}, err
		}
		for _, inv := range invs {
			d.Invitations = append(d.Invitations, invitationRow{ID: inv.ID(), Email: inv.Email(), Role: roleLabel(inv.Role()),
				Created: inv.CreatedAt(), Expires: inv.ExpiresAt()})
		}
	}
	return d, nil
}

func (h *Handler) members(c *gin.Context) {
	// The page's data first: a page that cannot be drawn leaves the flash for a retry.
	d, err := h.membersData(c, nil, "")
	if err != nil {
		h.fail(c, err)
		return
	}
	var invited invitedView
	once, err := h.takeOnce(c, onceInvitation, &invited)
	if err != nil {
		h.fail(c, err)
		return
	}
	switch once {
	case onceShown:
		d.Invited = &invited
	case onceGone:
		d.InviteShownOnce = true
	}
	h.render(c, http.StatusOK, "members", &view{Title: "Members", Data: d})
}

func (h *Handler) changeRole(c *gin.Context) {
	id := c.Param("id")
	role := member.Role(c.PostForm("role"))
	_, err := h.app.Commands.ChangeMemberRole.Handle(c.Request.Context(), accounts.ChangeMemberRole{ID: id, Role: string(role)})
	if err != nil {
		b := problem(err)
		if b.Status == http.StatusNotFound || b.Status >= 500 {
			h.fail(c, err)
			return
		}
		d, lerr := h.membersData(c, map[string]string{id: friendly(b)}, "")
		if lerr != nil {
			h.fail(c, lerr)
			return
		}
		h.render(c, b.Status, "members", &view{Title: "Members", Data: d})
		return
	}
	h.redirect(c, "/app/settings/members", "Role changed.")
}

func (h *Handler) findMember(c *gin.Context) (memberRow, bool, error) {
	d, err := h.membersData(c, nil, "")
	if err != nil {
		return memberRow{}, false, err
	}
	for _, m := range d.Members {
		if m.ID == c.Param("id") {
			return m, true, nil
		}
	}
	return memberRow{}, false, nil
}

func (h *Handler) removeMemberConfirm(c *gin.Context) {
	if err := principal(c).Require(access.ManageAccount); err != nil {
		h.fail(c, err)
		return
	}
	m, ok, err := h.findMember(c)
	if err != nil || !ok {
		h.fail(c, errors.Join(err, domain.ErrNotFound))
		return
	}
	what := "They lose access to this workspace at once and are signed out of it."
	if m.You {
		what = "You lose access to this workspace at once."
	}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Remove member", Data: confirmData{
		Heading: "Remove " + m.Name + " (" + m.Email + ")?", Paragraphs: []string{what, "You can invite them again later."},
		Action: "/app/settings/members/" + m.ID + "/remove", Button: "Remove member", Cancel: "/app/settings/members", Danger: true}})
}

func (h *Handler) removeMember(c *gin.Context) {
	id := c.Param("id")
	if err := h.app.Commands.RemoveMember.Handle(c.Request.Context(), accounts.RemoveMember{ID: id}); err != nil {
		b := problem(err)
		if b.Status == http.StatusConflict || b.Status == http.StatusForbidden {
			d, lerr := h.membersData(c, map[string]string{id: friendly(b)}, "")
			if lerr == nil {
				h.render(c, b.Status, "members", &view{Title: "Members", Error: friendly(b), Data: d})
				return
			}
		}
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/settings/members", "Member removed.")
}

func (h *Handler) invite(c *gin.Context) {
	email, role := strings.TrimSpace(c.PostForm("email")), member.Role(c.PostForm("role"))
	created, err := h.app.Commands.InviteMember.Handle(c.Request.Context(), accounts.InviteMember{Email: email, Role: string(role)})
	if err != nil {
		b := problem(err)
		if b.Status != http.StatusUnprocessableEntity && b.Status != http.StatusConflict {
			h.fail(c, err)
			return
		}
		d, lerr := h.membersData(c, nil, role)
		if lerr != nil {
			h.fail(c, lerr)
			return
		}
		v := &view{Title: "Members", Data: d, Form: map[string]string{"email": email}}
		if b.Status == http.StatusConflict {
			v.Errors = map[string]string{"email": friendly(b)}
		} else {
			v.Errors, v.Error = fieldErrors(b, map[string]string{"email": "email", "role": "role"})
		}
		h.render(c, b.Status, "members", v)
		return
	}
	inv := created.Invitation
	invited := invitedView{Email: inv.Email(), URL: created.AcceptURL, Expires: inv.ExpiresAt(), Emailed: created.Emailed}
	notice := "Invitation created for " + inv.Email() + "."
	if h.showOnce(c, "/app/settings/members", onceInvitation, notice, invited) {
		return
	}
	d, err := h.membersData(c, nil, "")
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Invited = &invited
	h.renderSecret(c, "members", &view{Title: "Members", Flash: notice, Data: d})
}

func (h *Handler) withdrawInvitation(c *gin.Context) {
	if err := h.app.Commands.WithdrawInvitation.Handle(c.Request.Context(), accounts.WithdrawInvitation{ID: c.Param("id")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/settings/members", "Invitation withdrawn.")
}
