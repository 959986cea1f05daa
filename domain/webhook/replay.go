package webhook

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
)

// ReplayStatus is where a replay job stands.
type ReplayStatus string

// Replay statuses: queued until a worker takes it, running while it queues its events and
// while the deliveries it queued are pending, done when none is pending any more, failed when
// it could not go on (its range was purged from the outbox meanwhile).
const (
	ReplayQueued  ReplayStatus = "queued"
	ReplayRunning ReplayStatus = "running"
	ReplayDone    ReplayStatus = "done"
	ReplayFailed  ReplayStatus = "failed"
)

// Replay is one re-delivery to a webhook of every retained event of a time range.
type Replay struct {
	id          string
	workspaceID string
	webhookID   string
	since       time.Time
	until       time.Time
	types       []event.Type
	status      ReplayStatus
	total       int
	sent        int
	failed      int
	createdAt   time.Time
	finishedAt  *time.Time
	err         string
}

// ReplayDraft is what a client asks for; Until nil means now, Types empty means every type the
// webhook subscribes to.
type ReplayDraft struct {
	Since *time.Time
	Until *time.Time
	Types []string
}

// NewReplay checks a draft against the webhook and the outbox retention (events older than
// now-retention may be gone) and queues the job. The webhook must be enabled: a replay to an
// endpoint whose deliveries are switched off would be stopped at the first failure.
func NewReplay(id string, w *Webhook, d ReplayDraft, retention time.Duration, now time.Time) (*Replay, error) {
	now = now.UTC()
	var vs domain.Violations
	r := &Replay{id: id, workspaceID: w.workspaceID, webhookID: w.id, status: ReplayQueued, createdAt: now}
	oldest := now.Add(-retention)
	switch {
	case d.Since == nil:
		vs.Add("since", "required", "since is required: the start of the range to replay (RFC 3339)")
	case d.Since.Before(oldest):
		vs.Add("since", "out_of_range", "since is before the oldest retained event: events are kept for "+retention.String()+
			" (FORMWARD_OUTBOX_RETENTION), so the range may start at "+domain.FormatTime(oldest)+" at the earliest")
	case d.Since.After(now):
		vs.Add("since", "out_of_range", "since is in the future")
	default:
		r.since = d.Since.UTC()
	}
	r.until = now
	if d.Until != nil {
		switch {
		case d.Until.After(now):
			vs.Add("until", "out_of_range", "until is in the future: leave it out to replay up to now")
		case d.Since != nil && !d.Until.After(*d.Since):
			vs.Add("until", "out_of_range", "until must be after since")
		default:
			r.until = d.Until.UTC()
		}
	}
	subscribed := w.Events()
	if len(d.Types) == 0 {
		r.types = subscribed
	}
	for i, t := range d.Types {
		et := event.Type(t)
		switch {
		case !slices.Contains(subscribed, et):
			vs.Add("types["+strconv.Itoa(i)+"]", "invalid_value", "the webhook does not subscribe to "+t+"; it subscribes to "+joinTypes(subscribed))
		case slices.Contains(r.types, et):
			vs.Add("types["+strconv.Itoa(i)+"]", "duplicate", t+" is listed twice")
		default:
			r.types = append(r.types, et)
		}
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	if !w.Enabled() {
		return nil, domain.Conflict("the webhook is disabled: enable it before replaying events to it")
	}
	return r, nil
}

// UnmarshalReplayFromDatabase rebuilds a stored replay without re-checking it.
func UnmarshalReplayFromDatabase(id, workspaceID, webhookID string, since, until time.Time, types []event.Type, status ReplayStatus,
	total, sent, failed int, createdAt time.Time, finishedAt *time.Time, errMsg string) *Replay {
	return &Replay{id: id, workspaceID: workspaceID, webhookID: webhookID, since: since.UTC(), until: until.UTC(), types: types,
		status: status, total: total, sent: sent, failed: failed, createdAt: createdAt.UTC(), finishedAt: finishedAt, err: errMsg}
}

// ID is the job's ID (rpl_…).
func (r *Replay) ID() string { return r.id }

// WorkspaceID is the owning workspace.
func (r *Replay) WorkspaceID() string { return r.workspaceID }

// WebhookID is the endpoint the events go to.
func (r *Replay) WebhookID() string { return r.webhookID }

// Since is the start of the range (inclusive).
func (r *Replay) Since() time.Time { return r.since }

// Until is the end of the range (exclusive).
func (r *Replay) Until() time.Time { return r.until }

// Types are the event types replayed.
func (r *Replay) Types() []event.Type { return append([]event.Type(nil), r.types...) }

// Status is where the job stands.
func (r *Replay) Status() ReplayStatus { return r.status }

// EventsTotal is how many events of the range the job re-delivers (known once it runs).
func (r *Replay) EventsTotal() int { return r.total }

// EventsSent is how many of them the endpoint has accepted so far.
func (r *Replay) EventsSent() int { return r.sent }

// EventsFailed is how many of them became undeliverable.
func (r *Replay) EventsFailed() int { return r.failed }

// CreatedAt is when the job was asked for.
func (r *Replay) CreatedAt() time.Time { return r.createdAt }

// FinishedAt is when the job ended, nil while it is queued or running.
func (r *Replay) FinishedAt() *time.Time { return r.finishedAt }

// Error says why a failed job stopped ("" otherwise).
func (r *Replay) Error() string { return r.err }

func joinTypes(ts []event.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = string(t)
	}
	return strings.Join(parts, ", ")
}
