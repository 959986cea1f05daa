package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// createdRange reads the created_after and created_before query parameters, RFC 3339
// date-times, into after and before (left nil when absent).
func createdRange(c *gin.Context, after, before **time.Time) error {
	for name, dst := range map[string]**time.Time{"created_after": after, "created_before": before} {
		if s, ok := c.GetQuery(name); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return badRequest(name + " must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z")
			}
			t = t.UTC()
			*dst = &t
		}
	}
	return nil
}

func (a *api) listSubmissions(c *gin.Context) {
	p := principal(c)
	q := capture.ListSubmissions{FormID: c.Param("id")}
	if err := createdRange(c, &q.CreatedAfter, &q.CreatedBefore); err != nil {
		fail(c, a.Logger, err)
		return
	}
	list := "submissions:" + p.WorkspaceID + ":" + q.FormID
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*submission.Submission, bool, error) {
		q.Page = page
		return a.App.Queries.ListSubmissions.Handle(ctx, q)
	}, func(s *submission.Submission) (any, ports.Position) {
		return httpkit.PresentSubmission(s, a.fileURL), ports.Position{CreatedAt: s.SubmittedAt(), ID: s.ID()}
	})
}

// answers reads the required data object of a submission body.
func (a *api) answers(c *gin.Context) (map[string]submission.Input, bool) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, submissionProps, submissionReadOnly)
	if !ok {
		return nil, false
	}
	data, present := o.answers("data")
	if !present {
		vs.Add("data", "required", "data is required: an object mapping field IDs or keys to values")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return nil, false
	}
	return data, true
}

func (a *api) createSubmission(c *gin.Context) {
	data, ok := a.answers(c)
	if !ok {
		return
	}
	s, err := a.App.Commands.CaptureSubmission.Handle(c.Request.Context(), capture.CaptureSubmission{
		FormID: c.Param("id"), Data: data, Source: submission.SourceAPI,
	})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Set(ctxCreatedSubmission, s.ID())
	c.JSON(http.StatusCreated, httpkit.PresentSubmission(s, a.fileURL))
}

func (a *api) getSubmission(c *gin.Context) {
	s, err := a.App.Queries.GetSubmission.Handle(c.Request.Context(), capture.GetSubmission{
		FormID: c.Param("id"), ID: c.Param("submission_id"),
	})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, httpkit.PresentSubmission(s, a.fileURL))
}

func (a *api) updateSubmission(c *gin.Context) {
	data, ok := a.answers(c)
	if !ok {
		return
	}
	s, err := a.App.Commands.UpdateSubmission.Handle(c.Request.Context(), capture.UpdateSubmission{
		FormID: c.Param("id"), ID: c.Param("submission_id"), Changes: data,
	})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, httpkit.PresentSubmission(s, a.fileURL))
}

func (a *api) deleteSubmission(c *gin.Context) {
	err := a.App.Commands.DeleteSubmission.Handle(c.Request.Context(), capture.DeleteSubmission{
		FormID: c.Param("id"), ID: c.Param("submission_id"),
	})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}
