package dashboard

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/auth"
	formsapp "github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// mountRouting adds the webhook pages: the list, the create and edit forms, the enabled
// switch, deletion, the delivery log with manual retry, and test events.
func (h *Handler) mountRouting(w *gin.RouterGroup) {
	w.GET("/webhooks", h.webhooks)
	w.GET("/webhooks/new", h.newWebhook)
	w.POST("/webhooks", h.createWebhook)
	w.GET("/webhooks/:id", h.webhookPage)
	w.POST("/webhooks/:id", h.updateWebhook)
	w.GET("/webhooks/:id/delete", h.deleteWebhookConfirm)
	w.POST("/webhooks/:id/delete", h.deleteWebhook)
	w.POST("/webhooks/:id/test", h.testWebhook)
	w.POST("/webhooks/:id/enabled", h.toggleWebhook)
	w.POST("/webhooks/:id/deliveries/:delivery/retry", h.retryDelivery)
	w.POST("/webhooks/:id/replay", h.startReplay)
}

// subscribable are the events a webhook may subscribe to, as the form shows them.
var subscribable = []struct{ Value, Label string }{
	{string(event.SubmissionCreated), "A response is submitted"},
	{string(event.SubmissionUpdated), "A response is changed"},
	{string(event.FormPublished), "A form is published"},
}

type webhookRow struct {
	ID, URL, Form    string
	Events           []string
	Secret           bool
	Enabled          bool
	LastStatus       string
	LastStatusClass  string
	LastAt           *time.Time
	Created, Updated time.Time
}

// webhookToggle is the enabled switch of a webhook, as the "webhooktoggle" template draws it.
type webhookToggle struct {
	ID, URL, From  string
	Enabled, Small bool
}

type webhooksData struct {
	Webhooks []webhookRow
	Pager    pager
}

type choice struct {
	Value, Label string
	Checked      bool
}

// webhookForm is the create and edit form.
type webhookForm struct {
	ID, Action, Submit string
	Secret             bool
	Events             []choice
	Forms              []choice
}

type attemptRow struct {
	Number     int
	At         time.Time
	StatusCode string
	Duration   string
	Error      string
	Failed     bool
}

// retryButton is a manual retry in a delivery or run log, as the "retry" template draws it:
// a post to Action, the button named for screen readers by What.
type retryButton struct{ Action, What string }

type deliveryRow struct {
	ID, Event, Status, StatusClass string
	Created                        time.Time
	Next                           *time.Time
	Attempts                       []attemptRow
	// Retry is set when the delivery failed.
	Retry *retryButton
}

type webhookData struct {
	Form       webhookForm
	Webhook    *webhookRow
	Deliveries []deliveryRow
	Pager      pager
	// Replays are the latest replays of the webhook's events; Replay is the form to start one.
	Replays []replayRow
	Replay  replayForm
}

func formNames(views []formsapp.FormView) map[string]string {
	m := map[string]string{}
	for _, v := range views {
		m[v.Form.ID()] = v.Form.Name()
	}
	return m
}

// workspaceForms are the first forms of the workspace, for the form selects.
func (h *Handler) workspaceForms(c *gin.Context) ([]formsapp.FormView, error) {
	views, _, err := h.app.Queries.ListForms.Handle(c.Request.Context(), formsapp.ListForms{
		Page: ports.Page{Limit: 200}})
	return views, err
}

// deliveryState is a delivery's status as a person reads it: a pending delivery whose last
// attempt failed is retrying.
func deliveryState(d *webhook.Delivery) (label, class string, failed bool) {
	attempts := d.Attempts()
	lastFailed := len(attempts) > 0 && attempts[len(attempts)-1].Error != nil
	switch {
	case d.Status() == webhook.StatusDelivered:
		return "Delivered", "badge-green", false
	case d.Status() == webhook.StatusUndeliverable:
		return "Failed", "badge-red", true
	case lastFailed:
		return "Failing, retrying", "badge-red", true
	}
	return "Pending", "badge-amber", false
}

func (h *Handler) webhookRowOf(c *gin.Context, w *webhook.Webhook, forms map[string]string) (webhookRow, error) {
	r := webhookRow{ID: w.ID(), URL: w.URL(), Secret: w.SecretSet(), Enabled: w.Enabled(), Created: w.CreatedAt(), Updated: w.UpdatedAt(),
		Form: "All forms"}
	if f := w.FormID(); f != nil {
		r.Form = forms[*f]
		if r.Form == "" {
			r.Form = *f
		}
	}
	for _, e := range w.Events() {
		r.Events = append(r.Events, string(e))
	}
	last, _, err := h.app.Queries.ListDeliveries.Handle(c.Request.Context(), webhooks.ListDeliveries{
		WebhookID: w.ID(), Page: ports.Page{Limit: 1}})
	if err != nil {
		return r, err
	}
	r.LastStatus, r.LastStatusClass = "No deliveries yet", ""
	if len(last) == 1 {
		r.LastStatus, r.LastStatusClass, _ = deliveryState(last[0])
		at := last[0].CreatedAt()
		r.LastAt = &at
	}
	return r, nil
}

func (h *Handler) webhooks(c *gin.Context) {
	ws, more, err := h.app.Queries.ListWebhooks.Handle(c.Request.Context(), webhooks.ListWebhooks{Page: pageOf(c)})
	if err != nil {
		h.fail(c, err)
		return
	}
	views, err := h.workspaceForms(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	names := formNames(views)
	d := webhooksData{}
	for _, w := range ws {
		r, err := h.webhookRowOf(c, w, names)
		if err != nil {
			h.fail(c, err)
			return
		}
		d.Webhooks = append(d.Webhooks, r)
	}
	if n := len(ws); n > 0 {
		d.Pager = pagerFor(c, more, ws[n-1].CreatedAt(), ws[n-1].ID())
	}
	h.render(c, http.StatusOK, "webhooks", &view{Title: "Webhooks", Data: d})
}

// formFor builds the webhook form; the chosen events and form come from v.Form after a failed
// post, else from w (nil: a new webhook).
func (h *Handler) formFor(c *gin.Context, v *view, w *webhook.Webhook, posted map[string]bool) (webhookForm, error) {
	views, err := h.workspaceForms(c)
	if err != nil {
		return webhookForm{}, err
	}
	f := webhookForm{Action: "/app/webhooks", Submit: "Create webhook"}
	events := posted
	formID := v.Form["form_id"]
	if w != nil {
		f.ID, f.Action, f.Submit, f.Secret = w.ID(), "/app/webhooks/"+w.ID(), "Save changes", w.SecretSet()
		if events == nil {
			events = map[string]bool{}
			for _, e := range w.Events() {
				events[string(e)] = true
			}
			if id := w.FormID(); id != nil {
				formID = *id
			}
			v.Form["url"] = w.URL()
		}
	}
	if events == nil {
		events = map[string]bool{string(event.SubmissionCreated): true}
	}
	for _, e := range subscribable {
		f.Events = append(f.Events, choice{Value: e.Value, Label: e.Label, Checked: events[e.Value]})
	}
	f.Forms = append(f.Forms, choice{Value: "", Label: "All forms of the workspace", Checked: formID == ""})
	for _, fv := range views {
		f.Forms = append(f.Forms, choice{Value: fv.Form.ID(), Label: fv.Form.Name(), Checked: fv.Form.ID() == formID})
	}
	return f, nil
}

func (h *Handler) newWebhook(c *gin.Context) {
	v := &view{Title: "New webhook", Form: map[string]string{}}
	f, err := h.formFor(c, v, nil, nil)
	if err != nil {
		h.fail(c, err)
		return
	}
	v.Data = webhookData{Form: f}
	h.render(c, http.StatusOK, "webhook", v)
}

// postedWebhook reads the form: URL, the checked events, the form ("" for all) and a new
// secret ("" keeps the current one).
func postedWebhook(c *gin.Context) (url string, events []string, checked map[string]bool, formID *string, secret string) {
	url = strings.TrimSpace(c.PostForm("url"))
	checked = map[string]bool{}
	for _, e := range c.PostFormArray("events") {
		events = append(events, e)
		checked[e] = true
	}
	if events == nil {
		events = []string{}
	}
	if id := c.PostForm("form_id"); id != "" {
		formID = &id
	}
	return url, events, checked, formID, c.PostForm("secret")
}

var webhookFields = map[string]string{"url": "url", "events": "events", "form_id": "form_id", "secret": "secret"}

// webhookInvalid draws the form again with the domain's messages next to their controls.
func (h *Handler) webhookInvalid(c *gin.Context, err error, w *webhook.Webhook, url, formID string, checked map[string]bool) {
	b, ok := h.invalid(c, err)
	if !ok {
		return
	}
	v := &view{Title: "New webhook", Form: map[string]string{"url": url, "form_id": formID}}
	known := map[string]string{}
	for _, d := range b.Details {
		name := d.Field
		if i := strings.IndexByte(name, '['); i >= 0 {
			name = name[:i]
		}
		if n, ok := webhookFields[name]; ok {
			known[d.Field] = n
		}
	}
	v.Errors, v.Error = fieldErrors(b, known)
	var d webhookData
	if w != nil {
		v.Title = "Webhook"
		r, rerr := h.webhookData(c, w)
		if rerr != nil {
			h.fail(c, rerr)
			return
		}
		d = r
	}
	f, ferr := h.formFor(c, v, w, checked)
	if ferr != nil {
		h.fail(c, ferr)
		return
	}
	v.Form["url"] = url
	d.Form = f
	v.Data = d
	h.render(c, b.Status, "webhook", v)
}

func (h *Handler) createWebhook(c *gin.Context) {
	url, events, checked, formID, secret := postedWebhook(c)
	draft := webhook.Draft{URL: url, Events: events, FormID: formID}
	if secret != "" {
		draft.Secret = &secret
	}
	w, err := h.app.Commands.CreateWebhook.Handle(c.Request.Context(), webhooks.CreateWebhook{Draft: draft})
	if err != nil {
		h.webhookInvalid(c, err, nil, url, deref(formID), checked)
		return
	}
	h.redirect(c, "/app/webhooks/"+w.ID(), "Webhook created. Send a test event to try it.")
}

func (h *Handler) getWebhook(c *gin.Context) (*webhook.Webhook, error) {
	return h.app.Queries.GetWebhook.Handle(c.Request.Context(), webhooks.GetWebhook{ID: c.Param("id")})
}

// webhookData is the webhook's summary, its replays and a page of its delivery log.
func (h *Handler) webhookData(c *gin.Context, w *webhook.Webhook) (webhookData, error) {
	return h.webhookDataWith(c, w, "", "")
}

// webhookDataWith is webhookData with the replay form's since and until as posted.
func (h *Handler) webhookDataWith(c *gin.Context, w *webhook.Webhook, since, until string) (webhookData, error) {
	views, err := h.workspaceForms(c)
	if err != nil {
		return webhookData{}, err
	}
	r, err := h.webhookRowOf(c, w, formNames(views))
	if err != nil {
		return webhookData{}, err
	}
	ds, more, err := h.app.Queries.ListDeliveries.Handle(c.Request.Context(), webhooks.ListDeliveries{
		WebhookID: w.ID(), Page: pageOf(c)})
	if err != nil {
		return webhookData{}, err
	}
	d := webhookData{Webhook: &r}
	if d.Replays, d.Replay, err = h.replaysOf(c, w, ds, since, until); err != nil {
		return webhookData{}, err
	}
	for _, x := range ds {
		row := deliveryRow{ID: x.ID(), Event: string(x.EventType()), Created: x.CreatedAt(), Next: x.NextAttemptAt()}
		var failed bool
		row.Status, row.StatusClass, failed = deliveryState(x)
		if failed {
			row.Retry = &retryButton{Action: "/app/webhooks/" + w.ID() + "/deliveries/" + x.ID() + "/retry", What: "delivery " + x.ID()}
		}
		attempts := x.Attempts()
		for i := len(attempts) - 1; i >= 0; i-- {
			a := attempts[i]
			ar := attemptRow{Number: a.Number, At: a.At, StatusCode: "No answer", Duration: fmt.Sprintf("%d ms", a.Duration.Milliseconds())}
			if a.StatusCode != nil {
				ar.StatusCode = fmt.Sprint(*a.StatusCode)
			}
			if a.Error != nil {
				ar.Error, ar.Failed = *a.Error, true
			}
			row.Attempts = append(row.Attempts, ar)
		}
		d.Deliveries = append(d.Deliveries, row)
	}
	if n := len(ds); n > 0 {
		d.Pager = pagerFor(c, more, ds[n-1].CreatedAt(), ds[n-1].ID())
	}
	return d, nil
}

func (h *Handler) webhookPage(c *gin.Context) {
	w, err := h.getWebhook(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d, err := h.webhookData(c, w)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := &view{Title: "Webhook", Form: map[string]string{}}
	if d.Form, err = h.formFor(c, v, w, nil); err != nil {
		h.fail(c, err)
		return
	}
	v.Data = d
	h.render(c, http.StatusOK, "webhook", v)
}

func (h *Handler) updateWebhook(c *gin.Context) {
	w, err := h.getWebhook(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	url, events, checked, formID, secret := postedWebhook(c)
	patch := webhook.Patch{URL: &url, Events: &events, FormID: &formID}
	if secret != "" {
		s := &secret
		patch.Secret = &s
	} else if c.PostForm("remove_secret") == "1" {
		var none *string
		patch.Secret = &none
	}
	if _, err := h.app.Commands.UpdateWebhook.Handle(c.Request.Context(), webhooks.UpdateWebhook{
		ID: w.ID(), Patch: patch}); err != nil {
		h.webhookInvalid(c, err, w, url, deref(formID), checked)
		return
	}
	h.redirect(c, "/app/webhooks/"+w.ID(), "Webhook saved.")
}

func (h *Handler) deleteWebhookConfirm(c *gin.Context) {
	w, err := h.getWebhook(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if !principal(c).Allows(access.Write) {
		h.fail(c, auth.ErrForbidden)
		return
	}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Delete webhook", Data: confirmData{
		Heading:    "Delete the webhook to " + w.URL() + "?",
		Paragraphs: []string{"Its delivery log goes with it, and deliveries still waiting are not sent. This cannot be undone."},
		Action:     "/app/webhooks/" + w.ID() + "/delete", Button: "Delete webhook", Cancel: "/app/webhooks/" + w.ID(), Danger: true}})
}

func (h *Handler) deleteWebhook(c *gin.Context) {
	if err := h.app.Commands.DeleteWebhook.Handle(c.Request.Context(), webhooks.DeleteWebhook{
		ID: c.Param("id")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/webhooks", "Webhook deleted.")
}

func (h *Handler) testWebhook(c *gin.Context) {
	id := c.Param("id")
	if _, err := h.app.Commands.SendTestEvent.Handle(c.Request.Context(), webhooks.SendTestEvent{
		WebhookID: id}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/webhooks/"+id+"#deliveries", "Test event queued. Reload the page to see its delivery.")
}

// toggleWebhook switches deliveries off or on, then goes back to the list or the webhook's page.
func (h *Handler) toggleWebhook(c *gin.Context) {
	id := c.Param("id")
	on := c.PostForm("enabled") == "1"
	if _, err := h.app.Commands.UpdateWebhook.Handle(c.Request.Context(), webhooks.UpdateWebhook{
		ID: id, Patch: webhook.Patch{Enabled: &on}}); err != nil {
		h.fail(c, err)
		return
	}
	msg := "Webhook disabled. Events that happen while it is disabled are skipped, not sent later."
	if on {
		msg = "Webhook enabled. Events from now on are sent."
	}
	back := "/app/webhooks/" + id
	if c.PostForm("from") == "list" {
		back = "/app/webhooks"
	}
	h.redirect(c, back, msg)
}

func (h *Handler) retryDelivery(c *gin.Context) {
	id := c.Param("id")
	if _, err := h.app.Commands.RetryDelivery.Handle(c.Request.Context(), webhooks.RetryDelivery{
		WebhookID: id, ID: c.Param("delivery")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/webhooks/"+id+"#deliveries", "Delivery queued again. Reload the page to see the new attempt.")
}
