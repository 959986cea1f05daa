package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/retry"
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
	Help        *string  `json:"help"`
	// Accept and MaxFileSize are shown on file fields only.
	Accept      *[]string   `json:"accept,omitempty"`
	MaxFileSize *int64      `json:"max_file_size,omitempty"`
	Key         string      `json:"key"`
	Hidden      bool        `json:"hidden"`
	Page        int         `json:"page"`
	ShowIf      *showIfView `json:"show_if"`

	// Translations are the field's text in the form's other languages (languages.go).
	Translations map[string]fieldTranslationView `json:"translations"`
	// Scores are shown on choice fields that have them.
	Scores []float64 `json:"scores,omitempty"`
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
	Ref             *string       `json:"ref"`
	Name            string        `json:"name"`
	Description     *string       `json:"description"`
	Status          string        `json:"status"`
	Version         int           `json:"version"`
	Fields          *[]fieldJSON  `json:"fields,omitempty"`
	Settings        *settingsJSON `json:"settings,omitempty"`
	SubmissionCount int64         `json:"submission_count"`
	// ClosedReason names the closing rule that closes the form now (closes_at or
	// max_submissions), or is null.
	ClosedReason *string `json:"closed_reason"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`

	// Languages and Translations are shown with the fields (languages.go).
	Languages    *[]string                       `json:"languages,omitempty"`
	Translations *map[string]formTranslationView `json:"translations,omitempty"`
}

func presentForm(v forms.FormView, withFields bool, now time.Time) formJSON {
	f := v.Form
	out := formJSON{
		ID: f.ID(), Ref: f.Ref(), Name: f.Name(), Description: f.Description(), Status: string(f.Status()), Version: f.Version(),
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
		out.Settings = presentSettings(f.ID(), f.Settings())
		langs, tr := presentLanguages(f)
		out.Languages, out.Translations = &langs, &tr
	}
	return out
}

func presentField(f form.Field) fieldJSON {
	opts := f.Options
	if opts == nil {
		opts = []string{}
	}
	out := fieldJSON{ID: f.ID, Label: f.Label, Type: string(f.Type), Required: f.Required, Options: opts, Placeholder: f.Placeholder, Help: f.Help,
		Key: f.Key, Hidden: f.Hidden, Page: f.Page, ShowIf: presentShowIf(f.ShowIf), Scores: f.Scores}
	out.Translations = presentFieldTranslations(f.Translations)
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
	return deliveryJSON{ID: d.ID(), WebhookID: d.WebhookID(), Event: string(d.EventType()), Status: string(d.Status()),
		CreatedAt: domain.FormatTime(d.CreatedAt()), NextAttemptAt: optionalTime(d.NextAttemptAt()), Attempts: presentAttempts(d.Attempts())}
}

// presentAttempts lists the attempts of a delivery or of a run's action, oldest first ([] when none).
func presentAttempts(as []retry.Attempt) []attemptJSON {
	out := make([]attemptJSON, 0, len(as))
	for _, a := range as {
		out = append(out, attemptJSON{Attempt: a.Number, At: domain.FormatTime(a.At), StatusCode: a.StatusCode,
			DurationMS: a.Duration.Milliseconds(), Error: a.Error})
	}
	return out
}

// listPage answers a paginated list, newest first: it reads the page the request asks for
// (limit, and a cursor valid only for list), runs query for it and presents each item with
// its keyset position; when there is more, the last item's position is the next cursor.
func listPage[T any](a *api, c *gin.Context, list string, query func(ctx context.Context, page ports.Page) ([]T, bool, error), item func(T) (any, ports.Position)) {
	page, err := a.pageOf(c, list)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	items, more, err := query(c.Request.Context(), page)
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	data := make([]any, len(items))
	var last ports.Position
	for i, it := range items {
		data[i], last = item(it)
	}
	env := envelope{Data: data, HasMore: more}
	if more && len(items) > 0 {
		cur := a.cursors.encode(list, last)
		env.NextCursor = &cur
	}
	c.JSON(http.StatusOK, env)
}
