package workflow

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
)

var runT0 = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func testRun(n int) *Run {
	var actions []ActionSnapshot
	for i := 0; i < n; i++ {
		actions = append(actions, ActionSnapshot{ActionID: "act_" + string(rune('a'+i)), Type: "send_webhook",
			Config: map[string]any{"url": "https://x.example/", "nested": map[string]any{"k": []any{"v"}}}})
	}
	e := event.Event{ID: "evt_1", Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_1", OccurredAt: runT0,
		Data: map[string]any{"submission_id": "sub_1", "fields": map[string]any{"f1": "x", "f2": []any{"a", "b"}, "f3": []string{"c"}}}}
	return StartRun("run_1", "wsp_1", "wfl_1", actions, e, runT0)
}

func statuses(r *Run) []ActionRunStatus {
	var out []ActionRunStatus
	for _, a := range r.Actions() {
		out = append(out, a.Status)
	}
	return out
}

func eqStatuses(a, b []ActionRunStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestStartRunSnapshots(t *testing.T) {
	cfg := map[string]any{"url": "https://x.example/", "headers": map[string]any{"a": "b"}}
	e := event.Event{ID: "evt_1", Type: event.SubmissionUpdated, FormID: "frm_1", OccurredAt: runT0,
		Data: map[string]any{"submission_id": "sub_9", "fields": map[string]any{"multi": []any{"a", "b"}}}}
	r := StartRun("run_1", "wsp_1", "wfl_1", []ActionSnapshot{{ActionID: "act_1", Type: "send_webhook", Config: cfg}}, e, runT0)
	cfg["url"] = "https://changed.example/"
	cfg["headers"].(map[string]any)["a"] = "changed"
	got := r.Actions()[0].Config
	if got["url"] != "https://x.example/" || got["headers"].(map[string]any)["a"] != "b" {
		t.Fatalf("config not snapshotted: %v", got)
	}
	if r.Status() != RunQueued || r.NextAttemptAt() == nil || !r.NextAttemptAt().Equal(runT0) || r.FinishedAt() != nil {
		t.Fatalf("new run: %s %v %v", r.Status(), r.NextAttemptAt(), r.FinishedAt())
	}
	if r.SubmissionID() != "sub_9" || r.EventType() != event.SubmissionUpdated || r.FormID() != "frm_1" {
		t.Fatalf("identity: %s %s %s", r.SubmissionID(), r.EventType(), r.FormID())
	}
	if l, ok := r.Fields()["multi"].([]string); !ok || len(l) != 2 || l[1] != "b" {
		t.Fatalf("fields: %#v", r.Fields())
	}
	if i, ok := r.Current(); !ok || i != 0 || r.NextAttemptNumber() != 1 {
		t.Fatalf("current %d %v", i, ok)
	}
	empty := StartRun("run_2", "wsp_1", "wfl_1", nil, e, runT0)
	if empty.Status() != RunSucceeded || empty.NextAttemptAt() != nil || empty.FinishedAt() == nil {
		t.Fatalf("empty run: %s", empty.Status())
	}
}

func TestRunRecord(t *testing.T) {
	delays, err := retry.New(time.Second, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	fail := AttemptOutcome{StatusCode: 500, Err: errors.New("answered 500")}
	ok := AttemptOutcome{StatusCode: 200, Duration: 12 * time.Millisecond}
	tests := []struct {
		name         string
		actions      int
		outcomes     []AttemptOutcome
		wantRun      RunStatus
		wantActions  []ActionRunStatus
		wantNext     *time.Duration // offset from the last attempt's time; nil when finished
		wantAttempts []int
	}{
		{"all succeed", 3, []AttemptOutcome{ok, ok, ok}, RunSucceeded,
			[]ActionRunStatus{ActionRunSucceeded, ActionRunSucceeded, ActionRunSucceeded}, nil, []int{1, 1, 1}},
		{"success moves on at once", 2, []AttemptOutcome{ok}, RunRunning,
			[]ActionRunStatus{ActionRunSucceeded, ActionRunPending}, ptrDur(0), []int{1, 0}},
		{"failure retries, later actions wait", 2, []AttemptOutcome{fail}, RunRunning,
			[]ActionRunStatus{ActionRunPending, ActionRunPending}, ptrDur(time.Second), []int{1, 0}},
		{"second failure uses the second delay", 2, []AttemptOutcome{fail, fail}, RunRunning,
			[]ActionRunStatus{ActionRunPending, ActionRunPending}, ptrDur(time.Minute), []int{2, 0}},
		{"retry then success", 2, []AttemptOutcome{fail, ok, ok}, RunSucceeded,
			[]ActionRunStatus{ActionRunSucceeded, ActionRunSucceeded}, nil, []int{2, 1}},
		{"given up after the last delay", 3, []AttemptOutcome{ok, fail, fail, fail}, RunFailed,
			[]ActionRunStatus{ActionRunSucceeded, ActionRunFailed, ActionRunSkipped}, nil, []int{1, 3, 0}},
		{"permanent failure", 3, []AttemptOutcome{{Err: errors.New("bad to"), Permanent: true}}, RunFailed,
			[]ActionRunStatus{ActionRunFailed, ActionRunSkipped, ActionRunSkipped}, nil, []int{1, 0, 0}},
		{"retry-at later than the schedule", 1, []AttemptOutcome{{StatusCode: 429, Err: errors.New("rate limited"), RetryAt: runT0.Add(time.Hour)}}, RunRunning,
			[]ActionRunStatus{ActionRunPending}, ptrDur(time.Hour), []int{1}},
		{"retry-at earlier than the schedule", 1, []AttemptOutcome{{StatusCode: 429, Err: errors.New("rate limited"), RetryAt: runT0.Add(time.Millisecond)}}, RunRunning,
			[]ActionRunStatus{ActionRunPending}, ptrDur(time.Second), []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRun(tt.actions)
			for _, o := range tt.outcomes {
				r.Record(o, runT0, delays)
			}
			if r.Status() != tt.wantRun {
				t.Fatalf("run status %s, want %s", r.Status(), tt.wantRun)
			}
			if got := statuses(r); !eqStatuses(got, tt.wantActions) {
				t.Fatalf("action statuses %v, want %v", got, tt.wantActions)
			}
			for i, a := range r.Actions() {
				if len(a.Attempts) != tt.wantAttempts[i] || a.Cycle != tt.wantAttempts[i] {
					t.Fatalf("action %d: %d attempts, want %d", i, len(a.Attempts), tt.wantAttempts[i])
				}
				for n, at := range a.Attempts {
					if at.Number != n+1 {
						t.Fatalf("attempt numbers %+v", a.Attempts)
					}
				}
			}
			switch {
			case tt.wantNext == nil:
				if r.NextAttemptAt() != nil || r.FinishedAt() == nil {
					t.Fatalf("finished run: next %v finished %v", r.NextAttemptAt(), r.FinishedAt())
				}
				if _, ok := r.Current(); ok {
					t.Fatal("finished run has a current action")
				}
			default:
				if r.NextAttemptAt() == nil || !r.NextAttemptAt().Equal(runT0.Add(*tt.wantNext)) || r.FinishedAt() != nil {
					t.Fatalf("next %v, want %v", r.NextAttemptAt(), runT0.Add(*tt.wantNext))
				}
			}
		})
	}
}

func TestRunAttemptShape(t *testing.T) {
	r := testRun(1)
	r.Record(AttemptOutcome{Duration: 1500 * time.Millisecond, Err: errors.New("timeout")}, runT0, retry.Default())
	r.Record(AttemptOutcome{StatusCode: 204, Duration: time.Millisecond}, runT0.Add(time.Second), retry.Default())
	as := r.Actions()[0].Attempts
	if as[0].StatusCode != nil || as[0].Error == nil || *as[0].Error != "timeout" || as[0].Duration != 1500*time.Millisecond {
		t.Fatalf("failed attempt %+v", as[0])
	}
	if as[1].StatusCode == nil || *as[1].StatusCode != 204 || as[1].Error != nil || !as[1].At.Equal(runT0.Add(time.Second)) {
		t.Fatalf("ok attempt %+v", as[1])
	}
	if !r.FinishedAt().Equal(runT0.Add(time.Second)) {
		t.Fatalf("finished at %v", r.FinishedAt())
	}
}

func TestRunPostpone(t *testing.T) {
	r := testRun(2)
	r.Postpone(runT0.Add(30 * time.Second))
	if r.NextAttemptNumber() != 1 || !r.NextAttemptAt().Equal(runT0.Add(30*time.Second)) || r.Status() != RunQueued {
		t.Fatalf("postpone used an attempt or did not move: %d %v %s", r.NextAttemptNumber(), r.NextAttemptAt(), r.Status())
	}
	r.Record(AttemptOutcome{Err: errors.New("x"), Permanent: true}, runT0, retry.Default())
	r.Postpone(runT0.Add(time.Hour))
	if r.NextAttemptAt() != nil {
		t.Fatal("postpone revived a finished run")
	}
	r.Record(AttemptOutcome{}, runT0, retry.Default())
	if r.Status() != RunFailed {
		t.Fatal("record changed a finished run")
	}
}

func ptrDur(d time.Duration) *time.Duration { return &d }

func TestNotificationRun(t *testing.T) {
	e := event.Event{ID: "evt_1", Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_1", OccurredAt: runT0,
		Data: map[string]any{"submission_id": "sub_1", "fields": map[string]any{"fld_1": "a@example.com"}}}
	r := StartNotificationRun("run_1", "wsp_1", KindOwner, ActionSnapshot{ActionID: "owner", Type: "send_email", Config: map[string]any{"to": "x"}}, e, runT0)
	if r.Kind() != KindOwner || r.WorkflowID() != "" || r.Status() != RunQueued || len(r.Actions()) != 1 || r.SubmissionID() != "sub_1" {
		t.Fatalf("run = %+v", r)
	}
	if w := StartRun("run_2", "wsp_1", "wfl_1", nil, e, runT0); w.Kind() != KindWorkflow {
		t.Fatalf("workflow run kind = %q", w.Kind())
	}
	for _, s := range []string{"workflow", "owner", "respondent"} {
		if k, ok := ParseRunKind(s); !ok || string(k) != s {
			t.Fatalf("ParseRunKind(%q) = %q, %v", s, k, ok)
		}
	}
	if _, ok := ParseRunKind("other"); ok || KindWorkflow.IsNotification() || !KindRespondent.IsNotification() {
		t.Fatal("kinds")
	}
}

func TestRunRetryAfterFailure(t *testing.T) {
	s, err := retry.New(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r := testRun(3)
	if err := r.Retry(runT0); !errors.Is(err, ErrRunNotFailed) {
		t.Fatalf("retry of a queued run: %v, want ErrRunNotFailed", err)
	}
	r.Record(AttemptOutcome{}, runT0, s) // the first action succeeds
	if err := r.Retry(runT0); !errors.Is(err, ErrRunNotFailed) {
		t.Fatalf("retry of a running run: %v, want ErrRunNotFailed", err)
	}
	r.Record(AttemptOutcome{Err: errors.New("down")}, runT0, s)
	r.Record(AttemptOutcome{Err: errors.New("down")}, runT0.Add(time.Minute), s) // given up: the run fails
	if r.Status() != RunFailed || !eqStatuses(statuses(r), []ActionRunStatus{ActionRunSucceeded, ActionRunFailed, ActionRunSkipped}) {
		t.Fatalf("before the retry: %s %v", r.Status(), statuses(r))
	}

	later := runT0.Add(time.Hour)
	if err := r.Retry(later); err != nil {
		t.Fatal(err)
	}
	if r.Status() != RunQueued || r.FinishedAt() != nil || r.NextAttemptAt() == nil || !r.NextAttemptAt().Equal(later) || !r.UpdatedAt().Equal(later) {
		t.Fatalf("after the retry: %s finished %v next %v", r.Status(), r.FinishedAt(), r.NextAttemptAt())
	}
	if !eqStatuses(statuses(r), []ActionRunStatus{ActionRunSucceeded, ActionRunPending, ActionRunPending}) {
		t.Fatalf("actions after the retry: %v", statuses(r))
	}
	if i, ok := r.Current(); !ok || i != 1 || r.NextAttemptNumber() != 1 {
		t.Fatalf("current %d %v, next attempt %d; want the failed action, attempt 1", i, ok, r.NextAttemptNumber())
	}
	if n := len(r.Actions()[1].Attempts); n != 2 {
		t.Fatalf("the earlier attempts are kept in the log: %d", n)
	}

	// A new cycle: the failed action has its full schedule again, and the run goes on from it.
	r.Record(AttemptOutcome{Err: errors.New("still down")}, later, s)
	if r.Status() != RunRunning || r.NextAttemptAt() == nil || !r.NextAttemptAt().Equal(later.Add(time.Minute)) {
		t.Fatalf("a failure in the new cycle is retried: %s %v", r.Status(), r.NextAttemptAt())
	}
	r.Record(AttemptOutcome{}, later.Add(time.Minute), s)
	r.Record(AttemptOutcome{}, later.Add(time.Minute), s)
	if r.Status() != RunSucceeded || r.FinishedAt() == nil {
		t.Fatalf("after the retried actions succeeded: %s", r.Status())
	}
	if n := len(r.Actions()[0].Attempts); n != 1 {
		t.Fatalf("the action that had succeeded ran again: %d attempts", n)
	}
	if err := r.Retry(later); !errors.Is(err, ErrRunNotFailed) {
		t.Fatalf("retry of a succeeded run: %v, want ErrRunNotFailed", err)
	}
}
