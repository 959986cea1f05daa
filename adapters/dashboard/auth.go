package dashboard

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/invitation"
)

// badCredentials is the one answer to an unknown email and a wrong password alike.
const badCredentials = "The email or password is not correct."

type loginData struct {
	Next      string
	SSO       bool
	TwoFactor bool
}

// pendingSignIn is what the two-factor step needs from the password step, sealed in a cookie.
type pendingSignIn struct {
	Email    string `json:"e"`
	Password string `json:"p"`
	Next     string `json:"n"`
}

// signedIn reports the current session when the browser has a valid one (signed-out pages
// use it to offer the signed-in path); it does not require one.
func (h *Handler) signedIn(c *gin.Context) (accounts.SessionPrincipal, bool) {
	token, err := c.Cookie(SessionCookie)
	if err != nil || token == "" {
		return accounts.SessionPrincipal{}, false
	}
	sp, err := h.app.Queries.AuthenticateSession.Handle(c.Request.Context(), accounts.AuthenticateSession{Token: token, IP: h.clientIP(c.Request)})
	if err != nil {
		return accounts.SessionPrincipal{}, false
	}
	return sp, true
}

func (h *Handler) loginPage(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if _, ok := h.signedIn(c); ok {
		c.Redirect(http.StatusSeeOther, next)
		return
	}
	h.render(c, http.StatusOK, "login", &view{Title: "Sign in", Data: loginData{Next: next, SSO: h.opts.SSO}})
}

func (h *Handler) login(c *gin.Context) {
	email, password, next := strings.TrimSpace(c.PostForm("email")), c.PostForm("password"), safeNext(c.PostForm("next"))
	v := &view{Title: "Sign in", Form: map[string]string{"email": email}, Data: loginData{Next: next, SSO: h.opts.SSO}}
	if email == "" || password == "" {
		v.Errors = map[string]string{}
		if email == "" {
			v.Errors["email"] = "Enter your email."
		}
		if password == "" {
			v.Errors["password"] = "Enter your password."
		}
		h.render(c, http.StatusUnprocessableEntity, "login", v)
		return
	}
	res, err := h.app.Commands.SignIn.Handle(c.Request.Context(), accounts.SignIn{Email: email, Password: password, IP: h.clientIP(c.Request)})
	if errors.Is(err, accounts.ErrTwoFactorRequired) || (err == nil && res.NeedsTwoFactor && res.Token == "") {
		sealed, serr := h.cookies.seal(signInCookie, pendingSignIn{Email: email, Password: password, Next: next}, h.now().Add(signInTTL))
		if serr != nil {
			h.fail(c, serr)
			return
		}
		h.setCookie(c, signInCookie, sealed, signInTTL)
		h.redirect(c, "/app/login/verify", "")
		return
	}
	if err != nil {
		h.signInFailed(c, err, v)
		return
	}
	h.startSession(c, res)
	c.Redirect(http.StatusSeeOther, next)
}

// loginVerifyPage asks for the second step of a sign-in whose password was right (kept in the
// sealed cookie the post left); without one it goes back to the sign-in page.
func (h *Handler) loginVerifyPage(c *gin.Context) {
	raw, _ := c.Cookie(signInCookie)
	var p pendingSignIn
	if raw == "" || h.cookies.open(signInCookie, raw, h.now(), &p) != nil {
		h.redirect(c, "/app/login", "")
		return
	}
	noStore(c)
	h.render(c, http.StatusOK, "login", &view{Title: "Two-step verification", Data: loginData{Next: p.Next, TwoFactor: true}})
}

// loginVerify is the second step: the code from the authenticator app, or a recovery code.
func (h *Handler) loginVerify(c *gin.Context) {
	raw, _ := c.Cookie(signInCookie)
	var p pendingSignIn
	if err := h.cookies.open(signInCookie, raw, h.now(), &p); err != nil {
		h.render(c, http.StatusBadRequest, "login", &view{Title: "Sign in", Error: "The sign-in took too long. Enter your email and password again.",
			Data: loginData{Next: safeNext(c.PostForm("next")), SSO: h.opts.SSO}})
		return
	}
	code := strings.TrimSpace(c.PostForm("code"))
	step := &view{Title: "Two-step verification", Data: loginData{Next: p.Next, TwoFactor: true}}
	if code == "" {
		step.Errors = map[string]string{"code": "Enter the code from your authenticator app."}
		h.render(c, http.StatusUnprocessableEntity, "login", step)
		return
	}
	cmd := accounts.SignIn{Email: p.Email, Password: p.Password, IP: h.clientIP(c.Request)}
	if totpCode.MatchString(code) {
		cmd.TOTPCode = strings.ReplaceAll(code, " ", "")
	} else {
		cmd.RecoveryCode = code
	}
	res, err := h.app.Commands.SignIn.Handle(c.Request.Context(), cmd)
	if err != nil {
		if errors.Is(err, accounts.ErrInvalidCredentials) || errors.Is(err, accounts.ErrTwoFactorRequired) {
			step.Errors = map[string]string{"code": "That code is not valid. Check your app and try again."}
			h.render(c, http.StatusUnauthorized, "login", step)
			return
		}
		h.signInFailed(c, err, step)
		return
	}
	h.clearCookie(c, signInCookie)
	h.startSession(c, res)
	c.Redirect(http.StatusSeeOther, p.Next)
}

var totpCode = regexp.MustCompile(`^[0-9 ]{6,8}$`)

// signInFailed answers a refused sign-in: one message for unknown email and wrong password,
// the throttled page with Retry-After, or the shared table's answer.
func (h *Handler) signInFailed(c *gin.Context, err error, v *view) {
	var throttled *accounts.ThrottledError
	switch {
	case errors.As(err, &throttled):
		h.throttled(c, throttled)
	case errors.Is(err, accounts.ErrInvalidCredentials):
		v.Error = badCredentials
		h.render(c, http.StatusUnauthorized, "login", v)
	default:
		b := problem(err)
		if b.Status == http.StatusUnprocessableEntity {
			v.Errors, v.Error = fieldErrors(b, map[string]string{"email": "email", "password": "password"})
			h.render(c, b.Status, "login", v)
			return
		}
		h.fail(c, err)
	}
}

func (h *Handler) throttled(c *gin.Context, t *accounts.ThrottledError) {
	b := problem(t)
	if b.RetryAfter <= 0 {
		b.RetryAfter = t.RetryAfter
	}
	httperr.SetRetryAfter(c, b)
	h.render(c, http.StatusTooManyRequests, "message", &view{Title: "Too many attempts", Data: message{
		Heading:    "Too many sign-in attempts",
		Paragraphs: []string{"To protect this account, sign-in is paused after repeated failures."},
		RetryAfter: humanDuration(b.RetryAfter),
		Action:     &link{Href: "/app/forgot-password", Label: "Reset your password"},
	}})
}

func (h *Handler) logout(c *gin.Context) {
	if token, err := c.Cookie(SessionCookie); err == nil && token != "" {
		if err := h.app.Commands.SignOut.Handle(c.Request.Context(), accounts.SignOut{Token: token}); err != nil {
			h.fail(c, err)
			return
		}
	}
	h.clearCookie(c, SessionCookie)
	h.redirect(c, "/app/login", "You are signed out.")
}

func (h *Handler) home(c *gin.Context) {
	if principal(c).WorkspaceID == "" {
		c.Redirect(http.StatusSeeOther, "/app/no-workspace")
		return
	}
	c.Redirect(http.StatusSeeOther, "/app/forms")
}

func (h *Handler) noWorkspace(c *gin.Context) {
	if principal(c).WorkspaceID != "" {
		c.Redirect(http.StatusSeeOther, "/app/forms")
		return
	}
	h.render(c, http.StatusOK, "message", &view{Title: "No workspace", Data: message{
		Heading: "You are not in any workspace",
		Paragraphs: []string{"Your account is not a member of any workspace right now: your membership may have ended.",
			"Ask an owner or admin of a workspace to invite you, then open the link of the invitation."},
		SignOut: true,
	}})
}

// tokenData is the data of a page reached through a one-time link (setup, password reset): the
// link's token, posted back with the form.
type tokenData struct{ Token string }

// tokenPage renders the page of a one-time link; a link without its token is not found, and
// the page (which carries the token) is never cached.
func (h *Handler) tokenPage(c *gin.Context, page, title string) {
	token := c.Query("token")
	if token == "" {
		h.fail(c, domain.ErrNotFound)
		return
	}
	noStore(c)
	h.render(c, http.StatusOK, page, &view{Title: title, Data: tokenData{Token: token}})
}

func (h *Handler) setupPage(c *gin.Context) { h.tokenPage(c, "setup", "Set up Formward") }

func (h *Handler) setup(c *gin.Context) {
	cmd := accounts.SetupFirstOwner{Token: c.PostForm("token"), Email: strings.TrimSpace(c.PostForm("email")), Name: strings.TrimSpace(c.PostForm("name")),
		Password: c.PostForm("password"), WorkspaceName: strings.TrimSpace(c.PostForm("workspace_name")), IP: h.clientIP(c.Request)}
	res, err := h.app.Commands.SetupFirstOwner.Handle(c.Request.Context(), cmd)
	if err != nil {
		v := &view{Title: "Set up Formward", Data: tokenData{Token: cmd.Token},
			Form: map[string]string{"email": cmd.Email, "name": cmd.Name, "workspace_name": cmd.WorkspaceName}}
		b := problem(err)
		if b.Status == http.StatusUnprocessableEntity {
			v.Errors, v.Error = fieldErrors(b, map[string]string{"email": "email", "name": "name", "password": "password",
				"workspace_name": "workspace_name", "workspace.name": "workspace_name"})
			noStore(c)
			h.render(c, b.Status, "setup", v)
			return
		}
		if b.Status == http.StatusNotFound || b.Status == http.StatusUnauthorized || b.Status == http.StatusForbidden || b.Status == http.StatusConflict {
			h.render(c, http.StatusNotFound, "message", &view{Title: "Setup link not valid", Data: message{
				Heading:    "This setup link is no longer valid",
				Paragraphs: []string{"Formward is already set up, or the link expired (it works for 24 hours). Restart the server for a new link while no account exists, or sign in."},
				Action:     &link{Href: "/app/login", Label: "Sign in"}}})
			return
		}
		h.fail(c, err)
		return
	}
	h.startSession(c, res)
	h.redirect(c, "/app/forms", "Welcome to Formward. Your workspace is ready.")
}

type forgotData struct{ Sent bool }

// forgotPage asks for the address; ?sent=1 (where a request redirects) says the link is on its
// way, the same for every address.
func (h *Handler) forgotPage(c *gin.Context) {
	if c.Query("sent") == "1" {
		h.render(c, http.StatusOK, "forgot", &view{Title: "Check your email", Data: forgotData{Sent: true}})
		return
	}
	h.render(c, http.StatusOK, "forgot", &view{Title: "Reset your password", Data: forgotData{}})
}

func (h *Handler) forgot(c *gin.Context) {
	email := strings.TrimSpace(c.PostForm("email"))
	if email == "" {
		h.render(c, http.StatusUnprocessableEntity, "forgot", &view{Title: "Reset your password", Data: forgotData{},
			Errors: map[string]string{"email": "Enter your email."}})
		return
	}
	// The answer is the same for every address, with or without an account, and over the
	// request limit too: the link is mailed after the answer, when there is an account.
	err := h.app.Commands.RequestPasswordReset.Handle(c.Request.Context(), accounts.RequestPasswordReset{Email: email, IP: h.clientIP(c.Request)})
	if err != nil {
		b := problem(err)
		if b.Status == http.StatusUnprocessableEntity {
			v := &view{Title: "Reset your password", Data: forgotData{}, Form: map[string]string{"email": email}}
			v.Errors, v.Error = fieldErrors(b, map[string]string{"email": "email"})
			h.render(c, b.Status, "forgot", v)
			return
		}
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/forgot-password?sent=1", "")
}

func (h *Handler) resetPage(c *gin.Context) { h.tokenPage(c, "reset", "Choose a new password") }

func (h *Handler) reset(c *gin.Context) {
	token := c.PostForm("token")
	err := h.app.Commands.ResetPassword.Handle(c.Request.Context(), accounts.ResetPassword{Token: token, Password: c.PostForm("password")})
	if err != nil {
		b := problem(err)
		v := &view{Title: "Choose a new password", Data: tokenData{Token: token}}
		if b.Status == http.StatusUnprocessableEntity {
			v.Errors, v.Error = fieldErrors(b, map[string]string{"password": "password", "new": "password"})
			noStore(c)
			h.render(c, b.Status, "reset", v)
			return
		}
		if b.Status == http.StatusNotFound || b.Status == http.StatusUnauthorized {
			h.render(c, http.StatusNotFound, "message", &view{Title: "Link not valid", Data: message{
				Heading:    "This link is no longer valid",
				Paragraphs: []string{"Password links work once, for a limited time. Ask for a new one."},
				Action:     &link{Href: "/app/forgot-password", Label: "Send a new link"}}})
			return
		}
		h.fail(c, err)
		return
	}
	h.clearCookie(c, SessionCookie)
	h.redirect(c, "/app/login", "Your password is set. Sign in with it.")
}

type invitationData struct {
	Token, Path, WorkspaceName, Role, Email, SignedInAs string
	UserExists                                          bool
}

func (h *Handler) invitationPage(c *gin.Context) {
	token := c.Param("token")
	iv, err := h.app.Queries.GetInvitation.Handle(c.Request.Context(), accounts.GetInvitation{Token: token})
	if err != nil {
		h.invitationFailed(c, err)
		return
	}
	noStore(c)
	h.render(c, http.StatusOK, "invitation", &view{Title: "Join " + iv.WorkspaceName, Data: h.invitationData(c, token, iv)})
}

func (h *Handler) invitationData(c *gin.Context, token string, iv accounts.InvitationView) invitationData {
	d := invitationData{Token: token, Path: "/app/invitations/" + token, WorkspaceName: iv.WorkspaceName, UserExists: iv.UserExists}
	if iv.Invitation != nil {
		d.Role, d.Email = string(iv.Invitation.Role()), iv.Invitation.Email()
	}
	if sp, ok := h.signedIn(c); ok && sp.User != nil {
		d.SignedInAs = sp.User.Email()
	}
	return d
}

func (h *Handler) invitationFailed(c *gin.Context, err error) {
	if errors.Is(err, invitation.ErrNotUsable) || errors.Is(err, domain.ErrNotFound) {
		h.render(c, http.StatusNotFound, "message", &view{Title: "Invitation not valid", Data: message{
			Heading:    "This invitation is no longer valid",
			Paragraphs: []string{"It was already used, withdrawn, or it expired (invitations last 7 days). Ask for a new one."},
			Action:     &link{Href: "/app/login", Label: "Sign in"}}})
		return
	}
	h.fail(c, err)
}

func (h *Handler) acceptInvitation(c *gin.Context) {
	token := c.Param("token")
	cmd := accounts.AcceptInvitation{Token: token, IP: h.clientIP(c.Request)}
	sp, signedIn := h.signedIn(c)
	if signedIn && sp.User != nil {
		cmd.SignedInUserID = sp.User.ID()
	} else {
		cmd.Name, cmd.Password = strings.TrimSpace(c.PostForm("name")), c.PostForm("password")
	}
	res, err := h.app.Commands.AcceptInvitation.Handle(c.Request.Context(), cmd)
	if errors.Is(err, accounts.ErrSignInToAccept) {
		h.flash(c, "An account with this email exists. Sign in, then accept the invitation.")
		c.Redirect(http.StatusSeeOther, "/app/login?next="+url.QueryEscape("/app/invitations/"+token))
		return
	}
	if errors.Is(err, accounts.ErrOtherAccount) {
		h.render(c, http.StatusForbidden, "message", &view{Title: "Another account", Data: message{
			Heading:    "This invitation is for another email address",
			Paragraphs: []string{"You are signed in with an account whose email is not the one invited. Sign out, then open the invitation link again."},
			SignOut:    true}})
		return
	}
	if err != nil {
		b := problem(err)
		if b.Status == http.StatusUnprocessableEntity {
			iv, gerr := h.app.Queries.GetInvitation.Handle(c.Request.Context(), accounts.GetInvitation{Token: token})
			if gerr != nil {
				h.invitationFailed(c, gerr)
				return
			}
			v := &view{Title: "Join " + iv.WorkspaceName, Data: h.invitationData(c, token, iv), Form: map[string]string{"name": cmd.Name}}
			v.Errors, v.Error = fieldErrors(b, map[string]string{"name": "name", "password": "password"})
			noStore(c)
			h.render(c, b.Status, "invitation", v)
			return
		}
		h.invitationFailed(c, err)
		return
	}
	if res.Token != "" {
		h.startSession(c, res)
	}
	h.redirect(c, "/app/forms", "Welcome! You joined the workspace.")
}

type oidcState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
}

func (h *Handler) oidcStart(c *gin.Context) {
	if !h.opts.SSO {
		h.fail(c, domain.ErrNotFound)
		return
	}
	st, err := h.app.Commands.StartOIDC.Handle(c.Request.Context(), accounts.StartOIDC{})
	if err != nil {
		h.fail(c, err)
		return
	}
	sealed, err := h.cookies.seal(oidcCookie, oidcState{State: st.State, Nonce: st.Nonce, Verifier: st.Verifier}, h.now().Add(oidcTTL))
	if err != nil {
		h.fail(c, err)
		return
	}
	h.setCookie(c, oidcCookie, sealed, oidcTTL)
	c.Redirect(http.StatusFound, st.URL)
}

func (h *Handler) oidcCallback(c *gin.Context) {
	raw, _ := c.Cookie(oidcCookie)
	h.clearCookie(c, oidcCookie)
	var st oidcState
	retry := &link{Href: "/app/login", Label: "Back to sign in"}
	if err := h.cookies.open(oidcCookie, raw, h.now(), &st); err != nil ||
		subtle.ConstantTimeCompare([]byte(st.State), []byte(c.Query("state"))) != 1 || st.State == "" {
		h.render(c, http.StatusBadRequest, "message", &view{Title: "Sign-in failed", Data: message{Heading: "Single sign-on did not complete",
			Paragraphs: []string{"The sign-in took too long or was started in another browser. Start it again."}, Action: retry}})
		return
	}
	if c.Query("error") != "" || c.Query("code") == "" {
		h.render(c, http.StatusUnauthorized, "message", &view{Title: "Sign-in failed", Data: message{Heading: "Single sign-on was refused",
			Paragraphs: []string{"Your identity provider did not sign you in."}, Action: retry}})
		return
	}
	res, err := h.app.Commands.FinishOIDC.Handle(c.Request.Context(), accounts.FinishOIDC{Code: c.Query("code"), Verifier: st.Verifier, Nonce: st.Nonce, IP: h.clientIP(c.Request)})
	if err != nil {
		var throttled *accounts.ThrottledError
		switch {
		case errors.As(err, &throttled):
			h.throttled(c, throttled)
		case errors.Is(err, accounts.ErrNoAccount):
			h.render(c, http.StatusForbidden, "message", &view{Title: "No account", Data: message{Heading: "No Formward account for you yet",
				Paragraphs: []string{"Formward accounts are by invitation. Ask an owner or admin of your workspace to invite your address, then open the invitation's link."}, Action: retry}})
		case errors.Is(err, accounts.ErrInvalidCredentials), errors.Is(err, auth.ErrUnauthenticated):
			h.render(c, http.StatusUnauthorized, "message", &view{Title: "Sign-in failed", Data: message{Heading: "Single sign-on did not complete",
				Paragraphs: []string{"Your identity provider's answer could not be verified, or your email is not verified there."}, Action: retry}})
		default:
			h.fail(c, err)
		}
		return
	}
	h.startSession(c, res)
	c.Redirect(http.StatusSeeOther, "/app")
}
