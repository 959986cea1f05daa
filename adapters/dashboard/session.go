package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/member"
)

const sessionKey = "dashboard.session"

// authenticate resolves the session cookie to the signed-in member and puts the principal in
// the request's context for the use cases. Without a valid session the browser goes to the
// sign-in page, and comes back afterwards.
func (h *Handler) authenticate(c *gin.Context) {
	token, err := c.Cookie(SessionCookie)
	if err != nil || token == "" {
		h.toLogin(c)
		return
	}
	sp, err := h.app.Queries.AuthenticateSession.Handle(c.Request.Context(), accounts.AuthenticateSession{Token: token, IP: h.clientIP(c.Request)})
	if errors.Is(err, auth.ErrUnauthenticated) {
		h.clearCookie(c, SessionCookie)
		h.toLogin(c)
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Set(sessionKey, sp)
	c.Request = c.Request.WithContext(auth.WithPrincipal(c.Request.Context(), sp.Principal))
	c.Next()
}

func (h *Handler) toLogin(c *gin.Context) {
	target := "/app/login"
	if c.Request.Method == http.MethodGet && c.Request.URL.Path != "/app" {
		target += "?next=" + url.QueryEscape(c.Request.URL.RequestURI())
	}
	c.Redirect(http.StatusSeeOther, target)
	c.Abort()
}

// requireWorkspace sends a member whose memberships all ended to the "no workspace" page.
func (h *Handler) requireWorkspace(c *gin.Context) {
	if sp, _ := sessionOf(c); sp.Principal.WorkspaceID == "" {
		c.Redirect(http.StatusSeeOther, "/app/no-workspace")
		c.Abort()
		return
	}
	c.Next()
}

func sessionOf(c *gin.Context) (accounts.SessionPrincipal, bool) {
	v, ok := c.Get(sessionKey)
	if !ok {
		return accounts.SessionPrincipal{}, false
	}
	sp, ok := v.(accounts.SessionPrincipal)
	return sp, ok
}

// principal is who acts in this request (set by authenticate).
func principal(c *gin.Context) auth.Principal {
	sp, _ := sessionOf(c)
	return sp.Principal
}

// safeNext keeps a post-sign-in destination only when it is a path of the dashboard.
func safeNext(next string) string {
	if (next != "/app" && !strings.HasPrefix(next, "/app/") && !strings.HasPrefix(next, "/app?")) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") ||
		strings.HasPrefix(next, "/app/login") || strings.HasPrefix(next, "/app/logout") {
		return "/app"
	}
	if u, err := url.Parse(next); err != nil || u.Host != "" || u.Scheme != "" {
		return "/app"
	}
	return next
}

// shell is the frame around the signed-in pages.
type shell struct {
	UserName, UserEmail, Initials    string
	WorkspaceID, WorkspaceName, Role string
	RoleLabel                        string
	Workspaces                       []workspaceOption
	Nav                              []navSection
	CanWrite, CanManage, CanOwners   bool
}

type workspaceOption struct {
	ID, Name, Role string
	Current        bool
}

type navSection struct {
	ID, Title string
	Items     []navItem
}

type navItem struct {
	Label, Href string
	Current     bool
}

func (h *Handler) shellFor(c *gin.Context, sp accounts.SessionPrincipal) *shell {
	p := sp.Principal
	s := &shell{Role: string(p.Role), RoleLabel: roleLabel(p.Role), WorkspaceID: p.WorkspaceID,
		CanWrite: p.Allows(access.Write), CanManage: p.Allows(access.ManageAccount), CanOwners: p.Allows(access.ManageOwners)}
	if sp.User != nil {
		s.UserName, s.UserEmail = sp.User.Name(), sp.User.Email()
		if s.UserName == "" {
			s.UserName = sp.User.Email()
		}
	}
	s.Initials = initials(s.UserName)
	for _, w := range sp.Workspaces {
		if w.Workspace == nil || w.Membership == nil {
			continue
		}
		cur := w.Workspace.ID() == p.WorkspaceID
		if cur {
			s.WorkspaceName = w.Workspace.Name()
		}
		s.Workspaces = append(s.Workspaces, workspaceOption{ID: w.Workspace.ID(), Name: w.Workspace.Name(), Role: roleLabel(w.Membership.Role()), Current: cur})
	}
	path := c.Request.URL.Path
	item := func(label, href string) navItem {
		return navItem{Label: label, Href: href, Current: path == href || strings.HasPrefix(path, href+"/")}
	}
	s.Nav = []navSection{{ID: "workspace", Title: "Workspace", Items: []navItem{item("Forms", "/app/forms")}}}
	s.Nav[0].Items = append(s.Nav[0].Items, item("Workflows", "/app/workflows"), item("Webhooks", "/app/webhooks"), item("Integrations", "/app/integrations"))
	settings := navSection{ID: "settings", Title: "Settings"}
	if s.CanManage {
		settings.Items = append(settings.Items, item("API keys", "/app/settings/api-keys"), item("Members", "/app/settings/members"),
			item("Billing", "/app/settings/billing"), item("Audit log", "/app/settings/audit-log"),
			item("Privacy requests", "/app/settings/privacy"))
	}
	settings.Items = append(settings.Items, item("Profile", "/app/settings/profile"))
	s.Nav = append(s.Nav, settings)
	return s
}

func roleLabel(r member.Role) string {
	if r == "" {
		return ""
	}
	return strings.ToUpper(string(r[:1])) + string(r[1:])
}

func initials(name string) string {
	var out []rune
	for _, w := range strings.Fields(name) {
		for _, r := range w {
			out = append(out, r)
			break
		}
		if len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return strings.ToUpper(string(out))
}

const flashCookie = "formward_flash"

// flash leaves a short notice for the next page (after a redirect).
func (h *Handler) flash(c *gin.Context, msg string) {
	v, err := h.cookies.seal(flashCookie, msg, h.now().Add(signInTTL))
	if err == nil {
		h.setCookie(c, flashCookie, v, signInTTL)
	}
}

func (h *Handler) takeFlash(c *gin.Context) string {
	raw, err := c.Cookie(flashCookie)
	if err != nil || raw == "" {
		return ""
	}
	h.clearCookie(c, flashCookie)
	var msg string
	if h.cookies.open(flashCookie, raw, h.now(), &msg) != nil {
		return ""
	}
	return msg
}

// redirect answers a successful post: 303 to a page, with a notice.
func (h *Handler) redirect(c *gin.Context, to, notice string) {
	if notice != "" {
		h.flash(c, notice)
	}
	c.Redirect(http.StatusSeeOther, to)
	c.Abort()
}

// switchWorkspace makes another of the person's workspaces the session's current one.
func (h *Handler) switchWorkspace(c *gin.Context) {
	id := c.PostForm("workspace_id")
	if err := h.app.Commands.SwitchWorkspace.Handle(c.Request.Context(), accounts.SwitchWorkspace{WorkspaceID: id}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/forms", "")
}
