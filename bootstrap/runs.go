package bootstrap

import (
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/application/webhooks"
	workflowsapp "github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// Workflow runs next to webhook deliveries: the run starter turns each batch of events into
// runs after the fan-out, and the run engine executes them on the delivery retry schedule.

// provideRunEngine makes the engine over the registered action runners.
func provideRunEngine(runs ports.RunRepository, forms ports.FormRepository, submissions ports.SubmissionRepository,
	integrations ports.IntegrationRepository, runners map[string]ports.ActionRunner, clock ports.Clock, keyring *crypto.Keyring, cfg Config,
	log *zap.Logger, m *metrics.Metrics) (*workflowsapp.RunEngine, error) {
	if err := checkFairShares(cfg); err != nil {
		return nil, err
	}
	return workflowsapp.NewRunEngine(workflowsapp.RunEngineDeps{
		Runs: runs, Forms: forms, Submissions: submissions, Integrations: integrations, Clock: clock,
		// Owner notifications link uploaded files through the same signer as the API.
		Files: objectstore.Signer{Key: crypto.DeriveKey(keyring.Primary(), crypto.LabelFiles), BaseURL: publicURL(cfg)},
	}, runners, workflowsapp.RunEngineConfig{
		Retry: cfg.Retry, Concurrency: cfg.DeliveryConcurrency, PerWorkspace: cfg.DeliveryConcurrencyPerWorkspace,
		// An action may send mail or call an API that takes longer than a webhook endpoint.
		Timeout: max(cfg.DeliveryTimeout, 30*time.Second),
	}, m.RunObserver(runLog{log: log.Named("runs")}, slices.Sorted(maps.Keys(runners)))), nil
}

// provideRunStarter wakes the run engine of the same process whenever it stored runs.
func provideRunStarter(workflows ports.WorkflowRepository, forms ports.FormRepository, runs ports.RunRepository, ids ports.IDs,
	clock ports.Clock, engine *workflowsapp.RunEngine) *workflowsapp.RunStarter {
	return workflowsapp.NewRunStarter(workflows, forms, runs, ids, clock, engine.Notify)
}

// provideEventHandlers is what the worker does with each batch of events: deliveries, then runs.
func provideEventHandlers(fanOut *webhooks.FanOut, starter *workflowsapp.RunStarter) workflowsapp.EventHandlers {
	return workflowsapp.EventHandlers{fanOut.HandleBatch, starter.HandleBatch}
}

// runLog logs failed steps and attempts: IDs and outcomes, never configs or submitted values.
type runLog struct{ log *zap.Logger }

func (l runLog) Attempted(r *workflow.Run, a workflow.ActionRun, o ports.ActionOutcome) {
	lvl := zap.DebugLevel
	if a.Status == workflow.ActionRunFailed {
		lvl = zap.WarnLevel
	}
	if ce := l.log.Check(lvl, "action attempt"); ce != nil {
		ce.Write(zap.String("run_id", r.ID()), zap.String("workflow_id", r.WorkflowID()), zap.String("action_id", a.ActionID),
			zap.String("type", a.Type), zap.String("action_status", string(a.Status)), zap.String("run_status", string(r.Status())),
			zap.Int("attempts", a.Cycle), zap.Int("status_code", o.StatusCode), zap.Bool("breaker_open", o.BreakerOpen),
			zap.Bool("permanent", o.Permanent), zap.Duration("took", o.Duration), zap.Error(o.Err))
	}
}

func (l runLog) Failed(step string, err error) {
	l.log.Warn("run step failed, will retry", zap.String("step", step), zap.Error(err))
}
