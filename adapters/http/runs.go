package httpapi

import (
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
		Status: string(r.Status()), CreatedAt: domain.FormatTime(r.CreatedAt()), Actions: []actionRunJSON{}}
	if f := r.FinishedAt(); f != nil {
		s := domain.FormatTime(*f)
		out.FinishedAt = &s
	}
	for _, a := range r.Actions() {
		aj := actionRunJSON{ActionID: a.ActionID, Type: a.Type, Status: string(a.Status), Attempts: []attemptJSON{}}
		for _, at := range a.Attempts {
			aj.Attempts = append(aj.Attempts, attemptJSON{Attempt: at.Number, At: domain.FormatTime(at.At), StatusCode: at.StatusCode,
				DurationMS: at.Duration.Milliseconds(), Error: at.Error})
		}
		out.Actions = append(out.Actions, aj)
	}
	return out
}

func (a *api) listRuns(c *gin.Context) {
	p := principal(c)
	list := "runs:" + p.WorkspaceID + ":" + c.Param("id")
	page, err := a.pageOf(c, list)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	rs, more, err := a.App.Queries.ListRuns.Handle(c.Request.Context(), workflows.ListRuns{WorkflowID: c.Param("id"), Page: page})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, a.page(list, more, len(rs), func(i int) (any, ports.Position) {
		r := rs[i]
		return presentRun(r), ports.Position{CreatedAt: r.CreatedAt(), ID: r.ID()}
	}))
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
