package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/formward/formward/ports"
)

// fakeRunner stands in for an action adapter: it checks required config keys and an https URL.
type fakeRunner struct {
	typ         string
	required    []string
	integration string
}

func (f fakeRunner) Type() string        { return f.typ }
func (f fakeRunner) Integration() string { return f.integration }
func (f fakeRunner) Run(context.Context, ports.ActionInput) ports.ActionOutcome {
	return ports.ActionOutcome{}
}

func (f fakeRunner) Validate(cfg map[string]any) []ports.ConfigViolation {
	var out []ports.ConfigViolation
	for _, k := range f.required {
		if s, _ := cfg[k].(string); s == "" && cfg[k] == nil {
			out = append(out, ports.ConfigViolation{Key: k, Code: "required", Message: k + " is required"})
		}
	}
	if u, ok := cfg["url"].(string); ok && !strings.HasPrefix(u, "https://") {
		out = append(out, ports.ConfigViolation{Key: "url", Code: "https_required", Message: "url must use https"})
	}
	return out
}

func fakeRunners() map[string]ports.ActionRunner {
	out := map[string]ports.ActionRunner{}
	for _, r := range []fakeRunner{
		{typ: "send_email", required: []string{"to", "subject", "body"}},
		{typ: "send_webhook", required: []string{"url"}},
		{typ: "chat_message", required: []string{"channel", "message"}, integration: "slack"},
		{typ: "spreadsheet_append", required: []string{"spreadsheet_id", "sheet_name", "row_mapping"}, integration: "google_sheets"},
		{typ: "automation_trigger", required: []string{"url"}},
	} {
		out[r.typ] = r
	}
	return out
}

func emailAction() map[string]any {
	return map[string]any{"type": "send_email", "config": map[string]any{"to": "sales@example.com", "subject": "New lead", "body": "{{submission_id}}"}}
}

func workflowBody(formID any, actions ...map[string]any) map[string]any {
	if actions == nil {
		actions = []map[string]any{emailAction()}
	}
	return map[string]any{"name": "Route leads", "form_id": formID, "trigger": map[string]any{"type": "submission.created"}, "actions": actions}
}

// createWorkflow creates a workflow in workspace A and returns its JSON.
func (h *harness) createWorkflow(body map[string]any) map[string]any {
	h.t.Helper()
	r := h.do("POST", "/v1/workflows", h.keys["admin"], body)
	h.expect(r, 201, "")
	return r.json
}

// details maps each detail field of an error to its code.
func details(r response) map[string]string {
	out := map[string]string{}
	e, _ := r.json["error"].(map[string]any)
	list, _ := e["details"].([]any)
	for _, d := range list {
		m := d.(map[string]any)
		out[m["field"].(string)] = m["code"].(string)
	}
	return out
}

func (h *harness) expectDetail(r response, field, code string) {
	h.t.Helper()
	h.expect(r, 422, "validation_failed")
	if got := details(r)[field]; got != code {
		h.t.Fatalf("detail %s = %q, want %q; body %s", field, got, code, r.Body.String())
	}
}

func TestWorkflowAuthMatrix(t *testing.T) {
	h := sqliteHarness(t)
	formID := h.createForm(contactFields...)["id"]
	id := h.createWorkflow(workflowBody(formID))["id"].(string)
	h.keyMatrix(t, "workflows", []matrixEndpoint{
		{"GET", "/v1/workflows", nil, false, false, 200},
		{"POST", "/v1/workflows", workflowBody(formID), true, false, 201},
		{"GET", "/v1/workflows/" + id, nil, false, true, 200},
		{"PATCH", "/v1/workflows/" + id, map[string]any{"name": "Renamed"}, true, true, 200},
		{"DELETE", "/v1/workflows/" + id, nil, true, true, 204},
	}, func(r response) {
		// The form belongs to workspace A: for B it names no form.
		h.expectDetail(r, "form_id", "not_found")
	}, func(string) string { return "/v1/workflows/" + h.createWorkflow(workflowBody(formID))["id"].(string) })
	h.t = t
	h.expect(h.do("DELETE", "/v1/workflows/"+id, h.keys["admin"], nil), 204, "")
	h.expect(h.do("GET", "/v1/workflows/"+id, h.keys["admin"], nil), 404, "not_found")
	h.expect(h.do("DELETE", "/v1/workflows/"+id, h.keys["admin"], nil), 404, "not_found")
	h.expect(h.do("GET", "/v1/workflows/nope", h.keys["admin"], nil), 404, "not_found")
}

func TestWorkflowCreateGetList(t *testing.T) {
	h := sqliteHarness(t)
	f := h.createForm(contactFields...)
	ids := fieldIDs(f)
	const secret = "Wsec-Ibex-4412"
	w := h.createWorkflow(map[string]any{
		"name": "Route leads", "form_id": f["id"],
		"trigger": map[string]any{"type": "submission.created", "config": map[string]any{"conditions": []any{
			map[string]any{"field_id": ids[2], "operator": "greater_than", "value": 1000},
			map[string]any{"field_id": ids[3], "operator": "equals", "value": "Pro"},
			map[string]any{"field_id": ids[0], "operator": "not_equals", "value": false},
		}}},
		"actions": []any{emailAction(), map[string]any{"type": "send_webhook", "config": map[string]any{"url": "https://hooks.example.com/wf", "secret": secret, "headers": map[string]any{"X-Team": "sales"}}}},
	})
	id := w["id"].(string)
	if !strings.HasPrefix(id, "wfl_") || w["enabled"] != true || w["form_id"] != f["id"] || w["name"] != "Route leads" {
		t.Fatalf("created %v", w)
	}
	acts := w["actions"].([]any)
	a0, a1 := acts[0].(map[string]any), acts[1].(map[string]any)
	if !strings.HasPrefix(a0["id"].(string), "act_") || a0["type"] != "send_email" || a0["config"].(map[string]any)["to"] != "sales@example.com" {
		t.Fatalf("action 0 %v", a0)
	}
	cfg1 := a1["config"].(map[string]any)
	if cfg1["secret_set"] != true || cfg1["secret"] != nil || cfg1["headers"].(map[string]any)["X-Team"] != "sales" {
		t.Fatalf("action 1 config %v", cfg1)
	}
	conds := w["trigger"].(map[string]any)["config"].(map[string]any)["conditions"].([]any)
	if v := conds[0].(map[string]any)["value"]; v != float64(1000) {
		t.Fatalf("number condition shown as %T %v", v, v)
	}
	if conds[1].(map[string]any)["value"] != "Pro" || conds[2].(map[string]any)["value"] != false {
		t.Fatalf("conditions %v", conds)
	}

	got := h.do("GET", "/v1/workflows/"+id, h.keys["read-only"], nil)
	h.expect(got, 200, "")
	if got.json["created_at"] != w["created_at"] || len(got.json["actions"].([]any)) != 2 {
		t.Fatalf("get %v", got.json)
	}

	// No conditions: trigger.config is an empty object.
	other := h.createForm(contactFields...)
	plain := h.createWorkflow(workflowBody(other["id"]))
	if cfg := plain["trigger"].(map[string]any)["config"].(map[string]any); len(cfg) != 0 {
		t.Fatalf("trigger config %v", cfg)
	}

	// List: newest first, form filter, pagination.
	list := h.do("GET", "/v1/workflows", h.keys["read-only"], nil)
	h.expect(list, 200, "")
	data := list.json["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["id"] != plain["id"] || list.json["has_more"] != false {
		t.Fatalf("list %v", list.json)
	}
	list = h.do("GET", "/v1/workflows?form_id="+f["id"].(string), h.keys["read-only"], nil)
	h.expect(list, 200, "")
	if data := list.json["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id {
		t.Fatalf("filtered list %v", list.json)
	}
	page := h.do("GET", "/v1/workflows?limit=1", h.keys["read-only"], nil)
	h.expect(page, 200, "")
	if page.json["has_more"] != true {
		t.Fatalf("page %v", page.json)
	}
	next := h.do("GET", "/v1/workflows?limit=1&cursor="+page.json["next_cursor"].(string), h.keys["read-only"], nil)
	h.expect(next, 200, "")
	if d := next.json["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != id || next.json["has_more"] != false {
		t.Fatalf("second page %v", next.json)
	}
	// A cursor of another list is refused.
	h.expect(h.do("GET", "/v1/workflows?form_id="+f["id"].(string)+"&cursor="+page.json["next_cursor"].(string), h.keys["read-only"], nil), 400, "invalid_request")
	h.expect(h.do("GET", "/v1/workflows?limit=0", h.keys["read-only"], nil), 400, "invalid_request")

	for _, res := range []response{got, list, h.do("GET", "/v1/workflows", h.keys["admin"], nil)} {
		if strings.Contains(res.Body.String(), secret) {
			t.Fatalf("the secret appears in a response: %s", res.Body.String())
		}
	}

	// Deleting the form deletes its workflows.
	h.expect(h.do("DELETE", "/v1/forms/"+f["id"].(string), h.keys["admin"], nil), 204, "")
	h.expect(h.do("GET", "/v1/workflows/"+id, h.keys["admin"], nil), 404, "not_found")
}

func TestWorkflowValidation(t *testing.T) {
	h := sqliteHarness(t)
	formID := h.createForm(contactFields...)["id"]
	post := func(body any) response { return h.do("POST", "/v1/workflows", h.keys["admin"], body) }

	r := post(map[string]any{})
	for _, field := range []string{"name", "form_id", "trigger", "actions"} {
		if details(r)[field] != "required" {
			t.Fatalf("missing %s not reported: %s", field, r.Body.String())
		}
	}
	h.expectDetail(post(workflowBody(formID, map[string]any{"type": "send_email", "config": map[string]any{"subject": "s", "body": "b"}})),
		"actions[0].config.to", "required")
	h.expectDetail(post(workflowBody(formID, emailAction(), map[string]any{"type": "fax", "config": map[string]any{}})),
		"actions[1].type", "invalid_value")
	h.expectDetail(post(workflowBody(formID, map[string]any{"type": "send_email"})), "actions[0].config", "required")
	h.expectDetail(post(workflowBody(formID, map[string]any{"type": "send_webhook", "config": map[string]any{"url": "http://hooks.example.com/x"}})),
		"actions[0].config.url", "https_required")
	// The webhook URL rule applies to send_webhook and automation_trigger actions too.
	h.expectDetail(post(workflowBody(formID, map[string]any{"type": "automation_trigger", "config": map[string]any{"url": "https://internal.example.com/hook"}})),
		"actions[0].config.url", "invalid_url")

	cond := func(c map[string]any) map[string]any {
		b := workflowBody(formID)
		b["trigger"] = map[string]any{"type": "submission.created", "config": map[string]any{"conditions": []any{c}}}
		return b
	}
	h.expectDetail(post(cond(map[string]any{"field_id": "fld_x", "operator": "like", "value": "a"})), "trigger.config.conditions[0].operator", "invalid_value")
	h.expectDetail(post(cond(map[string]any{"field_id": "fld_x", "operator": "equals", "value": []any{"a"}})), "trigger.config.conditions[0].value", "invalid_type")
	h.expectDetail(post(cond(map[string]any{"field_id": "fld_x", "operator": "equals"})), "trigger.config.conditions[0].value", "required")
	h.expectDetail(post(cond(map[string]any{"field_id": "fld_x", "operator": "equals", "value": 1, "extra": 1})), "trigger.config.conditions[0].extra", "unknown_property")

	b := workflowBody(formID)
	b["trigger"] = map[string]any{"type": "form.published"}
	h.expectDetail(post(b), "trigger.type", "invalid_value")
	b["trigger"] = map[string]any{"type": "submission.created", "config": map[string]any{"when": "always"}}
	h.expectDetail(post(b), "trigger.config.when", "unknown_property")
	b = workflowBody(formID)
	b["colour"] = "blue"
	h.expectDetail(post(b), "colour", "unknown_property")
	b = workflowBody(formID, map[string]any{"type": "send_email", "config": emailAction()["config"], "retries": 3})
	h.expectDetail(post(b), "actions[0].retries", "unknown_property")
	// Read-only properties are ignored.
	b = workflowBody(formID)
	b["id"], b["created_at"], b["updated_at"] = "wfl_mine", "2020-01-01T00:00:00.000Z", "x"
	if w := h.createWorkflow(b); w["id"] == "wfl_mine" {
		t.Fatal("a client-chosen id was taken")
	}

	h.expectDetail(post(workflowBody("frm_nope")), "form_id", "not_found")
	h.expectDetail(post(map[string]any{"name": " ", "form_id": formID, "trigger": map[string]any{"type": "submission.created"}, "actions": []any{}}), "name", "invalid_length")
	var many []map[string]any
	for range 21 {
		many = append(many, emailAction())
	}
	h.expectDetail(post(workflowBody(formID, many...)), "actions", "too_many")
	h.expect(post("[]"), 400, "invalid_request")
}

func TestWorkflowNeedsIntegration(t *testing.T) {
	h := sqliteHarness(t)
	formID := h.createForm(contactFields...)["id"]
	chat := map[string]any{"type": "chat_message", "config": map[string]any{"channel": "#leads", "message": "New: {{submission_id}}"}}
	sheet := map[string]any{"type": "spreadsheet_append", "config": map[string]any{"spreadsheet_id": "1abc", "sheet_name": "Leads", "row_mapping": map[string]any{"Email": "fld_x"}}}
	r := h.do("POST", "/v1/workflows", h.keys["admin"], workflowBody(formID, emailAction(), chat, sheet))
	h.expectDetail(r, "actions[1].type", "integration_required")
	h.expectDetail(r, "actions[2].type", "integration_required")
	if !strings.Contains(r.Body.String(), "slack") || !strings.Contains(r.Body.String(), "/v1/integrations") {
		t.Fatalf("the message does not say what to connect: %s", r.Body.String())
	}
	// Another workspace's integration does not count.
	h.expect(h.do("POST", "/v1/integrations", h.keys["other"], map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "xoxb-b"}}), 201, "")
	h.expectDetail(h.do("POST", "/v1/workflows", h.keys["admin"], workflowBody(formID, chat)), "actions[0].type", "integration_required")

	h.expect(h.do("POST", "/v1/integrations", h.keys["admin"], map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "xoxb-a"}}), 201, "")
	h.createWorkflow(workflowBody(formID, chat))
	h.expectDetail(h.do("POST", "/v1/workflows", h.keys["admin"], workflowBody(formID, sheet)), "actions[0].type", "integration_required")
}

func TestWorkflowPatch(t *testing.T) {
	h := sqliteHarness(t)
	f := h.createForm(contactFields...)
	const secret = "Wsec-Tapir-7781"
	hook := map[string]any{"type": "send_webhook", "config": map[string]any{"url": "https://hooks.example.com/wf", "secret": secret}}
	w := h.createWorkflow(workflowBody(f["id"], emailAction(), hook))
	id := w["id"].(string)
	acts := w["actions"].([]any)
	emailID, hookID := acts[0].(map[string]any)["id"], acts[1].(map[string]any)["id"]
	patch := func(body any) response { return h.do("PATCH", "/v1/workflows/"+id, h.keys["read-write"], body) }

	// Only included properties change; enabled pauses and resumes.
	r := patch(map[string]any{"enabled": false})
	h.expect(r, 200, "")
	if r.json["enabled"] != false || r.json["name"] != "Route leads" || len(r.json["actions"].([]any)) != 2 {
		t.Fatalf("patched %v", r.json)
	}
	r = patch(map[string]any{"enabled": true, "name": "Renamed"})
	h.expect(r, 200, "")
	if r.json["enabled"] != true || r.json["name"] != "Renamed" {
		t.Fatalf("patched %v", r.json)
	}

	// Sending back what was read is accepted; kept actions keep their IDs and the secret.
	got := h.do("GET", "/v1/workflows/"+id, h.keys["read-only"], nil)
	back := got.json
	back["actions"] = []any{back["actions"].([]any)[1], back["actions"].([]any)[0], emailAction()}
	r = patch(back)
	h.expect(r, 200, "")
	acts = r.json["actions"].([]any)
	if len(acts) != 3 || acts[0].(map[string]any)["id"] != hookID || acts[1].(map[string]any)["id"] != emailID ||
		acts[2].(map[string]any)["id"] == emailID || acts[0].(map[string]any)["config"].(map[string]any)["secret_set"] != true {
		t.Fatalf("actions after patch %v", acts)
	}

	// Trigger replaces; unknown action IDs are refused and change nothing.
	r = patch(map[string]any{"trigger": map[string]any{"type": "submission.updated", "config": map[string]any{"conditions": []any{
		map[string]any{"field_id": fieldIDs(f)[1], "operator": "contains", "value": "@acme.io"}}}}})
	h.expect(r, 200, "")
	if tr := r.json["trigger"].(map[string]any); tr["type"] != "submission.updated" || len(tr["config"].(map[string]any)["conditions"].([]any)) != 1 {
		t.Fatalf("trigger %v", tr)
	}
	h.expectDetail(patch(map[string]any{"name": "x", "actions": []any{map[string]any{"id": "act_unknown", "type": "send_email", "config": emailAction()["config"]}}}),
		"actions[0].id", "unknown_action")
	h.expectDetail(patch(map[string]any{"actions": []any{map[string]any{"type": "send_email", "config": map[string]any{"to": "a@b.co"}}}}),
		"actions[0].config.subject", "required")
	h.expectDetail(patch(map[string]any{"trigger": map[string]any{"type": "submission.created", "config": map[string]any{"conditions": []any{
		map[string]any{"field_id": "f", "operator": "between", "value": 1}}}}}), "trigger.config.conditions[0].operator", "invalid_value")
	h.expectDetail(patch(map[string]any{"enabled": "yes"}), "enabled", "invalid_type")
	h.expectDetail(patch(map[string]any{"status": "on"}), "status", "unknown_property")
	got = h.do("GET", "/v1/workflows/"+id, h.keys["read-only"], nil)
	if got.json["name"] != "Renamed" || len(got.json["actions"].([]any)) != 3 {
		t.Fatalf("a refused patch changed the workflow: %v", got.json)
	}
	// secret: null removes the secret of a kept action.
	r = patch(map[string]any{"actions": []any{map[string]any{"id": hookID, "type": "send_webhook", "config": map[string]any{"url": "https://hooks.example.com/wf", "secret": nil}}}})
	h.expect(r, 200, "")
	if cfg := r.json["actions"].([]any)[0].(map[string]any)["config"].(map[string]any); cfg["secret_set"] != nil {
		t.Fatalf("secret not removed: %v", cfg)
	}
	h.expect(h.do("PATCH", "/v1/workflows/"+id, h.keys["other"], map[string]any{"name": "x"}), 404, "not_found")
}

func TestWorkflowLimitPerForm(t *testing.T) {
	h := sqliteHarness(t)
	formID := h.createForm(contactFields...)["id"]
	for i := range 50 {
		b := workflowBody(formID)
		b["name"] = fmt.Sprintf("W%d", i)
		h.createWorkflow(b)
	}
	r := h.do("POST", "/v1/workflows", h.keys["admin"], workflowBody(formID))
	h.expectDetail(r, "form_id", "too_many")
	// Another form has its own budget.
	h.createWorkflow(workflowBody(h.createForm(contactFields...)["id"]))
}

func TestIntegrations(t *testing.T) {
	h := sqliteHarness(t)
	const token = "xoxb-Secret-Lynx-5510"
	const key = "-----BEGIN PRIVATE KEY-----\\nKey-Okapi-3391\\n-----END PRIVATE KEY-----\\n"
	r := h.do("POST", "/v1/integrations", h.keys["read-write"], map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": token}})
	h.expect(r, 201, "")
	slack := r.json
	if !strings.HasPrefix(slack["id"].(string), "int_") || slack["type"] != "slack" || slack["credentials_set"] != true {
		t.Fatalf("created %v", slack)
	}
	// The key file may be sent as a string or as the JSON object itself.
	r = h.do("POST", "/v1/integrations", h.keys["admin"], `{"type":"google_sheets","credentials":{"service_account_json":{"client_email":"svc@p.iam.gserviceaccount.com","private_key":"`+key+`"}}}`)
	h.expect(r, 201, "")
	sheets := r.json
	r = h.do("POST", "/v1/integrations", h.keys["admin"], map[string]any{"type": "google_sheets", "credentials": map[string]any{
		"service_account_json": `{"client_email":"svc@p.iam.gserviceaccount.com","private_key":"k"}`}})
	h.expect(r, 201, "")

	post := func(body any) response { return h.do("POST", "/v1/integrations", h.keys["admin"], body) }
	h.expectDetail(post(map[string]any{"type": "teams", "credentials": map[string]any{}}), "type", "invalid_value")
	h.expectDetail(post(map[string]any{"type": "slack", "credentials": map[string]any{}}), "credentials.bot_token", "required")
	h.expectDetail(post(map[string]any{"type": "slack"}), "credentials", "required")
	h.expectDetail(post(map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "x", "password": "y"}}), "credentials.password", "unknown_property")
	h.expectDetail(post(map[string]any{"type": "google_sheets", "credentials": map[string]any{"service_account_json": "not json"}}), "credentials.service_account_json", "invalid_value")
	h.expectDetail(post(map[string]any{"type": "google_sheets", "credentials": map[string]any{"service_account_json": map[string]any{"client_email": "a@b"}}}), "credentials.service_account_json", "invalid_value")
	h.expectDetail(post(map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "x"}, "name": "n"}), "name", "unknown_property")
	h.expect(post(map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "x"}, "id": "int_x", "credentials_set": true}), 201, "")

	list := h.do("GET", "/v1/integrations", h.keys["read-only"], nil)
	h.expect(list, 200, "")
	if n := len(list.json["data"].([]any)); n != 4 {
		t.Fatalf("list has %d", n)
	}
	page := h.do("GET", "/v1/integrations?limit=3", h.keys["read-only"], nil)
	h.expect(page, 200, "")
	if page.json["has_more"] != true {
		t.Fatal("has_more")
	}
	h.expect(h.do("GET", "/v1/integrations?cursor="+page.json["next_cursor"].(string), h.keys["read-only"], nil), 200, "")
	got := h.do("GET", "/v1/integrations/"+sheets["id"].(string), h.keys["read-only"], nil)
	h.expect(got, 200, "")
	for _, res := range []response{list, got} {
		if strings.Contains(res.Body.String(), token) || strings.Contains(res.Body.String(), "Key-Okapi") || strings.Contains(res.Body.String(), "credentials\":") {
			t.Fatalf("credentials appear in a response: %s", res.Body.String())
		}
	}

	// Auth: read-only cannot write; another workspace sees nothing.
	id := slack["id"].(string)
	h.expect(h.do("POST", "/v1/integrations", h.keys["read-only"], map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "x"}}), 403, "forbidden")
	h.expect(h.do("DELETE", "/v1/integrations/"+id, h.keys["read-only"], nil), 403, "forbidden")
	h.expect(h.do("GET", "/v1/integrations", "", nil), 401, "unauthorized")
	h.expect(h.do("GET", "/v1/integrations/"+id, h.keys["revoked"], nil), 401, "unauthorized")
	h.expect(h.do("GET", "/v1/integrations/"+id, h.keys["other"], nil), 404, "not_found")
	h.expect(h.do("DELETE", "/v1/integrations/"+id, h.keys["other"], nil), 404, "not_found")
	other := h.do("GET", "/v1/integrations", h.keys["other"], nil)
	h.expect(other, 200, "")
	if n := len(other.json["data"].([]any)); n != 0 {
		t.Fatalf("workspace B sees %d integrations", n)
	}
	r = h.do("DELETE", "/v1/integrations/"+id, h.keys["read-write"], nil)
	h.expect(r, 204, "")
	if r.Body.Len() != 0 {
		t.Fatal("DELETE has a body")
	}
	h.expect(h.do("GET", "/v1/integrations/"+id, h.keys["admin"], nil), 404, "not_found")
	h.expect(h.do("PATCH", "/v1/integrations/"+id, h.keys["admin"], map[string]any{}), 405, "method_not_allowed")
}
