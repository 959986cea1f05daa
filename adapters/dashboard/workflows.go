package dashboard

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// mountWorkflows adds the workflow pages: the list, the builder (conditions and actions as
// form rows; "Add" and "Remove" buttons post the form back, so it works without JavaScript),
// enable and disable, deletion, and the run log with manual retry of failed runs.
func (h *Handler) mountWorkflows(w *gin.RouterGroup) {
	w.GET("/workflows", h.workflows)
	w.GET("/workflows/new", h.newWorkflow)
	w.POST("/workflows", h.saveWorkflow)
	w.GET("/workflows/:id", h.workflowPage)
	w.POST("/workflows/:id", h.saveWorkflow)
	w.POST("/workflows/:id/enabled", h.toggleWorkflow)
	w.POST("/workflows/:id/actions/:action/test", h.testEmail)
	w.POST("/workflows/:id/runs/:run/retry", h.retryRun)
	w.GET("/workflows/:id/delete", h.deleteWorkflowConfirm)
	w.POST("/workflows/:id/delete", h.deleteWorkflow)
}

// actionTypes are the action types the builder offers, with the config keys each takes.
var actionTypes = []struct {
	Type, Label string
	Keys        []string
}{
	{"send_email", "Send an email", []string{"to", "subject", "body"}},
	{"send_webhook", "Post to a URL (webhook)", []string{"url", "secret"}},
	{"chat_message", "Post to Slack", []string{"channel", "message"}},
	{"spreadsheet_append", "Append a row to Google Sheets", []string{"spreadsheet_id", "sheet_name", "row_mapping"}},
	{"automation_trigger", "Trigger Zapier, Make or n8n", []string{"url", "platform", "secret"}},
}

var keyLabels = map[string]string{"to": "To", "subject": "Subject", "body": "Body", "url": "URL", "secret": "Signing secret",
	"channel": "Channel", "message": "Message", "spreadsheet_id": "Spreadsheet ID", "sheet_name": "Sheet name",
	"row_mapping": "Columns (one “Column = template” per line)", "platform": "Platform"}

// eventWords are the events a workflow runs on, as the editor and the run log say them.
var eventWords = []selectOption{
	{Value: string(event.SubmissionCreated), Label: "A response is submitted"},
	{Value: string(event.SubmissionUpdated), Label: "A response is edited"},
}

func eventWord(e string) string {
	for _, o := range eventWords {
		if o.Value == e {
			return o.Label
		}
	}
	return e
}

// actionLabel is an action type in words.
func actionLabel(typ string) string {
	for _, t := range actionTypes {
		if t.Type == typ {
			return t.Label
		}
	}
	return typ
}

type conditionRow struct {
	// N is the row's index in the posted form; Number counts from 1 for people.
	N, Number          int
	Field, Op, Value   string
	Fields             []selectOption
	Ops                []selectOption
	FieldErr, ValueErr string
}

type configInput struct {
	Name, Key, Label, Value, Error string
	Area, Secret, Platform         bool
	SecretSet                      bool
	Platforms                      []choice
}

type actionRow struct {
	// N is the row's index in the posted form; Number counts from 1 for people.
	N, Number       int
	ID, Type, Label string
	Inputs          []configInput
	Error           string
	Last            bool
	// Email is set on a send_email action: the editor warns when SMTP is not configured and
	// offers "Send a test" on a saved one when it is.
	Email bool
}

// fieldKey is a field as templates name it: by key ({{full_name}}), or by ID when it has none.
type fieldKey struct{ Name, Label string }

type workflowForm struct {
	ID, Action, FormID, FormName, Name, Event string
	Enabled                                   bool
	Conditions                                []conditionRow
	Actions                                   []actionRow
	Fields                                    []fieldKey
	Types                                     []choice
	Events                                    []selectOption
	// SMTP is false when email is not set up on this server: email actions carry a warning.
	SMTP bool
	// CanTest offers "Send a test" on the saved email actions.
	CanTest bool
}

type runAction struct {
	Number              int
	Type, Label         string
	Status, StatusClass string
	Attempts            []attemptRow
}

type runRow struct {
	ID, Status, StatusClass, Event, Submission string
	Created                                    time.Time
	Actions                                    []runAction
	// Failure says, in words, which action failed and why; Detail is the stored error.
	Failure, Detail string
	// Retry is set when the run failed.
	Retry *retryButton
}

type workflowRow struct {
	ID, Name, Form string
	Enabled        bool
	Actions        int
	Updated        time.Time
}

type workflowsData struct {
	Workflows []workflowRow
	Forms     []choice
	Pager     pager
}

type workflowData struct {
	Form  workflowForm
	Saved bool
	Runs  []runRow
	Pager pager
}

func (h *Handler) workflows(c *gin.Context) {
	views, err := h.workspaceForms(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	q := workflows.ListWorkflows{Page: pageOf(c)}
	if f := c.Query("form"); f != "" {
		q.FormID = &f
	}
	ws, more, err := h.app.Queries.ListWorkflows.Handle(c.Request.Context(), q)
	if err != nil {
		h.fail(c, err)
		return
	}
	names := formNames(views)
	d := workflowsData{}
	for _, v := range views {
		d.Forms = append(d.Forms, choice{Value: v.Form.ID(), Label: v.Form.Name(), Checked: v.Form.ID() == c.Query("form")})
	}
	for _, w := range ws {
		d.Workflows = append(d.Workflows, workflowRow{ID: w.ID(), Name: w.Name(), Form: names[w.FormID()], Enabled: w.Enabled(),
			Actions: len(w.Actions()), Updated: w.UpdatedAt()})
	}
	if n := len(ws); n > 0 {
		d.Pager = pagerFor(c, more, ws[n-1].CreatedAt(), ws[n-1].ID())
	}
	h.render(c, http.StatusOK, "workflows", &view{Title: "Workflows", Data: d})
}

// builder fills the form's choices and the field keys of its form.
func (h *Handler) workflowBuilder(c *gin.Context, f *workflowForm) error {
	fv, err := h.app.Queries.GetForm.Handle(c.Request.Context(), forms.GetForm{ID: f.FormID})
	if err != nil {
		return err
	}
	f.FormName = fv.Form.Name()
	f.SMTP = h.opts.Mail != nil
	f.CanTest = f.SMTP && f.ID != "" && principal(c).Require(access.Write) == nil
	fields := fv.Form.Fields()
	for _, fl := range fields {
		name := fl.Key
		if name == "" {
			name = fl.ID
		}
		f.Fields = append(f.Fields, fieldKey{Name: name, Label: fl.Label})
	}
	for _, t := range actionTypes {
		f.Types = append(f.Types, choice{Value: t.Type, Label: t.Label})
	}
	f.Events = nil
	for _, e := range eventWords {
		e.Selected = e.Value == f.Event
		f.Events = append(f.Events, e)
	}
	for i := range f.Conditions {
		cd := &f.Conditions[i]
		cd.N, cd.Number = i, i+1
		// The field picker: the form's fields by label; a saved condition on a field since
		// removed keeps its ID, shown as "(removed field)", and stays valid.
		cd.Fields = []selectOption{{Value: "", Label: "Choose a field", Selected: cd.Field == ""}}
		known := cd.Field == ""
		for _, fl := range fields {
			cd.Fields = append(cd.Fields, selectOption{Value: fl.ID, Label: fl.Label, Selected: fl.ID == cd.Field})
			known = known || fl.ID == cd.Field
		}
		if !known {
			cd.Fields = append(cd.Fields, selectOption{Value: cd.Field, Label: "(removed field)", Selected: true})
		}
		cd.Ops = nil
		for _, o := range operatorWords {
			o.Selected = o.Value == cd.Op
			cd.Ops = append(cd.Ops, o)
		}
	}
	for i := range f.Actions {
		f.Actions[i].N, f.Actions[i].Number, f.Actions[i].Last = i, i+1, i == len(f.Actions)-1
		f.Actions[i].Email = f.Actions[i].Type == "send_email"
		for j := range f.Actions[i].Inputs {
			f.Actions[i].Inputs[j].Name = fmt.Sprintf("a%d.%s", i, f.Actions[i].Inputs[j].Key)
		}
	}
	return nil
}

func newAction(typ string, config map[string]any) (actionRow, bool) {
	for _, t := range actionTypes {
		if t.Type != typ {
			continue
		}
		a := actionRow{Type: typ, Label: t.Label}
		for _, k := range t.Keys {
			in := configInput{Key: k, Label: keyLabels[k], Area: k == "body" || k == "message" || k == "row_mapping", Secret: k == "secret",
				Platform: k == "platform"}
			switch v := config[k].(type) {
			case string:
				in.Value = v
			case map[string]any:
				var lines []string
				for col, tmpl := range v {
					lines = append(lines, fmt.Sprintf("%s = %v", col, tmpl))
				}
				sort.Strings(lines)
				in.Value = strings.Join(lines, "\n")
			}
			if in.Secret {
				set, _ := config[workflow.SecretSetKey].(bool)
				stored, _ := config[workflow.SecretKey].(string)
				in.SecretSet = set || stored != ""
				in.Value = ""
			}
			if in.Platform {
				for _, p := range []string{"", "zapier", "make", "n8n", "generic"} {
					label := p
					if p == "" {
						label = "Not said"
					}
					in.Platforms = append(in.Platforms, choice{Value: p, Label: label, Checked: p == in.Value})
				}
			}
			a.Inputs = append(a.Inputs, in)
		}
		return a, true
	}
	return actionRow{}, false
}

func formOfWorkflow(w *workflow.Workflow) workflowForm {
	f := workflowForm{ID: w.ID(), Action: "/app/workflows/" + w.ID(), FormID: w.FormID(), Name: w.Name(), Enabled: w.Enabled(),
		Event: string(w.Trigger().Type)}
	for _, cd := range w.Trigger().Conditions {
		f.Conditions = append(f.Conditions, conditionRow{Field: cd.FieldID, Op: string(cd.Operator), Value: cd.Value})
	}
	for _, a := range w.Actions() {
		if r, ok := newAction(a.Type, a.Config); ok {
			r.ID = a.ID
			f.Actions = append(f.Actions, r)
		}
	}
	return f
}

// postedWorkflow reads the builder back, applying its Add, Remove and Move buttons.
func postedWorkflow(c *gin.Context) (f workflowForm, op string) {
	f = workflowForm{FormID: c.PostForm("form_id"), Name: strings.TrimSpace(c.PostForm("name")), Event: c.PostForm("event"),
		Enabled: c.PostForm("enabled") == "1"}
	op = c.PostForm("op")
	nc, _ := strconv.Atoi(c.PostForm("conditions"))
	for i := 0; i < nc && i < 50; i++ {
		if op == fmt.Sprintf("remove-condition-%d", i) {
			continue
		}
		p := fmt.Sprintf("c%d.", i)
		f.Conditions = append(f.Conditions, conditionRow{Field: strings.TrimSpace(c.PostForm(p + "field")), Op: c.PostForm(p + "op"), Value: c.PostForm(p + "value")})
	}
	if op == "add-condition" {
		f.Conditions = append(f.Conditions, conditionRow{Op: "equals"})
	}
	na, _ := strconv.Atoi(c.PostForm("actions"))
	for i := 0; i < na && i < 50; i++ {
		if op == fmt.Sprintf("remove-action-%d", i) {
			continue
		}
		p := fmt.Sprintf("a%d.", i)
		config := map[string]any{}
		for _, k := range []string{"to", "subject", "body", "url", "secret", "channel", "message", "spreadsheet_id", "sheet_name", "row_mapping", "platform"} {
			if v, ok := c.GetPostForm(p + k); ok {
				config[k] = v
			}
		}
		if r, ok := newAction(c.PostForm(p+"type"), config); ok {
			r.ID = c.PostForm(p + "id")
			// What was typed into a secret stays out of the page; it is posted again only on save.
			f.Actions = append(f.Actions, r)
		}
	}
	if t, ok := strings.CutPrefix(op, "add-action"); ok && t == "" {
		if r, ok := newAction(c.PostForm("new_action"), nil); ok {
			f.Actions = append(f.Actions, r)
		}
	}
	for i := range f.Actions {
		if op == fmt.Sprintf("up-%d", i) && i > 0 {
			f.Actions[i-1], f.Actions[i] = f.Actions[i], f.Actions[i-1]
		}
		if op == fmt.Sprintf("down-%d", i) && i+1 < len(f.Actions) {
			f.Actions[i], f.Actions[i+1] = f.Actions[i+1], f.Actions[i]
			break
		}
	}
	return f, op
}

// specs turns the builder's rows into the domain's drafts; secrets left empty are left out,
// so a saved one is kept.
func specs(c *gin.Context, f workflowForm) (workflow.TriggerSpec, []workflow.ActionSpec) {
	t := workflow.TriggerSpec{Type: f.Event}
	for _, cd := range f.Conditions {
		t.Conditions = append(t.Conditions, workflow.ConditionSpec{FieldID: cd.Field, Operator: cd.Op, Value: cd.Value, HasValue: true})
	}
	var as []workflow.ActionSpec
	for i, a := range f.Actions {
		cfg := map[string]any{}
		for _, in := range a.Inputs {
			v := in.Value
			if in.Secret {
				v = c.PostForm(fmt.Sprintf("a%d.secret", i))
				if v == "" {
					continue
				}
			}
			switch {
			case in.Key == "row_mapping":
				m := map[string]any{}
				for _, line := range strings.Split(v, "\n") {
					if col, tmpl, ok := strings.Cut(line, "="); ok && strings.TrimSpace(col) != "" {
						m[strings.TrimSpace(col)] = strings.TrimSpace(tmpl)
					}
				}
				cfg[in.Key] = m
			case in.Key == "platform" && v == "":
			default:
				cfg[in.Key] = strings.TrimSpace(v)
			}
		}
		as = append(as, workflow.ActionSpec{ID: a.ID, Type: a.Type, Config: cfg})
	}
	return t, as
}

func (h *Handler) newWorkflow(c *gin.Context) {
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return
	}
	f := workflowForm{Action: "/app/workflows", FormID: c.Query("form"), Event: "submission.created", Enabled: true,
		Conditions: []conditionRow{}, Actions: []actionRow{}}
	if f.FormID == "" {
		h.redirect(c, "/app/workflows", "Choose the form the workflow belongs to.")
		return
	}
	if a, ok := newAction("send_email", nil); ok {
		f.Actions = append(f.Actions, a)
	}
	if err := h.workflowBuilder(c, &f); err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "workflow", &view{Title: "New workflow", Data: workflowData{Form: f}})
}

func (h *Handler) getWorkflow(c *gin.Context) (*workflow.Workflow, error) {
	return h.app.Queries.GetWorkflow.Handle(c.Request.Context(), workflows.GetWorkflow{ID: c.Param("id")})
}

func (h *Handler) workflowPage(c *gin.Context) {
	w, err := h.getWorkflow(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	f := formOfWorkflow(w)
	if err := h.workflowBuilder(c, &f); err != nil {
		h.fail(c, err)
		return
	}
	d := workflowData{Form: f, Saved: true}
	runs, more, err := h.app.Queries.ListRuns.Handle(c.Request.Context(), workflows.ListRuns{WorkflowID: w.ID(), Page: pageOf(c)})
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, r := range runs {
		d.Runs = append(d.Runs, runOf(w.ID(), r))
	}
	if n := len(runs); n > 0 {
		d.Pager = pagerFor(c, more, runs[n-1].CreatedAt(), runs[n-1].ID())
	}
	h.render(c, http.StatusOK, "workflow", &view{Title: "Workflow " + w.Name(), Form: map[string]string{"name": w.Name()}, Data: d})
}

// runStatusWords and actionStatusWords say where a run and its actions stand.
var (
	runStatusWords = map[workflow.RunStatus]string{workflow.RunQueued: "Queued", workflow.RunRunning: "Running",
		workflow.RunSucceeded: "Succeeded", workflow.RunFailed: "Failed"}
	actionStatusWords = map[workflow.ActionRunStatus]string{workflow.ActionRunPending: "Waiting", workflow.ActionRunSucceeded: "Done",
		workflow.ActionRunFailed: "Failed", workflow.ActionRunSkipped: "Skipped: an earlier action failed"}
)

// runOf draws one run of the log: its event in words, its actions numbered from 1 with their
// types in words, and, when it failed, which action failed and why.
func runOf(workflowID string, r *workflow.Run) runRow {
	row := runRow{ID: r.ID(), Status: runStatusWords[r.Status()], Event: eventWord(string(r.EventType())), Submission: r.SubmissionID(),
		Created: r.CreatedAt()}
	if row.Status == "" {
		row.Status = string(r.Status())
	}
	row.StatusClass = map[workflow.RunStatus]string{workflow.RunSucceeded: "badge-green", workflow.RunFailed: "badge-red"}[r.Status()]
	if r.Status() == workflow.RunFailed {
		row.Retry = &retryButton{Action: "/app/workflows/" + workflowID + "/runs/" + r.ID() + "/retry", What: "run " + r.ID()}
	}
	for n, a := range r.Actions() {
		ra := runAction{Number: n + 1, Type: a.Type, Label: actionLabel(a.Type), Status: actionStatusWords[a.Status]}
		if ra.Status == "" {
			ra.Status = string(a.Status)
		}
		ra.StatusClass = map[workflow.ActionRunStatus]string{workflow.ActionRunSucceeded: "badge-green", workflow.ActionRunFailed: "badge-red"}[a.Status]
		for i := len(a.Attempts) - 1; i >= 0; i-- {
			at := a.Attempts[i]
			ar := attemptRow{Number: at.Number, At: at.At, StatusCode: "None", Duration: fmt.Sprintf("%d ms", at.Duration.Milliseconds())}
			if at.StatusCode != nil {
				ar.StatusCode = fmt.Sprint(*at.StatusCode)
			}
			if at.Error != nil {
				ar.Error, ar.Failed = *at.Error, true
			}
			ra.Attempts = append(ra.Attempts, ar)
		}
		if a.Status == workflow.ActionRunFailed && row.Failure == "" {
			var code *int
			msg := ""
			if k := len(a.Attempts); k > 0 {
				code = a.Attempts[k-1].StatusCode
				if e := a.Attempts[k-1].Error; e != nil {
					msg = *e
				}
			}
			row.Failure = fmt.Sprintf("Action %d (%s) failed: %s", ra.Number, ra.Label, failureInWords(msg, code))
			row.Detail = msg
		}
		row.Actions = append(row.Actions, ra)
	}
	return row
}

// failureInWords turns an action's stored error into a sentence a form owner can act on; the
// error itself stays in the run log's details.
func failureInWords(msg string, code *int) string {
	m := strings.ToLower(msg)
	has := func(parts ...string) bool {
		for _, p := range parts {
			if strings.Contains(m, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("email is not configured"):
		return "email is not set up on this server, so nothing was sent. An administrator needs to configure SMTP."
	case has("is not one valid email address"):
		return "the recipient is not a valid email address. Check the action's “To” and the answer it uses."
	case has("invalid action config"):
		return "the action's settings are incomplete or invalid. Open the action above, correct it and save."
	case has("is not connected"):
		return "the integration it needs is not connected. Connect it under Integrations, then retry the run."
	case has("is not available"):
		return "this kind of action is not available on this server."
	case has("circuit breaker open"):
		return "paused after repeated failures at the destination; it is tried again later."
	case code != nil && (*code == 401 || *code == 403):
		return fmt.Sprintf("the destination refused the request (HTTP %d): check the URL, the secret or the connection.", *code)
	case code != nil && *code == 404:
		return "the destination answered that the address does not exist (HTTP 404): check the URL."
	case code != nil && *code >= 500:
		return fmt.Sprintf("the destination had an error (HTTP %d); retrying later may work.", *code)
	case code != nil && *code >= 400:
		return fmt.Sprintf("the destination refused the request (HTTP %d).", *code)
	case has("canceled", "cancelled"):
		return "the attempt was interrupted before it finished (the server was stopping); retry the run."
	case has("timeout", "deadline exceeded"):
		return "the destination did not answer in time."
	case has("smtp"):
		return "the mail server could not be reached or refused the message."
	case has("connection refused", "no such host", "dial tcp", "unreachable"):
		return "the destination could not be reached."
	case has("certificate", "tls"):
		return "a secure connection to the destination could not be made (its certificate is not trusted)."
	case msg == "":
		return "no reason was recorded."
	}
	return "the destination did not accept it. The technical detail is below."
}

// saveWorkflow creates or updates the workflow, or only draws the builder again when a row
// button (add, remove, move) was pressed.
func (h *Handler) saveWorkflow(c *gin.Context) {
	f, op := postedWorkflow(c)
	id := c.Param("id")
	f.Action = "/app/workflows"
	var stored *workflow.Workflow
	if id != "" {
		w, err := h.getWorkflow(c)
		if err != nil {
			h.fail(c, err)
			return
		}
		stored = w
		f.ID, f.FormID, f.Action = w.ID(), w.FormID(), "/app/workflows/"+w.ID()
	}
	v := &view{Title: "Workflow", Form: map[string]string{"name": f.Name}}
	if op != "" && op != "save" {
		if err := h.workflowBuilder(c, &f); err != nil {
			h.fail(c, err)
			return
		}
		v.Data = workflowData{Form: f, Saved: id != ""}
		h.render(c, http.StatusOK, "workflow", v)
		return
	}
	trigger, actions := specs(c, f)
	var err error
	if id == "" {
		var w *workflow.Workflow
		w, err = h.app.Commands.CreateWorkflow.Handle(c.Request.Context(), workflows.CreateWorkflow{
			Draft: workflow.Draft{Name: f.Name, FormID: f.FormID, Trigger: trigger, Actions: actions, Enabled: &f.Enabled}})
		if err == nil {
			id = w.ID()
		}
	} else {
		patch := workflow.Patch{Name: &f.Name, Enabled: &f.Enabled, Trigger: &trigger, Actions: &actions}
		// An unchanged trigger is left out, so that a condition on a question removed from the
		// form since stays as saved (it sees no value) while the rest is edited.
		if sameTrigger(stored.Trigger(), trigger) {
			patch.Trigger = nil
		}
		_, err = h.app.Commands.UpdateWorkflow.Handle(c.Request.Context(), workflows.UpdateWorkflow{ID: id, Patch: patch})
	}
	if err == nil {
		h.redirect(c, "/app/workflows/"+id, "Workflow saved.")
		return
	}
	b, ok := h.invalid(c, err)
	if !ok {
		return
	}
	known := map[string]string{"name": "name", "trigger.type": "event"}
	// A condition's question is picked, not typed: its errors are said in those words.
	picked := map[string]string{}
	for _, d := range b.Details {
		var i int
		var rest string
		if n, _ := fmt.Sscanf(strings.Replace(d.Field, "trigger.config.", "trigger.", 1), "trigger.conditions[%d].%s", &i, &rest); n == 2 && i < len(f.Conditions) {
			known[d.Field] = fmt.Sprintf("c%d", i)
			if rest == "field_id" && d.Code == "required" {
				picked[known[d.Field]] = "Choose the question this condition tests."
			} else if rest == "field_id" && d.Code == "unknown_field" {
				picked[known[d.Field]] = "This question is not in the form; choose another."
			}
		} else if n, _ := fmt.Sscanf(d.Field, "actions[%d].%s", &i, &rest); n >= 1 && i < len(f.Actions) {
			known[d.Field] = fmt.Sprintf("a%d", i)
		}
	}
	v.Errors, v.Error = fieldErrors(b, known)
	for k, msg := range picked {
		v.Errors[k] = msg
	}
	for i := range f.Conditions {
		f.Conditions[i].FieldErr = v.Errors[fmt.Sprintf("c%d", i)]
	}
	for i := range f.Actions {
		f.Actions[i].Error = v.Errors[fmt.Sprintf("a%d", i)]
	}
	if err := h.workflowBuilder(c, &f); err != nil {
		h.fail(c, err)
		return
	}
	v.Data = workflowData{Form: f, Saved: f.ID != ""}
	h.render(c, b.Status, "workflow", v)
}

// testEmail sends one test email for a saved send_email action through the server's mailer:
// its saved subject and body with example values ("[Label]") for the answers, to its "To"
// address, or to the signed-in person when "To" is a template.
func (h *Handler) testEmail(c *gin.Context) {
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return
	}
	w, err := h.getWorkflow(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	back := "/app/workflows/" + w.ID()
	var action *workflow.Action
	number := 0
	for i, a := range w.Actions() {
		if a.ID == c.Param("action") && a.Type == "send_email" {
			action, number = &w.Actions()[i], i+1
		}
	}
	if action == nil {
		h.redirect(c, back, "That email action is not saved in this workflow: save the workflow, then send a test.")
		return
	}
	if h.opts.Mail == nil {
		h.redirect(c, back, "No test was sent: email is not set up on this server. An administrator needs to configure SMTP (see docs/configuration.md).")
		return
	}
	fv, err := h.app.Queries.GetForm.Handle(c.Request.Context(), forms.GetForm{ID: w.FormID()})
	if err != nil {
		h.fail(c, err)
		return
	}
	now := h.now()
	vars := map[string]string{"submission_id": "sub_test", "form_id": fv.Form.ID(), "form_name": fv.Form.Name(),
		"submitted_at": now.UTC().Format(time.RFC3339)}
	fieldsIn, labels := map[string]any{}, map[string]string{}
	for _, fl := range fv.Form.Fields() {
		example := "[" + fl.Label + "]"
		vars[fl.ID], fieldsIn[fl.ID], labels[fl.ID] = example, example, fl.Label
		if fl.Key != "" {
			if _, taken := vars[fl.Key]; !taken {
				vars[fl.Key] = example
			}
		}
	}
	cfg := map[string]any{}
	for k, v := range action.Config {
		cfg[k] = v
	}
	to, _ := cfg["to"].(string)
	if strings.Contains(to, "{{") {
		if sp, ok := sessionOf(c); ok && sp.User != nil {
			to = sp.User.Email()
		}
	}
	cfg["to"] = to
	subject, _ := cfg["subject"].(string)
	cfg["subject"] = "[Test] " + subject
	out := h.opts.Mail.Run(c.Request.Context(), ports.ActionInput{WorkspaceID: principal(c).WorkspaceID, WorkflowID: w.ID(),
		ActionID: "test_" + action.ID, Attempt: 1, Event: string(event.SubmissionCreated), Config: cfg, FormID: fv.Form.ID(),
		FormName: fv.Form.Name(), SubmissionID: "sub_test", SubmittedAt: now, Fields: fieldsIn, Labels: labels,
		Render: func(t string, html bool) string { return workflow.Render(t, vars, html) }})
	if out.Err != nil {
		code := (*int)(nil)
		if out.StatusCode != 0 {
			code = &out.StatusCode
		}
		h.redirect(c, back, fmt.Sprintf("The test email of action %d was not sent: %s (%s)", number, failureInWords(out.Err.Error(), code), out.Err.Error()))
		return
	}
	h.redirect(c, back, fmt.Sprintf("Test email of action %d sent to %s, with example values in place of the answers.", number, to))
}

// sameTrigger tells whether the posted trigger is the saved one: same event, same conditions
// in the same order.
func sameTrigger(saved workflow.Trigger, posted workflow.TriggerSpec) bool {
	if string(saved.Type) != posted.Type || len(saved.Conditions) != len(posted.Conditions) {
		return false
	}
	for i, cd := range saved.Conditions {
		p := posted.Conditions[i]
		if cd.FieldID != p.FieldID || string(cd.Operator) != p.Operator || cd.Value != fmt.Sprint(p.Value) {
			return false
		}
	}
	return true
}

func (h *Handler) toggleWorkflow(c *gin.Context) {
	on := c.PostForm("enabled") == "1"
	if _, err := h.app.Commands.UpdateWorkflow.Handle(c.Request.Context(), workflows.UpdateWorkflow{
		ID: c.Param("id"), Patch: workflow.Patch{Enabled: &on}}); err != nil {
		h.fail(c, err)
		return
	}
	msg := "Workflow disabled. It does not run for responses received while disabled."
	if on {
		msg = "Workflow enabled."
	}
	h.redirect(c, "/app/workflows/"+c.Param("id"), msg)
}

func (h *Handler) retryRun(c *gin.Context) {
	id := c.Param("id")
	if _, err := h.app.Commands.RetryRun.Handle(c.Request.Context(), workflows.RetryRun{
		WorkflowID: id, ID: c.Param("run")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/workflows/"+id+"#runs", "Run queued again from the action that failed. Reload the page to see the new attempt.")
}

func (h *Handler) deleteWorkflowConfirm(c *gin.Context) {
	w, err := h.getWorkflow(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := principal(c).Require(access.Write); err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "confirm", &view{Title: "Delete workflow", Data: confirmData{
		Heading:    "Delete the workflow “" + w.Name() + "”?",
		Paragraphs: []string{"Its run log goes with it. This cannot be undone."},
		Action:     "/app/workflows/" + w.ID() + "/delete", Button: "Delete workflow", Cancel: "/app/workflows/" + w.ID(), Danger: true}})
}

func (h *Handler) deleteWorkflow(c *gin.Context) {
	if err := h.app.Commands.DeleteWorkflow.Handle(c.Request.Context(), workflows.DeleteWorkflow{
		ID: c.Param("id")}); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/app/workflows", "Workflow deleted.")
}
