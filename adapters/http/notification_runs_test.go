package httpapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/workflow"
)

func TestNotificationSettings(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		f := h.createForm(map[string]any{"label": "Email", "type": "email"}, map[string]any{"label": "Name", "type": "text"})
		ids := fieldIDs(f)
		n := f["settings"].(map[string]any)["notifications"].(map[string]any)
		if n["owner"].(map[string]any)["enabled"] != false || n["respondent"].(map[string]any)["email_field_id"] != nil {
			t.Fatalf("defaults: %v", n)
		}
		path := "/v1/forms/" + f["id"].(string)
		on := map[string]any{"notifications": map[string]any{
			"owner":      map[string]any{"enabled": true, "to": []any{"Owner <owner@example.com>", "boss@example.com"}},
			"respondent": map[string]any{"enabled": true, "email_field_id": ids[0], "subject": "Thanks {{" + ids[1] + "}}", "body": "<p>We got it</p>"},
		}}
		r := h.do("PATCH", path, key, map[string]any{"settings": on})
		h.expect(r, 200, "")
		n = r.json["settings"].(map[string]any)["notifications"].(map[string]any)
		owner, resp := n["owner"].(map[string]any), n["respondent"].(map[string]any)
		if owner["enabled"] != true || len(owner["to"].([]any)) != 2 || owner["to"].([]any)[0] != "owner@example.com" ||
			resp["email_field_id"] != ids[0] || resp["body"] != "<p>We got it</p>" {
			t.Fatalf("stored: %v", n)
		}
		r = h.do("GET", path, key, nil)
		h.expect(r, 200, "")
		if r.json["settings"].(map[string]any)["notifications"].(map[string]any)["owner"].(map[string]any)["enabled"] != true {
			t.Fatalf("read back: %s", r.Body.String())
		}

		bad := []map[string]any{
			{"respondent": map[string]any{"enabled": true, "email_field_id": ids[1], "body": "x"}}, // a text field
			{"respondent": map[string]any{"enabled": true, "email_field_id": "fld_nope", "body": "x"}},
			{"owner": map[string]any{"enabled": true, "to": []any{"not an address"}}},
			{"owner": map[string]any{"enabled": true, "to": []any{}}},
			{"owner": map[string]any{"enabled": "yes"}},
			{"owner": map[string]any{"enabled": true, "to": []any{"a@example.com"}, "cc": []any{}}},
		}
		for _, b := range bad {
			r := h.do("PATCH", path, key, map[string]any{"settings": map[string]any{"notifications": b}})
			if r.Code != 422 && r.Code != 400 {
				t.Fatalf("%v: %d %s", b, r.Code, r.Body.String())
			}
			if !strings.Contains(r.Body.String(), "settings.notifications") {
				t.Fatalf("%v: error names no path: %s", b, r.Body.String())
			}
		}
		r = h.do("PATCH", path, key, map[string]any{"settings": map[string]any{"notifications": bad[0]}})
		h.expect(r, 422, "validation_failed")
	})
}

func TestListNotificationRuns(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		h := newHarness(t, db, httpapi.Options{})
		cipher := persistencetest.Cipher()
		runs := persistence.NewRunRepository(db, cipher)
		h.app.Queries.ListNotificationRuns = workflows.NewListNotificationRunsHandler(persistence.NewFormRepository(db, cipher), runs)

		f := h.createForm(map[string]any{"label": "Email", "type": "email"})
		formID := f["id"].(string)
		ids := system.NewIDs()
		now := time.Now().UTC().Truncate(time.Millisecond)
		e := event.Event{ID: ids.New("evt"), Type: event.SubmissionCreated, WorkspaceID: h.wsA, FormID: formID, OccurredAt: now,
			Data: map[string]any{"submission_id": ids.New("sub"), "fields": map[string]any{}}}
		owner := workflow.StartNotificationRun(ids.New("run"), h.wsA, workflow.KindOwner, workflow.ActionSnapshot{ActionID: "owner", Type: "send_email",
			Config: map[string]any{"to": []any{"secret-owner@example.com"}}}, e, now)
		resp := workflow.StartNotificationRun(ids.New("run"), h.wsA, workflow.KindRespondent, workflow.ActionSnapshot{ActionID: "respondent", Type: "send_email",
			Config: map[string]any{"to": "{{fld}}"}}, e, now.Add(time.Second))
		if err := runs.AddAll(ctx, []*workflow.Run{owner, resp}); err != nil {
			t.Fatal(err)
		}
		owner.Record(workflow.AttemptOutcome{Err: errors.New("smtp: 451 try again later")}, now.Add(time.Minute), retry.Default())
		owner.Record(workflow.AttemptOutcome{}, now.Add(2*time.Minute), retry.Default())
		if err := runs.Save(ctx, owner); err != nil {
			t.Fatal(err)
		}

		path := "/v1/forms/" + formID + "/notification-runs"
		r := h.do("GET", path+"?limit=1", h.keys["read-only"], nil)
		h.expect(r, 200, "")
		data := r.json["data"].([]any)
		if len(data) != 1 || r.json["has_more"] != true {
			t.Fatalf("first page: %s", r.Body.String())
		}
		first := data[0].(map[string]any)
		if first["id"] != resp.ID() || first["kind"] != "respondent" || first["workflow_id"] != nil || first["status"] != "queued" {
			t.Fatalf("newest run: %v", first)
		}
		if _, ok := first["workflow_id"]; !ok {
			t.Fatal("workflow_id is missing instead of null")
		}
		r = h.do("GET", path+"?limit=1&cursor="+r.json["next_cursor"].(string), h.keys["read-only"], nil)
		h.expect(r, 200, "")
		got := r.json["data"].([]any)[0].(map[string]any)
		act := got["actions"].([]any)[0].(map[string]any)
		att := act["attempts"].([]any)
		if got["kind"] != "owner" || got["status"] != "succeeded" || act["type"] != "send_email" || act["action_id"] != "owner" || len(att) != 2 ||
			att[0].(map[string]any)["error"] != "smtp: 451 try again later" {
			t.Fatalf("owner run: %v", got)
		}
		if strings.Contains(r.Body.String(), "secret-owner") {
			t.Fatalf("a run shows its config: %s", r.Body.String())
		}
		h.expect(h.do("GET", "/v1/forms/frm_unknown/notification-runs", h.keys["admin"], nil), 404, "not_found")
		h.expect(h.do("GET", path, h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("GET", path, "", nil), 401, "unauthorized")
	})
}
