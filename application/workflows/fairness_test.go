package workflows_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

// hangingRunner hangs every action of workspace A until the engine stops and records when the
// others ran.
type hangingRunner struct {
	mu             sync.Mutex
	inFlight, peak int
	ran            map[string]time.Time // run ID → when its action ran
}

func (h *hangingRunner) Type() string                                    { return "send_webhook" }
func (h *hangingRunner) Integration() string                             { return "" }
func (h *hangingRunner) Validate(map[string]any) []ports.ConfigViolation { return nil }
func (h *hangingRunner) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	if in.WorkspaceID == "wsp_a" {
		h.mu.Lock()
		h.inFlight++
		h.peak = max(h.peak, h.inFlight)
		h.mu.Unlock()
		<-ctx.Done()
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
		return ports.ActionOutcome{Err: ctx.Err()}
	}
	h.mu.Lock()
	h.ran[in.RunID] = time.Now()
	h.mu.Unlock()
	return ports.ActionOutcome{StatusCode: 200}
}

// Workflow runs get the same fairness: actions hanging in workspace A leave B's run a slot.
func TestHangingRunsDoNotDelayAnotherWorkspace(t *testing.T) {
	w := newRunsWorld(t)
	runner := &hangingRunner{ran: map[string]time.Time{}}
	engine := workflows.NewRunEngine(workflows.RunEngineDeps{Runs: w.runs, Forms: w.forms, Submissions: w.submissions,
		Integrations: w.integrations, Clock: apptest.WallClock{}}, map[string]ports.ActionRunner{"send_webhook": runner},
		workflows.RunEngineConfig{Retry: testSchedule, Timeout: time.Minute}, nil)
	start := func(workspaceID string, n int) *workflow.Run {
		e := event.Event{ID: fmt.Sprintf("evt_%s_%d", workspaceID, n), Type: event.SubmissionCreated, WorkspaceID: workspaceID,
			FormID: "frm_x", OccurredAt: time.Now(), Data: map[string]any{"submission_id": "sub_x", "fields": map[string]any{}}}
		return workflow.StartRun(fmt.Sprintf("run_%s_%d", workspaceID, n), workspaceID, "wfl_"+workspaceID,
			[]workflow.ActionSnapshot{{ActionID: "act_1", Type: "send_webhook", Config: map[string]any{"url": "https://x.example/"}}}, e, time.Now())
	}
	var backlog []*workflow.Run
	for i := range 40 {
		backlog = append(backlog, start("wsp_a", i))
	}
	if err := w.runs.AddAll(context.Background(), backlog); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = engine.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testkit.Eventually(t, 0, func() bool { runner.mu.Lock(); defer runner.mu.Unlock(); return runner.inFlight >= 4 }, "A's share in flight")

	created := time.Now()
	b := start("wsp_b", 0)
	if err := w.runs.AddAll(context.Background(), []*workflow.Run{b}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 0, func() bool { runner.mu.Lock(); defer runner.mu.Unlock(); _, ok := runner.ran[b.ID()]; return ok }, "B's run")
	runner.mu.Lock()
	took, peak := runner.ran[b.ID()].Sub(created), runner.peak
	runner.mu.Unlock()
	if took > time.Second {
		t.Fatalf("B's run waited %v behind A's hanging actions, want at most 1s", took)
	}
	if peak > 4 {
		t.Fatalf("workspace A had %d actions in flight, want at most 4", peak)
	}
}
