package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

type actionRunJSON struct {
	ActionID string        `json:"action_id"`
	Type     string        `json:"type"`
	Status   string        `json:"status"`
	Attempts []attemptJSON `json:"attempts"`
}

type runJSON struct {
	ID           string          `json:"id"`
	WorkflowID   string          `json:"workflow_id"`
	SubmissionID string          `json:"submission_id"`
	Event        string          `json:"event"`
	Status       string          `json:"status"`
	CreatedAt    string          `json:"created_at"`
	FinishedAt   *string         `json:"finished_at"`
	Actions      []actionRunJSON `json:"actions"`
}

// presentRun shows a run's log: statuses and attempts, never the configs it snapshotted.
func presentRun(r *workflow.Run) runJSON {
	out := runJSON{ID: r.ID(), WorkflowID: r.WorkflowID(), SubmissionID: r.SubmissionID(), Event: string(r.EventType()),
		Status: string(r.Status()), CreatedAt: domain.FormatTime(r.CreatedAt()), FinishedAt: optionalTime(r.FinishedAt()), Actions: []actionRunJSON{}}
	for _, a := range r.Actions() {
		out.Actions = append(out.Actions, actionRunJSON{ActionID: a.ActionID, Type: a.Type, Status: string(a.Status), Attempts: presentAttempts(a.Attempts)})
	}
	return out
}

func (a *api) listRuns(c *gin.Context) {
	p := principal(c)
	list := "runs:" + p.WorkspaceID + ":" + c.Param("id")
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*workflow.Run, bool, error) {
		return a.App.Queries.ListRuns.Handle(ctx, workflows.ListRuns{WorkflowID: c.Param("id"), Page: page})
	}, func(r *workflow.Run) (any, ports.Position) {
		return presentRun(r), ports.Position{CreatedAt: r.CreatedAt(), ID: r.ID()}
	})
}

func (a *api) retryRun(c *gin.Context) {
	r, err := a.App.Commands.RetryRun.Handle(c.Request.Context(), workflows.RetryRun{
		WorkflowID: c.Param("id"), ID: c.Param("run_id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentRun(r))
}
