package persistence_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/formward/formward/adapters/tracing"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// The outbox row stores the capture request's trace context in the capture's transaction, the
// group commit shows as a wait span per request and one commit span linked to them, and the
// delivery and run rows keep the trace context of the event they were made for.
func TestTraceParentCarriedByRows(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))))
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)

		reqCtx, request := tracing.Tracer().Start(ctx, "request")
		traced, te := buildSubmission(t, f, base, subOpts{})
		noErr(t, r.submissions.Add(reqCtx, traced, te))
		request.End()
		untraced, ue := buildSubmission(t, f, base.Add(time.Second), subOpts{})
		noErr(t, r.submissions.Add(ctx, untraced, ue))

		recs, err := r.outbox.Pending(ctx, 0, 10)
		noErr(t, err)
		got := map[string]string{}
		for _, rec := range recs {
			got[rec.Event.ID] = rec.Event.TraceParent
		}
		want := tracing.TraceParent(reqCtx)
		if want == "" || got[te.ID] != want || got[ue.ID] != "" {
			t.Fatalf("outbox trace contexts %v, want %s for %s and none for %s", got, want, te.ID, ue.ID)
		}
		if n := count(t, r.db, "SELECT COUNT(*) FROM outbox WHERE traceparent IS NULL"); n != 1 {
			t.Fatalf("%d outbox rows without traceparent, want 1 (stored as NULL)", n)
		}

		var wait, commit *tracetest.SpanStub
		spans := exp.GetSpans()
		for i, s := range spans {
			if s.Name == "submission.commit.wait" && s.Parent.SpanID() == request.SpanContext().SpanID() {
				wait = &spans[i]
			}
		}
		if wait == nil {
			t.Fatal("no commit wait span under the request")
		}
		for i, s := range spans {
			for _, l := range s.Links {
				if s.Name == "submission.commit" && l.SpanContext.SpanID() == wait.SpanContext.SpanID() {
					commit = &spans[i]
				}
			}
		}
		if commit == nil || commit.Parent.IsValid() {
			t.Fatalf("no root commit span linked to the wait span: %+v", commit)
		}

		// Deliveries and runs keep the event's trace context through AddAll, the claim and Save.
		te.TraceParent = want
		hook := mustWebhook(t, r, w.ID(), nil, nil, base)
		d := webhook.NewDelivery(newID("dlv"), hook, te, []byte(`{}`), base)
		plain := buildDelivery(hook, f.ID(), base, `{}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{d, plain}))
		claimed, err := r.deliveries.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Hour), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 2 {
			t.Fatalf("claimed %d deliveries, want 2", len(claimed))
		}
		for _, c := range claimed {
			if want := map[string]string{d.ID(): want, plain.ID(): ""}[c.ID()]; c.TraceParent() != want {
				t.Fatalf("claimed delivery %s has trace context %q, want %q", c.ID(), c.TraceParent(), want)
			}
		}
		noErr(t, r.deliveries.Save(ctx, claimed[0]))
		again, err := r.deliveries.Get(ctx, w.ID(), hook.ID(), d.ID())
		noErr(t, err)
		if again.TraceParent() != want {
			t.Fatalf("saved delivery lost its trace context: %q", again.TraceParent())
		}

		runs := runRepo(r)
		ev := event.Event{ID: newID("evt"), Type: event.SubmissionCreated, WorkspaceID: w.ID(), FormID: f.ID(), OccurredAt: base,
			Data: map[string]any{"submission_id": traced.ID()}, TraceParent: want}
		run := buildRunFor(ev, "wfl_traced", base, "s3cret")
		noErr(t, runs.AddAll(ctx, []*workflow.Run{run}))
		due, err := runs.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Hour), Limit: 10, Lease: time.Minute})
		noErr(t, err)
		if len(due) != 1 || due[0].TraceParent() != want {
			t.Fatalf("claimed runs %+v, want one with trace context %s", due, want)
		}
	})
}
