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
	workflowsapp "github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/workflow"
)

func TestListRuns(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		h := newHarness(t, db, httpapi.Options{})
		cipher := persistencetest.Cipher()
		workflows := persistence.NewWorkflowRepository(db, cipher)
		runs := persistence.NewRunRepository(db, cipher)
		// The run log reads through the application's query, over these repositories.
		h.app.Queries.ListRuns = workflowsapp.NewListRunsHandler(workflows, runs)
		h.app.Commands.RetryRun = workflowsapp.NewRetryRunHandler(workflows, runs, system.Clock{})

		f := h.createForm(map[string]any{"label": "Budget", "type": "number"})
		ids := system.NewIDs()
		now := time.Now().UTC().Truncate(time.Millisecond)
		wf, err := workflow.New(ids.New("wfl"), h.wsA, workflow.Draft{Name: "Route", FormID: f["id"].(string),
			Trigger: workflow.TriggerSpec{Type: "submission.created"},
			Actions: []workflow.ActionSpec{
				{Type: "send_webhook", Config: map[string]any{"url": "https://hooks.example.com/a", "secret": "Run-Secret-991"}},
				{Type: "automation_trigger", Config: map[string]any{"url": "https://hooks.example.com/b"}},
			}}, func() string { return ids.New("act") }, nil, workflow.DefaultLimits, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := workflows.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
		var stored []*workflow.Run
		for i := range 3 {
			e := event.Event{ID: ids.New("evt"), Type: event.SubmissionCreated, WorkspaceID: h.wsA, FormID: wf.FormID(), OccurredAt: now,
				Data: map[string]any{"submission_id": ids.New("sub"), "fields": map[string]any{}}}
			r := workflow.NewRun(ids.New("run"), wf, e, now.Add(time.Duration(i)*time.Second))
			if err := runs.AddAll(ctx, []*workflow.Run{r}); err != nil {
				t.Fatal(err)
			}
			stored = append(stored, r)
		}
		// The oldest run: the first action failed once then succeeded, the second was given up.
		old := stored[0]
		at := now.Add(time.Minute)
		old.Record(workflow.AttemptOutcome{StatusCode: 502, Duration: 40 * time.Millisecond, Err: errors.New("endpoint answered 502")}, at, retry.Default())
		old.Record(workflow.AttemptOutcome{StatusCode: 200, Duration: 5 * time.Millisecond}, at, retry.Default())
		old.Record(workflow.AttemptOutcome{Err: errors.New("url refused"), Permanent: true}, at, retry.Default())
		if err := runs.Save(ctx, old); err != nil {
			t.Fatal(err)
		}

		path := "/v1/workflows/" + wf.ID() + "/runs"
		r := h.do("GET", path+"?limit=2", h.keys["read-only"], nil)
		h.expect(r, 200, "")
		data := r.json["data"].([]any)
		if len(data) != 2 || r.json["has_more"] != true || r.json["next_cursor"] == nil {
			t.Fatalf("first page: %s", r.Body.String())
		}
		if data[0].(map[string]any)["id"] != stored[2].ID() || data[1].(map[string]any)["id"] != stored[1].ID() {
			t.Fatalf("not newest first: %s", r.Body.String())
		}
		first := data[0].(map[string]any)
		if first["status"] != "queued" || first["finished_at"] != nil || first["event"] != "submission.created" ||
			first["workflow_id"] != wf.ID() || first["submission_id"] != stored[2].SubmissionID() {
			t.Fatalf("queued run: %v", first)
		}
		r = h.do("GET", path+"?limit=2&cursor="+r.json["next_cursor"].(string), h.keys["read-only"], nil)
		h.expect(r, 200, "")
		data = r.json["data"].([]any)
		if len(data) != 1 || r.json["has_more"] != false || r.json["next_cursor"] != nil {
			t.Fatalf("second page: %s", r.Body.String())
		}
		got := data[0].(map[string]any)
		if got["id"] != old.ID() || got["status"] != "failed" || got["finished_at"] == nil {
			t.Fatalf("failed run: %v", got)
		}
		acts := got["actions"].([]any)
		a0, a1 := acts[0].(map[string]any), acts[1].(map[string]any)
		if a0["status"] != "succeeded" || a0["type"] != "send_webhook" || a0["action_id"] != wf.Actions()[0].ID || a1["status"] != "failed" {
			t.Fatalf("actions: %v", acts)
		}
		att := a0["attempts"].([]any)
		first0 := att[0].(map[string]any)
		if len(att) != 2 || first0["attempt"] != 1.0 || first0["status_code"] != 502.0 || first0["duration_ms"] != 40.0 ||
			first0["error"] != "endpoint answered 502" || att[1].(map[string]any)["error"] != nil {
			t.Fatalf("attempts: %v", att)
		}
		if a1["attempts"].([]any)[0].(map[string]any)["status_code"] != nil {
			t.Fatalf("no answer must show status_code null: %v", a1)
		}
		if strings.Contains(r.Body.String(), "Run-Secret-991") || strings.Contains(r.Body.String(), "hooks.example.com") {
			t.Fatalf("a run shows its action configs: %s", r.Body.String())
		}

		// A cursor of another list, an unknown workflow, another workspace.
		other := h.do("GET", "/v1/webhooks?limit=1", h.keys["admin"], nil)
		h.expect(other, 200, "")
		h.expect(h.do("GET", path+"?cursor=bm9wZQ.bm9wZQ", h.keys["admin"], nil), 400, "invalid_request")
		h.expect(h.do("GET", path+"?limit=0", h.keys["admin"], nil), 400, "invalid_request")
		h.expect(h.do("GET", "/v1/workflows/wfl_unknown/runs", h.keys["admin"], nil), 404, "not_found")
		h.expect(h.do("GET", path, h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("GET", path, "", nil), 401, "unauthorized")

		// Retry: only the failed run, with a write key, of this workflow and workspace.
		retry := path + "/" + old.ID() + "/retry"
		h.expect(h.do("POST", retry, h.keys["read-only"], nil), 403, "forbidden")
		h.expect(h.do("POST", retry, h.keys["other"], nil), 404, "not_found")
		h.expect(h.do("POST", path+"/run_unknown/retry", h.keys["read-write"], nil), 404, "not_found")
		h.expect(h.do("POST", "/v1/workflows/wfl_unknown/runs/"+old.ID()+"/retry", h.keys["read-write"], nil), 404, "not_found")
		h.expect(h.do("GET", retry, h.keys["read-write"], nil), 405, "method_not_allowed")
		queued := h.do("POST", path+"/"+stored[2].ID()+"/retry", h.keys["read-write"], nil)
		h.expect(queued, 409, "conflict")
		if msg, _ := queued.json["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "only a failed run can be retried") {
			t.Fatalf("conflict message: %s", queued.Body.String())
		}
		r = h.do("POST", retry, h.keys["read-write"], nil)
		h.expect(r, 200, "")
		acts = r.json["actions"].([]any)
		if r.json["id"] != old.ID() || r.json["status"] != "queued" || r.json["finished_at"] != nil ||
			acts[0].(map[string]any)["status"] != "succeeded" || acts[1].(map[string]any)["status"] != "pending" ||
			len(acts[1].(map[string]any)["attempts"].([]any)) != 1 {
			t.Fatalf("after the retry: %s", r.Body.String())
		}
		stored0, err := runs.Get(ctx, h.wsA, old.ID())
		if err != nil || stored0.Status() != workflow.RunQueued || stored0.NextAttemptAt() == nil {
			t.Fatalf("stored after the retry: %v %v", stored0, err)
		}
		h.expect(h.do("POST", retry, h.keys["read-write"], nil), 409, "conflict")

		// A deleted workflow's runs are no longer listed.
		if err := workflows.Delete(ctx, h.wsA, wf.ID()); err != nil {
			t.Fatal(err)
		}
		h.expect(h.do("GET", path, h.keys["admin"], nil), 404, "not_found")
		h.expect(h.do("POST", retry, h.keys["admin"], nil), 404, "not_found")
		if _, err := runs.Get(ctx, h.wsA, old.ID()); err != nil {
			t.Fatalf("the run went with its workflow: %v", err)
		}
	})
}
