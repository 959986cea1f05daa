package dashboard

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// replayRow is one replay job on the webhook page.
type replayRow struct {
	ID, Status, StatusClass string
	Since, Until, Created   time.Time
	Total, Sent, Failed     int
	Error                   string
}

// replayForm is the "Replay events" form: since and until as <input type="datetime-local">
// holds them in the viewer's time zone, and when the endpoint seems to have gone down.
type replayForm struct {
	Since, Until string
	WentDown     *time.Time
	Zone         string
	// Running is set while a replay of the webhook is queued or running: no second one.
	Running bool
}

func replayState(r *webhook.Replay) (label, class string) {
	switch r.Status() {
	case webhook.ReplayDone:
		if r.EventsFailed() > 0 {
			return "Done, some failed", "badge-red"
		}
		return "Done", "badge-green"
	case webhook.ReplayFailed:
		return "Failed", "badge-red"
	case webhook.ReplayRunning:
		return "Running", "badge-amber"
	}
	return "Queued", "badge-amber"
}

// replaysOf lists the webhook's latest replays and prepares the replay form: since defaults to
// the oldest of the newest failed deliveries of the log page (when the endpoint went down),
// else an hour ago.
func (h *Handler) replaysOf(c *gin.Context, w *webhook.Webhook, ds []*webhook.Delivery, since, until string) ([]replayRow, replayForm, error) {
	rs, _, err := h.app.Queries.ListReplays.Handle(c.Request.Context(), webhooks.ListReplays{WebhookID: w.ID(), Page: ports.Page{Limit: 5}})
	if err != nil {
		return nil, replayForm{}, err
	}
	loc := h.zone(c)
	f := replayForm{Since: since, Until: until, Zone: loc.String()}
	var rows []replayRow
	for _, r := range rs {
		row := replayRow{ID: r.ID(), Since: r.Since(), Until: r.Until(), Created: r.CreatedAt(), Total: r.EventsTotal(),
			Sent: r.EventsSent(), Failed: r.EventsFailed(), Error: r.Error()}
		row.Status, row.StatusClass = replayState(r)
		rows = append(rows, row)
		f.Running = f.Running || r.Status() == webhook.ReplayQueued || r.Status() == webhook.ReplayRunning
	}
	for _, d := range ds { // newest first: the run of failures up to the last success
		if _, _, failed := deliveryState(d); !failed {
			if d.Status() == webhook.StatusDelivered {
				break
			}
			continue
		}
		at := d.CreatedAt()
		f.WentDown = &at
	}
	if f.Since == "" {
		at := h.clock.Now().Add(-time.Hour)
		if f.WentDown != nil {
			at = *f.WentDown
		}
		f.Since = at.In(loc).Format(localMinute)
	}
	return rows, f, nil
}

// startReplay queues a replay of the range posted, read in the viewer's time zone.
func (h *Handler) startReplay(c *gin.Context) {
	w, err := h.getWebhook(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	loc := h.zone(c)
	since, until := c.PostForm("since"), c.PostForm("until")
	var d webhook.ReplayDraft
	var vs domain.Violations
	if t, perr := time.ParseInLocation(localMinute, since, loc); perr == nil {
		d.Since = &t
	} else {
		vs.Add("since", "invalid_value", "Give the start of the range as a date and a time.")
	}
	if until != "" {
		if t, perr := time.ParseInLocation(localMinute, until, loc); perr == nil {
			d.Until = &t
		} else {
			vs.Add("until", "invalid_value", "Give the end of the range as a date and a time, or leave it empty for now.")
		}
	}
	err = vs.Err()
	if err == nil {
		_, err = h.app.Commands.StartReplay.Handle(c.Request.Context(), webhooks.StartReplay{WebhookID: w.ID(), Draft: d})
	}
	var conflict *domain.ConflictError
	switch {
	case err == nil:
		h.redirect(c, "/app/webhooks/"+w.ID()+"#replays", "Replay started. Its progress shows below; reload the page to follow it.")
	case errors.As(err, &conflict):
		h.redirect(c, "/app/webhooks/"+w.ID()+"#replays", sentence(conflict.Message))
	default:
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		v := &view{Title: "Webhook", Form: map[string]string{}}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"since": "since", "until": "until"})
		data, derr := h.webhookDataWith(c, w, since, until)
		if derr != nil {
			h.fail(c, derr)
			return
		}
		if data.Form, derr = h.formFor(c, v, w, nil); derr != nil {
			h.fail(c, derr)
			return
		}
		v.Data = data
		h.render(c, http.StatusUnprocessableEntity, "webhook", v)
	}
}
