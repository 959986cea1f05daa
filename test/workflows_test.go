package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// createWorkflow makes an enabled workflow of the form on submission.created; it returns the
// workflow ID and its action IDs in order.
func createWorkflow(t *testing.T, in *instance, key, formID, name string, actions ...map[string]any) (string, []string) {
	t.Helper()
	r := in.do("POST", "/v1/workflows", key, map[string]any{"name": name, "form_id": formID,
		"trigger": map[string]any{"type": "submission.created"}, "actions": actions})
	r.expect(t, http.StatusCreated)
	var ids []string
	for _, a := range r.obj["actions"].([]any) {
		ids = append(ids, a.(map[string]any)["id"].(string))
	}
	return r.str(t, "id"), ids
}

// runsOf reads GET /v1/workflows/{id}/runs.
func runsOf(t *testing.T, in *instance, key, workflowID string) []map[string]any {
	t.Helper()
	return listData(t, in, key, "/v1/workflows/"+workflowID+"/runs", "runs")
}

func runActions(run map[string]any) []map[string]any {
	return objects(run["actions"])
}

// finishedRun waits until the workflow has one run that succeeded or failed and returns it.
func finishedRun(t *testing.T, in *instance, key, workflowID string) map[string]any {
	t.Helper()
	var run map[string]any
	eventually(t, 20*time.Second, "the run of "+workflowID+" to finish", func() bool {
		rs := runsOf(t, in, key, workflowID)
		if len(rs) == 1 && (rs[0]["status"] == "succeeded" || rs[0]["status"] == "failed") {
			run = rs[0]
			return true
		}
		return false
	})
	return run
}

// TestWorkflowsEmbedded: a published form's submission runs each matching workflow's actions in
// order, through send_webhook and automation_trigger to HTTPS receivers; failing actions are
// retried while later ones wait, given-up ones fail the run and skip the rest; the run log tells.
func TestWorkflowsEmbedded(t *testing.T) {
	t.Parallel()
	in, rc := newPipelineInstance(t)
	inServe(t, in, "workflows", func(key string) { testWorkflowRuns(t, in, rc, key) })
}

func testWorkflowRuns(t *testing.T, in *instance, rc *receiver, key string) {
	t.Helper()
	formID, fieldID := createForm(t, in, key, "Leads")
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	secret := newSecret(t)
	okWF, okActs := createWorkflow(t, in, key, formID, "Both",
		map[string]any{"type": "send_webhook", "config": map[string]any{"url": rc.url("/wf-hook"), "secret": secret}},
		map[string]any{"type": "automation_trigger", "config": map[string]any{"url": rc.url("/wf-zap"), "platform": "zapier"}})
	retryWF, _ := createWorkflow(t, in, key, formID, "Retried",
		map[string]any{"type": "send_webhook", "config": map[string]any{"url": rc.url("/flaky-wf")}},
		map[string]any{"type": "automation_trigger", "config": map[string]any{"url": rc.url("/wf-after-flaky")}})
	failWF, _ := createWorkflow(t, in, key, formID, "Given up",
		map[string]any{"type": "send_webhook", "config": map[string]any{"url": rc.url("/down-wf")}},
		map[string]any{"type": "automation_trigger", "config": map[string]any{"url": rc.url("/wf-never")}})
	offWF, _ := createWorkflow(t, in, key, formID, "Paused",
		map[string]any{"type": "automation_trigger", "config": map[string]any{"url": rc.url("/wf-paused")}})
	in.do("PATCH", "/v1/workflows/"+offWF, key, map[string]any{"enabled": false}).expect(t, http.StatusOK)

	subID := submit(t, in, key, formID, fieldID, "Budget is 5000")

	// Both actions reached their receivers, in order, and the run says so.
	run := finishedRun(t, in, key, okWF)
	if run["status"] != "succeeded" || run["submission_id"] != subID || run["event"] != "submission.created" || run["workflow_id"] != okWF ||
		run["finished_at"] == nil || !strings.HasPrefix(run["id"].(string), "run_") {
		t.Fatalf("run = %v", run)
	}
	acts := runActions(run)
	if len(acts) != 2 || acts[0]["action_id"] != okActs[0] || acts[1]["action_id"] != okActs[1] ||
		acts[0]["status"] != "succeeded" || acts[1]["status"] != "succeeded" || len(attemptsOf(acts[0])) != 1 {
		t.Fatalf("run actions = %v", acts)
	}
	hook, zap := rc.requests("/wf-hook"), rc.requests("/wf-zap")
	if len(hook) != 1 || len(zap) != 1 || zap[0].at.Before(hook[0].at) {
		t.Fatalf("receivers got %d webhook and %d automation requests (want 1 each, in order)", len(hook), len(zap))
	}
	if !strings.Contains(string(hook[0].body), subID) || hook[0].header.Get("X-Service-Signature") == "" {
		t.Fatalf("send_webhook request: %s %v", hook[0].body, hook[0].header)
	}
	flat := zap[0].bodyObj(t)
	if flat["submission_id"] != subID || flat["form_id"] != formID || flat["form_name"] != "Leads" || flat["message"] != "Budget is 5000" {
		t.Fatalf("automation_trigger body = %s", zap[0].body)
	}

	// Retried twice, then on: the later action waited for it.
	run = finishedRun(t, in, key, retryWF)
	acts = runActions(run)
	if run["status"] != "succeeded" || len(attemptsOf(acts[0])) != 3 || len(attemptsOf(acts[1])) != 1 {
		t.Fatalf("retried run = %v", run)
	}
	flaky, after := rc.requests("/flaky-wf"), rc.requests("/wf-after-flaky")
	if len(flaky) != 3 || len(after) != 1 || after[0].at.Before(flaky[2].at) {
		t.Fatalf("flaky action got %d requests, the next one %d (want 3 then 1)", len(flaky), len(after))
	}

	// Given up after five attempts: the run failed and the later action was skipped.
	run = finishedRun(t, in, key, failWF)
	acts = runActions(run)
	if run["status"] != "failed" || acts[0]["status"] != "failed" || len(attemptsOf(acts[0])) != 5 || acts[1]["status"] != "skipped" ||
		len(attemptsOf(acts[1])) != 0 {
		t.Fatalf("failed run = %v", run)
	}
	if n := len(rc.requests("/wf-never")); n != 0 {
		t.Fatalf("a skipped action was sent %d times", n)
	}

	// The paused workflow never ran, not even later.
	if rs := runsOf(t, in, key, offWF); len(rs) != 0 || len(rc.requests("/wf-paused")) != 0 {
		t.Fatalf("paused workflow ran: %v", rs)
	}
	in.do("GET", "/v1/workflows/wfl_unknown/runs", key, nil).expectError(t, http.StatusNotFound, "not_found")
}

// TestWorkflowsKafka: the same through Kafka, with the worker as its own process on PostgreSQL.
func TestWorkflowsKafka(t *testing.T) {
	t.Parallel()
	in, rc := newKafkaPipelineInstance(t)
	inThreeProcesses(t, in, "kafka-workflows", func(key string) { testWorkflowRuns(t, in, rc, key) })
}
