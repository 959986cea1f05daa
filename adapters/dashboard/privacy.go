package dashboard

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/access"
)

// Respondent privacy requests (owners and admins): export or erase every submission, in any
// form of the workspace, whose email answer is an address. The address goes from the form to
// the use cases and back into the page only; it is never logged, put in a URL or in a flash
// message, and the audit events the use cases write carry the counts alone. Between the erase
// request and its confirmation page (a 303, so a reload repeats nothing) it waits, sealed, in a
// one-time flash of the session (see once.go), which the confirmation page takes.

// mountPrivacy adds the privacy request pages to the workspace routes.
func (h *Handler) mountPrivacy(w *gin.RouterGroup) {
	w.GET("/settings/privacy", h.privacy)
	w.POST("/settings/privacy/export", h.privacyExport)
	w.POST("/settings/privacy/erase", h.privacyEraseRequest)
	w.GET("/settings/privacy/erase", h.privacyEraseConfirm)
	w.POST("/settings/privacy/erase/confirm", h.privacyErase)
}

var privacyFields = map[string]string{"email": "email"}

func (h *Handler) privacy(c *gin.Context) {
	if err := principal(c).Require(access.ManageAccount); err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "privacy", &view{Title: "Privacy requests"})
}

// privacyFailed answers a failed privacy request: the page again with a validation error next
// to the address, or any other failure as fail draws it.
func (h *Handler) privacyFailed(c *gin.Context, err error, email string) {
	b, ok := h.invalid(c, err)
	if !ok {
		return
	}
	errs, msg := fieldErrors(b, privacyFields)
	h.render(c, b.Status, "privacy", &view{Title: "Privacy requests", Errors: errs, Error: msg, Form: map[string]string{"email": email}})
}

// exportPosted finds the submissions of the posted address; when ok is false it has answered.
func (h *Handler) exportPosted(c *gin.Context) (email string, res workspace.PrivacyExportResult, ok bool) {
	email = c.PostForm("email")
	res, err := h.app.Queries.PrivacyExport.Handle(c.Request.Context(), workspace.PrivacyExport{Email: email})
	if err != nil {
		h.privacyFailed(c, err, email)
		return email, res, false
	}
	return email, res, true
}

// privacyExport downloads {"submissions": [...]}, oldest first.
func (h *Handler) privacyExport(c *gin.Context) {
	_, res, ok := h.exportPosted(c)
	if !ok {
		return
	}
	subs := make([]httpkit.SubmissionJSON, 0, len(res.Submissions))
	for _, s := range res.Submissions {
		subs = append(subs, httpkit.PresentSubmission(s, httpkit.KeepValue)) // as the API shows it, without download links
	}
	body, err := json.MarshalIndent(map[string]any{"submissions": subs}, "", "  ")
	if err != nil {
		h.fail(c, err)
		return
	}
	name := "privacy-export-" + h.now().UTC().Format("20060102T150405Z") + ".json"
	c.Header("Content-Disposition", `attachment; filename="`+name+`"`)
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}

// eraseRequest is what the confirmation page of an erase shows, kept in a one-time flash.
type eraseRequest struct {
	Email              string
	Submissions, Forms int
}

// privacyEraseRequest counts what an erase would delete (an export run, recorded as such) and
// answers 303 to the confirmation page, which shows the count.
func (h *Handler) privacyEraseRequest(c *gin.Context) {
	email, res, ok := h.exportPosted(c)
	if !ok {
		return
	}
	forms := map[string]bool{}
	for _, s := range res.Submissions {
		forms[s.FormID()] = true
	}
	req := eraseRequest{Email: strings.TrimSpace(email), Submissions: len(res.Submissions), Forms: len(forms)}
	if !h.showOnce(c, "/app/settings/privacy/erase", oncePrivacyErase, "", req) {
		h.renderEraseConfirm(c, req)
	}
}

// privacyEraseConfirm asks to confirm the erase the request before it counted; reloaded (the
// flash is taken), it goes back to the privacy page, which asks for the address again.
func (h *Handler) privacyEraseConfirm(c *gin.Context) {
	if err := principal(c).Require(access.ManageAccount); err != nil {
		h.fail(c, err)
		return
	}
	var req eraseRequest
	once, err := h.takeOnce(c, oncePrivacyErase, &req)
	if err != nil {
		h.fail(c, err)
		return
	}
	switch once {
	case onceNone:
		h.redirect(c, "/app/settings/privacy", "")
		return
	case onceGone:
		h.redirect(c, "/app/settings/privacy", "That confirmation was shown once. Enter the address again to erase.")
		return
	}
	h.renderEraseConfirm(c, req)
}

func (h *Handler) renderEraseConfirm(c *gin.Context, req eraseRequest) {
	d := confirmData{Heading: "Erase this respondent's data?", Action: "/app/settings/privacy/erase/confirm",
		Cancel: "/app/settings/privacy", Danger: true, Hidden: []hiddenInput{{Name: "email", Value: req.Email}}}
	if req.Submissions == 0 {
		d.Paragraphs = []string{"No submission has an email answer equal to " + req.Email + ": there is nothing to erase."}
		d.Button = "Erase anyway"
	} else {
		d.Paragraphs = []string{plural(req.Submissions, "submission") + " in " + plural(req.Forms, "form") + " with an email answer equal to " + req.Email +
			" will be deleted, with their uploaded files and workflow and webhook records.",
			"This cannot be undone. Backups keep them until they expire (at most 30 days), and a restore deletes them again."}
		d.Button = "Erase " + plural(req.Submissions, "submission")
	}
	noStore(c)
	h.render(c, http.StatusOK, "confirm", &view{Title: "Erase respondent data", Data: d})
}

func (h *Handler) privacyErase(c *gin.Context) {
	email := c.PostForm("email")
	res, err := h.app.Commands.PrivacyErase.Handle(c.Request.Context(), workspace.PrivacyErase{Email: email})
	if err != nil {
		h.privacyFailed(c, err, email)
		return
	}
	notice := "Erased: " + strconv.FormatInt(res.SubmissionsDeleted, 10) + " submissions deleted."
	if res.SubmissionsDeleted == 1 {
		notice = "Erased: 1 submission deleted."
	}
	switch res.DraftsDeleted {
	case 0:
	case 1:
		notice += " 1 saved draft deleted."
	default:
		notice += " " + strconv.FormatInt(res.DraftsDeleted, 10) + " saved drafts deleted."
	}
	h.redirect(c, "/app/settings/privacy", notice)
}
