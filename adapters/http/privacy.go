package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
)

// Respondent privacy requests (admin scope): find or erase every submission whose email
// answer is the given address, across all forms of the key's workspace.

var privacyProps = []string{"email"}

// privacyEmail reads {"email": "..."}; a missing or non-string email is a 422.
func (a *api) privacyEmail(c *gin.Context) (string, bool) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, privacyProps, nil)
	if !ok {
		return "", false
	}
	email, _ := o.str("email")
	if !o.has("email") {
		vs.Add("email", "required", "email is required")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return "", false
	}
	return email, true
}

func (a *api) privacyExport(c *gin.Context) {
	email, ok := a.privacyEmail(c)
	if !ok {
		return
	}
	ctx := auth.WithPrincipal(c.Request.Context(), principal(c))
	res, err := a.App.Queries.PrivacyExport.Handle(ctx, workspace.PrivacyExport{Email: email})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	subs := make([]httpkit.SubmissionJSON, 0, len(res.Submissions))
	for _, s := range res.Submissions {
		subs = append(subs, httpkit.PresentSubmission(s, a.fileURL))
	}
	// The answer holds the person's answers: kept for an Idempotency-Key, it would outlive their
	// erasure. The export changes nothing, so a repeat simply runs it again.
	c.Set(ctxNotKept, true)
	c.JSON(http.StatusOK, gin.H{"submissions": subs})
}

func (a *api) privacyErase(c *gin.Context) {
	email, ok := a.privacyEmail(c)
	if !ok {
		return
	}
	ctx := auth.WithPrincipal(c.Request.Context(), principal(c))
	res, err := a.App.Commands.PrivacyErase.Handle(ctx, workspace.PrivacyErase{Email: email})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"submissions_deleted": res.SubmissionsDeleted, "drafts_deleted": res.DraftsDeleted})
}
