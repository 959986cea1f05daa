package httpapi

import (
	"encoding/json"
	"time"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

type fieldJSON struct {
	ID          string   `json:"id"`
	Label       string   `json:"label"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Options     []string `json:"options"`
	Placeholder *string  `json:"placeholder"`
	// Accept and MaxFileSize are shown on file fields only.
	Accept      *[]string   `json:"accept,omitempty"`
	MaxFileSize *int64      `json:"max_file_size,omitempty"`
	Key         string      `json:"key"`
	Hidden      bool        `json:"hidden"`
	Page        int         `json:"page"`
	ShowIf      *showIfView `json:"show_if"`
}

type showIfView struct {
	Match      string          `json:"match"`
	Conditions []conditionView `json:"conditions"`
}

type conditionView struct {
	FieldID  string `json:"field_id"`
	Operator string `json:"operator"`
	Value    any    `json:"value"`
}

func presentShowIf(r *form.ShowIf) *showIfView {
	if r == nil {
		return nil
	}
	out := &showIfView{Match: r.Match(), Conditions: make([]conditionView, len(r.Conditions))}
	for i, c := range r.Conditions {
		var v any = c.Value
		switch c.Kind {
		case "boolean":
			v = c.Value == "true"
		case "number":
			v = json.Number(c.Value)
		}
		out.Conditions[i] = conditionView{FieldID: c.FieldID, Operator: c.Operator, Value: v}
	}
	return out
}

type formJSON struct {
	ID              string        `json:"id"`
	Name            string        `json:"name"`
	Description     *string       `json:"description"`
	Status          string        `json:"status"`
	Fields          *[]fieldJSON  `json:"fields,omitempty"`
	Settings        *settingsJSON `json:"settings,omitempty"`
	SubmissionCount int64         `json:"submission_count"`
	// ClosedReason names the closing rule that closes the form now (closes_at or
	// max_submissions), or is null.
	ClosedReason *string `json:"closed_reason"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
}

func presentForm(v forms.FormView, withFields bool, now time.Time) formJSON {
	f := v.Form
	out := formJSON{
		ID: f.ID(), Name: f.Name(), Description: f.Description(), Status: string(f.Status()),
		SubmissionCount: v.SubmissionCount,
		CreatedAt:       domain.FormatTime(f.CreatedAt()), UpdatedAt: domain.FormatTime(f.UpdatedAt()),
	}
	if r := f.ClosedReason(now, v.SubmissionCount); r != "" {
		reason := string(r)
		out.ClosedReason = &reason
	}
	if withFields {
		fields := make([]fieldJSON, 0, len(f.Fields()))
		for _, fl := range f.Fields() {
			fields = append(fields, presentField(fl))
		}
		out.Fields = &fields
		out.Settings = presentSettings(f.Settings())
	}
	return out
}

func presentField(f form.Field) fieldJSON {
	opts := f.Options
	if opts == nil {
		opts = []string{}
	}
	out := fieldJSON{ID: f.ID, Label: f.Label, Type: string(f.Type), Required: f.Required, Options: opts, Placeholder: f.Placeholder,
		Key: f.Key, Hidden: f.Hidden, Page: f.Page, ShowIf: presentShowIf(f.ShowIf)}
	if f.Type == form.TypeFile {
		accept := f.Accept
		if accept == nil {
			accept = []string{}
		}
		out.Accept = &accept
		if f.MaxFileBytes > 0 {
			size := f.MaxFileBytes
			out.MaxFileSize = &size
		}
	}
	return out
}

type envelope struct {
	Data       any     `json:"data"`
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

type webhookJSON struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	FormID    *string  `json:"form_id"`
	SecretSet bool     `json:"secret_set"`
	Enabled   bool     `json:"enabled"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at"`
}

// presentWebhook shows a webhook; the secret itself never leaves the server.
func presentWebhook(w *webhook.Webhook) webhookJSON {
	events := make([]string, 0, len(w.Events()))
	for _, t := range w.Events() {
		events = append(events, string(t))
	}
	return webhookJSON{ID: w.ID(), URL: w.URL(), Events: events, FormID: w.FormID(), SecretSet: w.SecretSet(), Enabled: w.Enabled(),
		CreatedAt: domain.FormatTime(w.CreatedAt()), UpdatedAt: domain.FormatTime(w.UpdatedAt())}
}

type attemptJSON struct {
	Attempt    int     `json:"attempt"`
	At         string  `json:"at"`
	StatusCode *int    `json:"status_code"`
	DurationMS int64   `json:"duration_ms"`
	Error      *string `json:"error"`
}

type deliveryJSON struct {
	ID            string        `json:"id"`
	WebhookID     string        `json:"webhook_id"`
	Event         string        `json:"event"`
	Status        string        `json:"status"`
	CreatedAt     string        `json:"created_at"`
	NextAttemptAt *string       `json:"next_attempt_at"`
	Attempts      []attemptJSON `json:"attempts"`
}

func presentDelivery(d *webhook.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID(), WebhookID: d.WebhookID(), Event: string(d.EventType()), Status: string(d.Status()),
		CreatedAt: domain.FormatTime(d.CreatedAt()), Attempts: []attemptJSON{}}
	if next := d.NextAttemptAt(); next != nil {
		s := domain.FormatTime(*next)
		out.NextAttemptAt = &s
	}
	for _, a := range d.Attempts() {
		out.Attempts = append(out.Attempts, attemptJSON{Attempt: a.Number, At: domain.FormatTime(a.At), StatusCode: a.StatusCode,
			DurationMS: a.Duration.Milliseconds(), Error: a.Error})
	}
	return out
}

// page is the pagination envelope of n items, newest first: item(i) presents the i-th item and
// gives its keyset position; when there is more, the last item's position is the next cursor.
func (a *api) page(list string, more bool, n int, item func(i int) (any, ports.Position)) envelope {
	data := make([]any, n)
	var last ports.Position
	for i := range n {
		data[i], last = item(i)
	}
	env := envelope{Data: data, HasMore: more}
	if more && n > 0 {
		cur := a.cursors.encode(list, last)
		env.NextCursor = &cur
	}
	return env
}
