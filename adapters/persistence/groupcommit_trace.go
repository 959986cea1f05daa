package persistence

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/formward/formward/adapters/tracing"
)

// One group commit serves many requests, so it cannot be the child of any one of them. Each
// request gets a child span "submission.commit.wait" around its wait for the commit; the commit
// itself is one span "submission.commit" (a root of its own trace) with a link to every wait
// span it serves. A trace viewer thus shows, in the request's trace, how long it waited, and
// from the wait span (or the commit) the batch it rode in.

// startCommitWait starts the request's wait span; the returned context carries it to the
// committer, which links to it.
func startCommitWait(ctx context.Context) (context.Context, trace.Span) {
	return tracing.Tracer().Start(ctx, "submission.commit.wait")
}

// startCommitBatch starts the span of one commit transaction, linked to the waits it serves.
func startCommitBatch(shard int, batch []*pendingAdd) trace.Span {
	_, span := tracing.Tracer().Start(context.Background(), "submission.commit", trace.WithNewRoot())
	if !span.IsRecording() {
		return span
	}
	span.SetAttributes(attribute.Int("formward.commit.batch_size", len(batch)), attribute.Int("formward.commit.shard", shard))
	for _, p := range batch {
		if sc := trace.SpanContextFromContext(p.ctx); sc.IsValid() {
			span.AddLink(trace.Link{SpanContext: sc})
		}
	}
	return span
}
