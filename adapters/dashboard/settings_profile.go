package dashboard

import (
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
)

// Profile: the signed-in person's name, password, two-step verification and sessions. It
// is reached with no workspace too.

// mountProfile adds the profile page to the signed-in routes.
func (h *Handler) mountProfile(a *gin.RouterGroup) {
	a.GET("/settings/profile", h.profile)
	a.POST("/settings/profile/password", h.changePassword)
	a.POST("/settings/profile/name", h.updateName)
	a.POST("/settings/profile/time-zone", h.updateTimeZone)
	a.POST("/settings/profile/two-factor", h.beginTwoFactor)
	a.GET("/settings/profile/two-factor", h.twoFactorSetup)
	a.POST("/settings/profile/two-factor/confirm", h.confirmTwoFactor)
	a.POST("/settings/profile/two-factor/disable", h.disableTwoFactor)
	a.POST("/settings/profile/sign-out-everywhere", h.signOutEverywhere)
}

type twoFactorSetup struct {
	Secret string
	// QR is a data: URL of a PNG this package drew.
	QR template.URL
}

type profileData struct {
	Name, Email  string
	Since        time.Time
	TwoFactor    bool
	RecoveryLeft int
	Setup        *twoFactorSetup
	// RecoveryCodes are shown once, from their flash; CodesShownOnce says so on a reload.
	RecoveryCodes  []string
	CodesShownOnce bool
	// TimeZone is the zone the person chose ("" for none: the workspace's WorkspaceZone
	// applies); Zones are the choices, and ZoneChoice the one selected (what a failed post sent).
	TimeZone, WorkspaceZone, ZoneChoice string
	Zones                               []selectOption
}

const twoFactorCookie = "formward_2fa_setup"

func (h *Handler) profileData(c *gin.Context) profileData {
	sp, _ := sessionOf(c)
	d := profileData{}
	if u := sp.User; u != nil {
		d.Name, d.Email, d.Since, d.TwoFactor, d.RecoveryLeft = u.Name(), u.Email(), u.CreatedAt(), u.TwoFactorEnabled(), u.RecoveryCodesLeft()
		d.TimeZone = u.TimeZone()
	}
	d.WorkspaceZone = workspaceZone(sp)
	d.ZoneChoice, d.Zones = d.TimeZone, h.zoneOptions(d.TimeZone)
	return d
}

func (h *Handler) profile(c *gin.Context) {
	var codes []string
	once, err := h.takeOnce(c, onceRecoveryCodes, &codes)
	if err != nil {
		h.fail(c, err)
		return
	}
	d := h.profileData(c)
	switch once {
	case onceShown:
		d.RecoveryCodes = codes
	case onceGone:
		d.CodesShownOnce = true
	}
	h.render(c, http.StatusOK, "profile", &view{Title: "Profile", Data: d})
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
	h.redirect(c, "/app/settings/profile/two-factor", "")
}

// twoFactorSetup draws the pending setup (its QR code and secret, from the sealed cookie the
// post left) until it is confirmed or cancelled; without one it goes back to the profile.
func (h *Handler) twoFactorSetup(c *gin.Context) {
	raw, _ := c.Cookie(twoFactorCookie)
	var st accounts.TwoFactorSetup
	if raw == "" || h.cookies.open(twoFactorCookie, raw, h.now(), &st) != nil {
		h.redirect(c, "/app/settings/profile", "")
		return
	}
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
	const notice = "Two-step verification is on."
	if h.showOnce(c, "/app/settings/profile", onceRecoveryCodes, notice, []string(codes)) {
		return
	}
	d := h.profileData(c)
	d.TwoFactor, d.RecoveryCodes, d.RecoveryLeft = true, codes, len(codes)
	h.renderSecret(c, "profile", &view{Title: "Profile", Flash: notice, Data: d})
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
