package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/ports"
)

// Runners wraps every action runner so that each attempt of a workflow action is a span
// "workflow.action <type>", a child of the run's stored trace context (the consumer span of
// the event that started the run). Only IDs, the attempt number and the outcome become
// attributes, never configs, values or credentials.
func Runners(runners map[string]ports.ActionRunner) map[string]ports.ActionRunner {
	out := make(map[string]ports.ActionRunner, len(runners))
	for k, r := range runners {
		out[k] = tracedRunner{r}
	}
	return out
}

type tracedRunner struct{ ports.ActionRunner }

func (t tracedRunner) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	ctx, span := Tracer().Start(WithTraceParent(ctx, in.TraceParent), "workflow.action "+t.Type(),
		trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("formward.workspace.id", in.WorkspaceID),
			attribute.String("formward.workflow.id", in.WorkflowID),
			attribute.String("formward.run.id", in.RunID),
			attribute.String("formward.action.id", in.ActionID),
			attribute.String("formward.action.type", t.Type()),
			attribute.Int("formward.attempt", in.Attempt),
		)
	}
	out := t.ActionRunner.Run(ctx, in)
	if span.IsRecording() {
		if out.StatusCode != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", out.StatusCode))
		}
		span.SetAttributes(attribute.Bool("formward.action.breaker_open", out.BreakerOpen),
			attribute.Bool("formward.action.permanent", out.Permanent))
	}
	// The error's text is not recorded: it may quote a destination URL, whose path is a
	// credential for Slack and similar hooks.
	switch {
	case out.BreakerOpen:
		End(span, errBreakerOpen)
	case out.Err != nil:
		End(span, errAttemptFailed)
	default:
		span.End()
	}
	return out
}

var (
	errBreakerOpen   = errors.New("circuit breaker open")
	errAttemptFailed = errors.New("attempt failed")
)
