package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

var replayProps = []string{"since", "until", "types"}

type replayJSON struct {
	ID           string   `json:"id"`
	WebhookID    string   `json:"webhook_id"`
	Status       string   `json:"status"`
	Since        string   `json:"since"`
	Until        string   `json:"until"`
	Types        []string `json:"types"`
	EventsTotal  int      `json:"events_total"`
	EventsSent   int      `json:"events_sent"`
	EventsFailed int      `json:"events_failed"`
	Error        *string  `json:"error"`
	CreatedAt    string   `json:"created_at"`
	FinishedAt   *string  `json:"finished_at"`
}

func presentReplay(r *webhook.Replay) replayJSON {
	types := make([]string, len(r.Types()))
	for i, t := range r.Types() {
		types[i] = string(t)
	}
	var errMsg *string
	if r.Error() != "" {
		e := r.Error()
		errMsg = &e
	}
	return replayJSON{ID: r.ID(), WebhookID: r.WebhookID(), Status: string(r.Status()), Since: domain.FormatTime(r.Since()),
		Until: domain.FormatTime(r.Until()), Types: types, EventsTotal: r.EventsTotal(), EventsSent: r.EventsSent(),
		EventsFailed: r.EventsFailed(), Error: errMsg, CreatedAt: domain.FormatTime(r.CreatedAt()), FinishedAt: optionalTime(r.FinishedAt())}
}

// replayTime reads an optional RFC 3339 time property of a replay request.
func replayTime(o object, vs *domain.Violations, name string) *time.Time {
	s, present := o.str(name)
	if !present || o.isNull(name) {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		vs.Add(name, "invalid_value", name+" must be an RFC 3339 timestamp such as 2026-11-28T09:00:00Z")
		return nil
	}
	return &t
}

func (a *api) startReplay(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, replayProps, nil)
	if !ok {
		return
	}
	var d webhook.ReplayDraft
	d.Since = replayTime(o, &vs, "since")
	d.Until = replayTime(o, &vs, "until")
	d.Types, _ = o.strings("types")
	if !o.has("since") {
		vs.Add("since", "required", "since is required: the start of the range to replay (RFC 3339)")
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	r, err := a.App.Commands.StartReplay.Handle(c.Request.Context(), webhooks.StartReplay{WebhookID: c.Param("id"), Draft: d})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Header("Location", "/v1/webhooks/"+r.WebhookID()+"/replays/"+r.ID())
	c.JSON(http.StatusAccepted, presentReplay(r))
}

func (a *api) getReplay(c *gin.Context) {
	r, err := a.App.Queries.GetReplay.Handle(c.Request.Context(), webhooks.GetReplay{WebhookID: c.Param("id"), ID: c.Param("job_id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentReplay(r))
}

func (a *api) listReplays(c *gin.Context) {
	p := principal(c)
	list := "replays:" + p.WorkspaceID + ":" + c.Param("id")
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]*webhook.Replay, bool, error) {
		return a.App.Queries.ListReplays.Handle(ctx, webhooks.ListReplays{WebhookID: c.Param("id"), Page: page})
	}, func(r *webhook.Replay) (any, ports.Position) {
		return presentReplay(r), ports.Position{CreatedAt: r.CreatedAt(), ID: r.ID()}
	})
}
