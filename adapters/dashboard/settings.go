package dashboard

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"rsc.io/qr"

	"github.com/formward/formward/application/accounts"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

func (h *Handler) switchWorkspace(c *gin.Context) {
	id := c.PostForm("workspace_id")
	if err := h.app.Commands.SwitchWorkspace.Handle(c.Request.Context(), accounts.SwitchWorkspace{WorkspaceID: id}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/forms", "")
}

// ---- API keys

type keyRow struct {
	ID, Name, Prefix, Scope, CreatedBy string
	Created                            time.Time
	LastUsed                           *time.Time
}

type createdKey struct{ Name, Token string }

type keysData struct {
	Keys    []keyRow
	Created *createdKey
	Pager   pager
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

func actorName(a audit.Actor) string {
	switch {
	case a.Name != "":
		return a.Name
	case a.Type == audit.ActorSystem:
		return "Formward (command line)"
	}
	return a.ID
}

func (h *Handler) keys(c *gin.Context) {
	d, err := h.keysData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "keys", &view{Title: "API keys", Data: d})
}

func (h *Handler) createKey(c *gin.Context) {
	name, scope := strings.TrimSpace(c.PostForm("name")), c.PostForm("scope")
	created, err := h.app.Commands.CreateAPIKey.Handle(c.Request.Context(), accounts.CreateAPIKey{Name: name, Scope: scope})
	if err != nil {
		b := problem(err)
		if b.Status != http.StatusUnprocessableEntity {
			h.fail(c, err)
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
	d, err := h.keysData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Created = &createdKey{Name: created.Key.Name(), Token: created.Token}
	noStore(c)
	h.render(c, http.StatusCreated, "keys", &view{Title: "API keys", Flash: "Key created.", Data: d})
}

// confirmData is a confirmation page: what will happen, and the button that does it.
type confirmData struct {
	Heading, Action, Button, Cancel string
	Paragraphs                      []string
	Danger                          bool
	Hidden                          []hiddenInput
}

type hiddenInput struct{ Name, Value string }

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

// ---- Members and invitations

type roleOption struct {
	Value, Label string
	Selected     bool
}

type roleSelect struct {
	ID      string
	Error   bool
	Options []roleOption
}

func rolesFor(id string, current member.Role, owners bool) roleSelect {
	s := roleSelect{ID: id}
	for _, r := range []member.Role{member.RoleViewer, member.RoleEditor, member.RoleAdmin, member.RoleOwner} {
		if r == member.RoleOwner && !owners && current != member.RoleOwner {
			continue
		}
		s.Options = append(s.Options, roleOption{Value: string(r), Label: roleLabel(r), Selected: r == current})
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
	Pager       pager
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
	d, err := h.membersData(c, nil, "")
	if err != nil {
		h.fail(c, err)
		return
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
	d, err := h.membersData(c, nil, "")
	if err != nil {
		h.fail(c, err)
		return
	}
	inv := created.Invitation
	d.Invited = &invitedView{Email: inv.Email(), URL: created.AcceptURL, Expires: inv.ExpiresAt()}
	noStore(c)
	h.render(c, http.StatusCreated, "members", &view{Title: "Members", Flash: "Invitation created for " + inv.Email() + ".", Data: d})
}

func (h *Handler) withdrawInvitation(c *gin.Context) {
	if err := h.app.Commands.WithdrawInvitation.Handle(c.Request.Context(), accounts.WithdrawInvitation{ID: c.Param("id")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/settings/members", "Invitation withdrawn.")
}

// ---- Billing

type planOption struct {
	Value, Label string
	Selected     bool
}

type usageStat struct {
	Label, Value, Limit string
	Limited             bool
	Percent, Width      int
}

type billingData struct {
	Plan, PlanLabel, Status, Retention, StorageLimit string
	Cancelled                                        bool
	DeletionAt                                       *time.Time
	Plans                                            []planOption
	Usage                                            []usageStat
}

var planLabels = map[workspace.Plan]string{workspace.PlanFree: "Free", workspace.PlanStarter: "Starter", workspace.PlanGrowth: "Growth", workspace.PlanBusiness: "Business"}

func (h *Handler) billingData(c *gin.Context) (billingData, map[string]string, error) {
	wv, err := h.app.Queries.GetWorkspace.Handle(c.Request.Context(), workspaceapp.GetWorkspace{})
	if err != nil {
		return billingData{}, nil, err
	}
	w, u := wv.Workspace, wv.Usage
	d := billingData{Plan: string(w.Plan()), PlanLabel: planLabels[w.Plan()], Status: string(w.Status()),
		Cancelled: w.Status() == workspace.StatusCancelled, DeletionAt: w.DataDeletionAt()}
	for _, p := range []workspace.Plan{workspace.PlanFree, workspace.PlanStarter, workspace.PlanGrowth, workspace.PlanBusiness} {
		d.Plans = append(d.Plans, planOption{Value: string(p), Label: planLabels[p] + " — " + retentionText(p) + ", " + storageText(p) + " files per form", Selected: p == w.Plan()})
	}
	d.Retention = retentionText(w.Plan())
	d.StorageLimit = storageText(w.Plan())
	d.Usage = []usageStat{
		{Label: "Forms", Value: count(u.Forms), Limit: "No limit on this plan"},
		submissionsUsage(w.Plan(), u),
		storageUsage(w.Plan(), u.StorageBytes),
		{Label: "Members", Value: count(u.Members), Limit: "No limit on this plan"},
	}
	return d, map[string]string{"billing_email": w.BillingEmail()}, nil
}

func retentionText(p workspace.Plan) string {
	r := p.Retention()
	switch {
	case r.Keep > 0:
		return fmt.Sprintf("keeps the %d most recent submissions of each form", r.Keep)
	case r.MaxAge > 0:
		return fmt.Sprintf("keeps submissions %d months", int(r.MaxAge.Hours()/24/365*12+0.5))
	}
	return "keeps every submission"
}

func storageText(p workspace.Plan) string {
	limit, ok := workspace.StorageLimit(p)
	if !ok {
		return "unlimited"
	}
	return bytesText(limit)
}

func submissionsUsage(p workspace.Plan, u workspace.Usage) usageStat {
	s := usageStat{Label: "Submissions", Value: count(u.Submissions), Limit: "Kept: " + retentionText(p)}
	if keep := p.Retention().Keep; keep > 0 && u.Forms > 0 {
		return meter(s, u.Submissions, int64(keep)*u.Forms, fmt.Sprintf("%d (%d per form × %d forms)", int64(keep)*u.Forms, keep, u.Forms))
	}
	return s
}

func storageUsage(p workspace.Plan, used int64) usageStat {
	s := usageStat{Label: "File storage (all forms)", Value: bytesText(used), Limit: "No storage limit on this plan"}
	if limit, ok := workspace.StorageLimit(p); ok {
		return meter(s, used, limit, bytesText(limit)+" per form")
	}
	return s
}

func meter(s usageStat, used, limit int64, limitText string) usageStat {
	s.Limited, s.Limit = true, limitText
	if limit > 0 {
		s.Percent = int(used * 100 / limit)
	}
	s.Width = min(s.Percent, 100)
	return s
}

func count(n int64) string {
	str := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range str {
		if i > 0 && (len(str)-i)%3 == 0 {
			b.WriteRune(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return trimZero(float64(n)/(1<<30)) + " GB"
	case n >= 1<<20:
		return trimZero(float64(n)/(1<<20)) + " MB"
	case n >= 1<<10:
		return trimZero(float64(n)/(1<<10)) + " KB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(f float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f), "0"), ".")
}

func (h *Handler) billing(c *gin.Context) {
	d, form, err := h.billingData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "billing", &view{Title: "Billing", Data: d, Form: form})
}

func (h *Handler) updateBilling(c *gin.Context) {
	var s workspace.Settings
	notice := "Billing contact saved."
	switch c.PostForm("section") {
	case "plan":
		plan := c.PostForm("plan")
		s.Plan = &plan
		notice = "Plan changed to " + planLabels[workspace.Plan(plan)] + "."
	default:
		email := strings.TrimSpace(c.PostForm("billing_email"))
		s.BillingEmail = &email
	}
	h.updateWorkspace(c, s, notice)
}

func (h *Handler) updateWorkspace(c *gin.Context, s workspace.Settings, notice string) {
	_, err := h.app.Commands.UpdateWorkspace.Handle(c.Request.Context(), workspaceapp.UpdateWorkspace{Settings: s})
	if err != nil {
		b := problem(err)
		if b.Status != http.StatusUnprocessableEntity {
			h.fail(c, err)
			return
		}
		d, form, lerr := h.billingData(c)
		if lerr != nil {
			h.fail(c, lerr)
			return
		}
		if s.BillingEmail != nil {
			form["billing_email"] = *s.BillingEmail
		}
		v := &view{Title: "Billing", Data: d, Form: form}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"plan": "plan", "billing_email": "billing_email"})
		h.render(c, b.Status, "billing", v)
		return
	}
	h.redirect(c, "/app/settings/billing", notice)
}

func (h *Handler) cancelConfirm(c *gin.Context) {
	if err := principal(c).Require(access.ManageAccount); err != nil {
		h.fail(c, err)
		return
	}
	deletion := h.now().Add(workspace.GracePeriod).UTC().Format("2 January 2006")
	h.render(c, http.StatusOK, "confirm", &view{Title: "Cancel workspace", Data: confirmData{
		Heading: "Cancel this workspace?",
		Paragraphs: []string{"Forms stop being managed through this workspace's plan, and all its data — forms, submissions, files, workflows and webhooks — will be deleted on " + deletion + ", 90 days from now.",
			"You can reactivate the workspace any time before then to keep everything."},
		Action: "/app/settings/billing/cancel", Button: "Cancel workspace", Cancel: "/app/settings/billing", Danger: true}})
}

func (h *Handler) cancel(c *gin.Context) {
	status := string(workspace.StatusCancelled)
	h.updateWorkspace(c, workspace.Settings{Status: &status}, "The workspace is cancelled.")
}

func (h *Handler) reactivate(c *gin.Context) {
	status := string(workspace.StatusActive)
	h.updateWorkspace(c, workspace.Settings{Status: &status}, "The workspace is active again.")
}

// ---- Audit log

type auditRow struct {
	Action, Class, Actor, ActorType, Target, Details string
	At                                               time.Time
}

type auditData struct {
	Action  string
	Actions []string
	Events  []auditRow
	Pager   pager
}

var auditActions = []audit.Action{audit.APIKeyCreated, audit.APIKeyRevoked, audit.MemberInvited, audit.InvitationWithdrawn, audit.MemberJoined,
	audit.MemberRoleChanged, audit.MemberRemoved, audit.WorkspaceUpdated, audit.UserSignedIn, audit.UserSignInFailed, audit.UserPasswordChanged,
	audit.UserTwoFactorOn, audit.UserTwoFactorOff, audit.FormDeleted, audit.SubmissionDeleted, audit.SubmissionsExported, audit.RetentionDeleted,
	audit.PrivacyExported, audit.PrivacyErased}

func (h *Handler) audit(c *gin.Context) {
	action := c.Query("action")
	d := auditData{Action: action}
	for _, a := range auditActions {
		d.Actions = append(d.Actions, string(a))
	}
	sort.Strings(d.Actions)
	events, more, err := h.app.Queries.ListAuditEvents.Handle(c.Request.Context(), workspaceapp.ListAuditEvents{Action: action, Page: pageOf(c)})
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, e := range events {
		row := auditRow{Action: string(e.Action), Actor: actorName(e.Actor), ActorType: strings.ReplaceAll(e.Actor.Type, "_", " "), At: e.CreatedAt, Details: details(e.Details)}
		if e.Target != nil {
			row.Target = e.Target.Type + " " + e.Target.ID
		}
		switch {
		case strings.HasSuffix(row.Action, "failed"), strings.Contains(row.Action, "deleted"), strings.Contains(row.Action, "revoked"), strings.Contains(row.Action, "removed"), strings.Contains(row.Action, "erased"):
			row.Class = "badge-red"
		case strings.HasSuffix(row.Action, "created"), strings.HasSuffix(row.Action, "joined"), strings.HasSuffix(row.Action, "signed_in"):
			row.Class = "badge-green"
		default:
			row.Class = "badge-blue"
		}
		d.Events = append(d.Events, row)
	}
	if n := len(events); n > 0 {
		d.Pager = pagerFor(c, more, events[n-1].CreatedAt, events[n-1].ID)
	}
	h.render(c, http.StatusOK, "audit", &view{Title: "Audit log", Data: d})
}

// details shows an event's details as "key: value" pairs, in a stable order.
func details(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := m[k]
		if inner, ok := v.(map[string]any); ok {
			v = "(" + details(inner) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s: %v", strings.ReplaceAll(k, "_", " "), v))
	}
	return strings.Join(parts, "; ")
}

// ---- Profile

type twoFactorSetup struct {
	Secret string
	// QR is a data: URL of a PNG this package drew.
	QR template.URL
}

type profileData struct {
	Name, Email   string
	Since         time.Time
	TwoFactor     bool
	RecoveryLeft  int
	Setup         *twoFactorSetup
	RecoveryCodes []string
}

const twoFactorCookie = "formward_2fa_setup"

func (h *Handler) profileData(c *gin.Context) profileData {
	sp, _ := sessionOf(c)
	d := profileData{}
	if u := sp.User; u != nil {
		d.Name, d.Email, d.Since, d.TwoFactor, d.RecoveryLeft = u.Name(), u.Email(), u.CreatedAt(), u.TwoFactorEnabled(), u.RecoveryCodesLeft()
	}
	return d
}

func (h *Handler) profile(c *gin.Context) {
	h.render(c, http.StatusOK, "profile", &view{Title: "Profile", Data: h.profileData(c)})
}

func (h *Handler) changePassword(c *gin.Context) {
	err := h.app.Commands.ChangePassword.Handle(c.Request.Context(), accounts.ChangePassword{Current: c.PostForm("current"), New: c.PostForm("new")})
	if err != nil {
		v := &view{Title: "Profile", Data: h.profileData(c)}
		b := problem(err)
		switch {
		case errors.Is(err, accounts.ErrInvalidCredentials):
			v.Errors = map[string]string{"current": "That is not your current password."}
			h.render(c, http.StatusUnprocessableEntity, "profile", v)
		case b.Status == http.StatusUnprocessableEntity:
			v.Errors, v.Error = fieldErrors(b, map[string]string{"password": "new", "new": "new", "current": "current"})
			h.render(c, b.Status, "profile", v)
		default:
			h.fail(c, err)
		}
		return
	}
	h.redirect(c, "/app/settings/profile", "Password changed. Your other sessions are signed out.")
}

func qrDataURL(text string) (string, error) {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return "", err
	}
	// Drawn here, module by module, with the standard quiet zone of four modules.
	const scale, quiet = 5, 4
	n := (code.Size + 2*quiet) * scale
	img := image.NewGray(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			mx, my := x/scale-quiet, y/scale-quiet
			shade := color.Gray{Y: 255}
			if mx >= 0 && my >= 0 && mx < code.Size && my < code.Size && code.Black(mx, my) {
				shade = color.Gray{Y: 0}
			}
			img.SetGray(x, y, shade)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

func (h *Handler) beginTwoFactor(c *gin.Context) {
	st, err := h.app.Commands.BeginTwoFactor.Handle(c.Request.Context(), accounts.BeginTwoFactor{})
	if err != nil {
		h.fail(c, err)
		return
	}
	sealed, err := h.cookies.seal(twoFactorCookie, st, h.now().Add(oidcTTL))
	if err != nil {
		h.fail(c, err)
		return
	}
	h.setCookie(c, twoFactorCookie, sealed, oidcTTL)
	h.renderSetup(c, http.StatusOK, st, nil)
}

func (h *Handler) renderSetup(c *gin.Context, status int, st accounts.TwoFactorSetup, errs map[string]string) {
	img, err := qrDataURL(st.URL)
	if err != nil {
		h.fail(c, err)
		return
	}
	d := h.profileData(c)
	d.Setup = &twoFactorSetup{Secret: st.Secret, QR: template.URL(img)}
	noStore(c)
	h.render(c, status, "profile", &view{Title: "Profile", Data: d, Errors: errs})
}

func (h *Handler) confirmTwoFactor(c *gin.Context) {
	codes, err := h.app.Commands.ConfirmTwoFactor.Handle(c.Request.Context(), accounts.ConfirmTwoFactor{Code: strings.ReplaceAll(strings.TrimSpace(c.PostForm("code")), " ", "")})
	if err != nil {
		b := problem(err)
		raw, _ := c.Cookie(twoFactorCookie)
		var st accounts.TwoFactorSetup
		if (b.Status == http.StatusUnprocessableEntity || errors.Is(err, accounts.ErrInvalidCredentials)) && h.cookies.open(twoFactorCookie, raw, h.now(), &st) == nil {
			h.renderSetup(c, http.StatusUnprocessableEntity, st, map[string]string{"code": "That code is not valid. Enter the code your app shows now."})
			return
		}
		h.fail(c, err)
		return
	}
	h.clearCookie(c, twoFactorCookie)
	d := h.profileData(c)
	d.TwoFactor, d.RecoveryCodes, d.RecoveryLeft = true, codes, len(codes)
	noStore(c)
	h.render(c, http.StatusOK, "profile", &view{Title: "Profile", Flash: "Two-step verification is on.", Data: d})
}

func (h *Handler) disableTwoFactor(c *gin.Context) {
	err := h.app.Commands.DisableTwoFactor.Handle(c.Request.Context(), accounts.DisableTwoFactor{Password: c.PostForm("disable_password")})
	if err != nil {
		b := problem(err)
		if errors.Is(err, accounts.ErrInvalidCredentials) || b.Status == http.StatusUnprocessableEntity {
			h.render(c, http.StatusUnprocessableEntity, "profile", &view{Title: "Profile", Data: h.profileData(c),
				Errors: map[string]string{"disable_password": "That is not your password."}})
			return
		}
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/settings/profile", "Two-step verification is off.")
}

func (h *Handler) signOutEverywhere(c *gin.Context) {
	if err := h.app.Commands.SignOutEverywhere.Handle(c.Request.Context(), accounts.SignOutEverywhere{}); err != nil {
		h.fail(c, err)
		return
	}
	h.clearCookie(c, SessionCookie)
	h.redirect(c, "/app/login", "You are signed out everywhere.")
}
