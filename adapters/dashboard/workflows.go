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
	"github.com/formward/formward/domain/workflow"
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

var operators = []choice{{Value: "equals", Label: "equals"}, {Value: "not_equals", Label: "does not equal"}, {Value: "contains", Label: "contains"},
	{Value: "greater_than", Label: "is greater than"}, {Value: "less_than", Label: "is less than"}}

type conditionRow struct {
	N                  int
	Field, Op, Value   string
	Ops                []choice
	FieldErr, ValueErr string
}

type configInput struct {
	Name, Key, Label, Value, Error string
	Area, Secret, Platform         bool
	SecretSet                      bool
	Platforms                      []choice
}

type actionRow struct {
	N               int
	ID, Type, Label string
	Inputs          []configInput
	Error           string
	Last            bool
}

type fieldKey struct{ ID, Label string }

type workflowForm struct {
	ID, Action, FormID, FormName, Name, Event string
	Enabled                                   bool
	Conditions                                []conditionRow
	Actions                                   []actionRow
	Fields                                    []fieldKey
	Types                                     []choice
	Events                                    []choice
}

type runAction struct {
	Type, Status, StatusClass string
	Attempts                  []attemptRow
}

type runRow struct {
	ID, Status, StatusClass, Event, Submission string
	Created                                    time.Time
	Actions                                    []runAction
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
	for _, fl := range fv.Form.Fields() {
		f.Fields = append(f.Fields, fieldKey{ID: fl.ID, Label: fl.Label})
	}
	for _, t := range actionTypes {
		f.Types = append(f.Types, choice{Value: t.Type, Label: t.Label})
	}
	for _, e := range []string{"submission.created", "submission.updated"} {
		f.Events = append(f.Events, choice{Value: e, Label: e, Checked: e == f.Event})
	}
	for i := range f.Conditions {
		f.Conditions[i].N = i
		f.Conditions[i].Ops = nil
		for _, o := range operators {
			o.Checked = o.Value == f.Conditions[i].Op
			f.Conditions[i].Ops = append(f.Conditions[i].Ops, o)
		}
	}
	for i := range f.Actions {
		f.Actions[i].N, f.Actions[i].Last = i, i == len(f.Actions)-1
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
		row := runRow{ID: r.ID(), Status: string(r.Status()), Event: string(r.EventType()), Submission: r.SubmissionID(), Created: r.CreatedAt()}
		row.StatusClass = map[workflow.RunStatus]string{workflow.RunSucceeded: "badge-green", workflow.RunFailed: "badge-red"}[r.Status()]
		if r.Status() == workflow.RunFailed {
			row.Retry = &retryButton{Action: "/app/workflows/" + w.ID() + "/runs/" + r.ID() + "/retry", What: "run " + r.ID()}
		}
		for _, a := range r.Actions() {
			ra := runAction{Type: a.Type, Status: string(a.Status)}
			ra.StatusClass = map[string]string{"succeeded": "badge-green", "failed": "badge-red"}[string(a.Status)]
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
			row.Actions = append(row.Actions, ra)
		}
		d.Runs = append(d.Runs, row)
	}
	if n := len(runs); n > 0 {
		d.Pager = pagerFor(c, more, runs[n-1].CreatedAt(), runs[n-1].ID())
	}
	h.render(c, http.StatusOK, "workflow", &view{Title: "Workflow " + w.Name(), Form: map[string]string{"name": w.Name()}, Data: d})
}

// saveWorkflow creates or updates the workflow, or only draws the builder again when a row
// button (add, remove, move) was pressed.
func (h *Handler) saveWorkflow(c *gin.Context) {
	f, op := postedWorkflow(c)
	id := c.Param("id")
	f.Action = "/app/workflows"
	if id != "" {
		w, err := h.getWorkflow(c)
		if err != nil {
			h.fail(c, err)
			return
		}
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
		_, err = h.app.Commands.UpdateWorkflow.Handle(c.Request.Context(), workflows.UpdateWorkflow{ID: id,
			Patch: workflow.Patch{Name: &f.Name, Enabled: &f.Enabled, Trigger: &trigger, Actions: &actions}})
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
	for _, d := range b.Details {
		var i int
		var rest string
		if n, _ := fmt.Sscanf(d.Field, "trigger.conditions[%d].%s", &i, &rest); n == 2 && i < len(f.Conditions) {
			known[d.Field] = fmt.Sprintf("c%d", i)
		} else if n, _ := fmt.Sscanf(d.Field, "actions[%d].%s", &i, &rest); n >= 1 && i < len(f.Actions) {
			known[d.Field] = fmt.Sprintf("a%d", i)
		}
	}
	v.Errors, v.Error = fieldErrors(b, known)
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
