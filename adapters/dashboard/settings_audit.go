package dashboard

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/accounts"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/ports"
)

// Audit log: the workspace's audit events, newest first, each as a sentence ("Ada Lovelace
// published the form Volunteer sign-up"), filtered by action and by person with a GET form,
// whose values the pager's links keep.

// mountAudit adds the audit log to the workspace routes.
func (h *Handler) mountAudit(w *gin.RouterGroup) {
	w.GET("/settings/audit-log", h.audit)
}

type auditRow struct {
	Action, Label, Class, Summary, Actor, ActorType, Target, Details string
	At                                                               time.Time
}

// actorName is who did something, as the audit log and the API keys page show it.
func actorName(a audit.Actor) string {
	switch {
	case a.Name != "":
		return a.Name
	case a.Type == audit.ActorSystem:
		return "Formward (command line)"
	}
	return a.ID
}

// auditChoice is one option of a filter select.
type auditChoice struct{ Value, Label string }

type auditData struct {
	Action, Actor string
	Actions       []auditChoice
	People        []auditChoice
	Events        []auditRow
	Pager         pager
}

// actionWords are an action's name in the filter and its verb in a row's sentence.
type actionWords struct{ label, verb string }

var auditWords = map[audit.Action]actionWords{
	audit.FormCreated:             {"Form created", "created the form"},
	audit.FormUpdated:             {"Form edited", "edited the form"},
	audit.FormPublished:           {"Form published", "published the form"},
	audit.FormArchived:            {"Form archived", "archived the form"},
	audit.FormDeleted:             {"Form deleted", "deleted the form"},
	audit.FormVersionCreated:      {"Form version saved", "saved a new version of the form"},
	audit.WebhookCreated:          {"Webhook added", "added a webhook"},
	audit.WebhookUpdated:          {"Webhook changed", "changed the webhook"},
	audit.WebhookDeleted:          {"Webhook deleted", "deleted the webhook"},
	audit.WebhookReplayStarted:    {"Events replayed", "replayed events to the webhook"},
	audit.WorkflowCreated:         {"Workflow created", "created the workflow"},
	audit.WorkflowUpdated:         {"Workflow changed", "changed the workflow"},
	audit.WorkflowDeleted:         {"Workflow deleted", "deleted the workflow"},
	audit.IntegrationConnected:    {"Integration connected", "connected"},
	audit.IntegrationDisconnected: {"Integration disconnected", "disconnected"},
	audit.SubmissionDeleted:       {"Response deleted", "deleted the response"},
	audit.SubmissionsExported:     {"Responses exported", "exported the responses of the form"},
	audit.RetentionDeleted:        {"Old responses deleted (retention)", "deleted responses past their retention period"},
	audit.PrivacyExported:         {"Personal data exported", "exported a person's data"},
	audit.PrivacyErased:           {"Personal data erased", "erased a person's data"},
	audit.MemberInvited:           {"Member invited", "invited a member"},
	audit.InvitationWithdrawn:     {"Invitation withdrawn", "withdrew an invitation"},
	audit.MemberJoined:            {"Member joined", "joined the workspace"},
	audit.MemberRoleChanged:       {"Member's role changed", "changed a member's role"},
	audit.MemberRemoved:           {"Member removed", "removed a member"},
	audit.APIKeyCreated:           {"API key created", "created the API key"},
	audit.APIKeyRevoked:           {"API key revoked", "revoked the API key"},
	audit.WorkspaceUpdated:        {"Workspace settings changed", "changed the workspace settings"},
	audit.UserSignedIn:            {"Signed in", "signed in"},
	audit.UserSignInFailed:        {"Sign-in failed", "failed to sign in"},
	audit.UserPasswordChanged:     {"Password changed", "changed their password"},
	audit.UserTwoFactorOn:         {"Two-factor sign-in turned on", "turned on two-factor sign-in"},
	audit.UserTwoFactorOff:        {"Two-factor sign-in turned off", "turned off two-factor sign-in"},
}

// auditActionLabel is the action in words, or its code when it has none.
func auditActionLabel(a audit.Action) string {
	if w, ok := auditWords[a]; ok {
		return w.label
	}
	return string(a)
}

// auditSummary is the event as a sentence: who, what, and on what, in words where the details
// allow (a form's or workflow's name, a webhook's host, an integration's type).
func auditSummary(e audit.Event) string {
	w, ok := auditWords[e.Action]
	if !ok {
		w.verb = string(e.Action)
	}
	s := actorName(e.Actor) + " " + w.verb
	str := func(k string) string { v, _ := e.Details[k].(string); return v }
	switch e.Action {
	case audit.FormCreated, audit.FormUpdated, audit.FormPublished, audit.FormArchived, audit.FormDeleted, audit.FormVersionCreated,
		audit.WorkflowCreated, audit.WorkflowUpdated, audit.WorkflowDeleted, audit.SubmissionsExported:
		if e.Action == audit.FormUpdated && str("status") == "draft" {
			s = actorName(e.Actor) + " moved the form"
		}
		if name := str("name"); name != "" {
			s += " " + name
		} else if e.Target != nil {
			s += " " + e.Target.ID
		}
		if e.Action == audit.FormUpdated {
			s += formEdits(e.Details)
		}
		if e.Action == audit.SubmissionsExported && str("file_links") == "signed" {
			s += ", with signed file links (open to anyone for an hour)"
		}
	case audit.WebhookCreated, audit.WebhookUpdated, audit.WebhookDeleted, audit.WebhookReplayStarted:
		if host := str("host"); host != "" {
			s += " to " + host
		}
		if since := str("since"); since != "" && e.Action == audit.WebhookReplayStarted {
			s += ", since " + since
		}
	case audit.IntegrationConnected, audit.IntegrationDisconnected:
		s += " the " + integrationName(str("type")) + " integration"
	case audit.APIKeyCreated, audit.APIKeyRevoked:
		if name := str("name"); name != "" {
			s += " " + name
		}
	}
	return s
}

// formEdits says what a form.updated event changed: " back to draft", or ": name, questions
// (1 added, 1 removed)".
func formEdits(d map[string]any) string {
	if d["status"] == "draft" {
		return " back to draft"
	}
	changed, _ := d["changed"].([]any)
	if c, ok := d["changed"].([]string); ok {
		for _, v := range c {
			changed = append(changed, v)
		}
	}
	var parts []string
	for _, c := range changed {
		part, _ := c.(string)
		if part == "fields" {
			var counts []string
			for _, k := range []string{"added", "removed", "edited"} {
				if n := detailCount(d["fields_"+k]); n > 0 {
					counts = append(counts, fmt.Sprintf("%d %s", n, k))
				}
			}
			part = "questions"
			if len(counts) > 0 {
				part += " (" + strings.Join(counts, ", ") + ")"
			}
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// detailCount reads a number of the details, whether stored (float64) or just built (int).
func detailCount(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

// integrationName is an integration type in words: "slack" → "Slack", "google_sheets" →
// "Google Sheets".
func integrationName(typ string) string {
	words := strings.Fields(strings.ReplaceAll(typ, "_", " "))
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	if len(words) == 0 {
		return "an"
	}
	return strings.Join(words, " ")
}

func (h *Handler) audit(c *gin.Context) {
	ctx := c.Request.Context()
	action, actor := strings.TrimSpace(c.Query("action")), strings.TrimSpace(c.Query("actor"))
	d := auditData{Action: action, Actor: actor}
	for _, a := range audit.Actions {
		d.Actions = append(d.Actions, auditChoice{Value: string(a), Label: auditActionLabel(a)})
	}
	sort.SliceStable(d.Actions, func(i, j int) bool { return d.Actions[i].Label < d.Actions[j].Label })
	people, err := h.auditPeople(c, actor)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.People = people
	events, more, err := h.app.Queries.ListAuditEvents.Handle(ctx, workspaceapp.ListAuditEvents{Action: action, ActorID: actor, Page: pageOf(c)})
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, e := range events {
		row := auditRow{Action: string(e.Action), Label: auditActionLabel(e.Action), Summary: auditSummary(e), Actor: actorName(e.Actor),
			ActorType: strings.ReplaceAll(e.Actor.Type, "_", " "), At: e.CreatedAt, Details: details(e.Details)}
		if e.Target != nil {
			row.Target = e.Target.Type + " " + e.Target.ID
		}
		switch {
		case strings.HasSuffix(row.Action, "failed"), strings.Contains(row.Action, "deleted"), strings.Contains(row.Action, "revoked"),
			strings.Contains(row.Action, "removed"), strings.Contains(row.Action, "erased"), strings.Contains(row.Action, "disconnected"):
			row.Class = "badge-red"
		case strings.HasSuffix(row.Action, "created"), strings.HasSuffix(row.Action, "joined"), strings.HasSuffix(row.Action, "signed_in"),
			strings.HasSuffix(row.Action, "published"), strings.HasSuffix(row.Action, "connected"):
			row.Class = "badge-green"
		default:
			row.Class = "badge-blue"
		}
		d.Events = append(d.Events, row)
	}
	if n := len(events); n > 0 {
		d.Pager = pagerFor(c, more, events[n-1].CreatedAt, events[n-1].ID)
	}
	h.render(c, http.StatusOK, "audit", &view{Title: "Audit log", Data: d})
}

// auditPeople are the choices of the person filter: the workspace's members, its API keys
// (revoked ones too: their events stay), the system, and the chosen actor ID when it is none
// of these (a removed member).
func (h *Handler) auditPeople(c *gin.Context, chosen string) ([]auditChoice, error) {
	ctx := c.Request.Context()
	var out []auditChoice
	members, _, err := h.app.Queries.ListMembers.Handle(ctx, accounts.ListMembers{Page: ports.Page{Limit: 100}})
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		label := m.User.Name()
		if label == "" {
			label = m.User.Email()
		} else {
			label += " (" + m.User.Email() + ")"
		}
		out = append(out, auditChoice{Value: m.User.ID(), Label: label})
	}
	keys, _, err := h.app.Queries.ListAPIKeys.Handle(ctx, accounts.ListAPIKeys{Page: ports.Page{Limit: 100}, IncludeRevoked: true})
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		label := "API key " + k.Name()
		if k.RevokedAt() != nil {
			label += " (revoked)"
		}
		out = append(out, auditChoice{Value: k.ID(), Label: label})
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].Label) < strings.ToLower(out[j].Label) })
	out = append(out, auditChoice{Value: audit.System.ID, Label: "Formward (scheduled jobs, command line)"})
	known := false
	for _, p := range out {
		known = known || p.Value == chosen
	}
	if chosen != "" && !known {
		out = append(out, auditChoice{Value: chosen, Label: chosen})
	}
	return out, nil
}

// details shows an event's details as "key: value" pairs, in a stable order.
func details(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := m[k]
		if inner, ok := v.(map[string]any); ok {
			v = "(" + details(inner) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s: %v", strings.ReplaceAll(k, "_", " "), v))
	}
	return strings.Join(parts, "; ")
}
