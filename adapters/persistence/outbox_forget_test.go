package persistence_test

import (
	"context"
	"testing"

	"github.com/formward/formward/domain/submission"
)

// outboxOf reads the outbox rows about a submission: how many, how many still carry a
// payload, and how many are still unpublished.
func outboxOf(t *testing.T, r repos, s *submission.Submission) (rows, withPayload, unpublished int) {
	t.Helper()
	err := r.db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*), COALESCE(SUM(CASE WHEN length(payload) > 0 THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN published_at IS NULL THEN 1 ELSE 0 END), 0) FROM outbox WHERE submission_id = $1`, s.ID()).Scan(&rows, &withPayload, &unpublished)
	noErr(t, err)
	return rows, withPayload, unpublished
}

// Every way a submission is deleted empties the payload of its outbox events in the same
// transaction and marks them published: the relay never sends them, a replay of the retained
// rows finds nothing of it, and a raw read of the outbox finds no copy of its answers. The
// events of other submissions keep theirs.
func TestDeletionEmptiesTheSubmissionsOutboxEvents(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		for _, c := range deletionPaths(r) {
			t.Run(c.name, func(t *testing.T) {
				sc := newKeyScene(t, r)
				for _, s := range []*submission.Submission{sc.gone.sub, sc.kept.sub, sc.elsewhere.sub} {
					if rows, payload, pending := outboxOf(t, r, s); rows != 1 || payload != 1 || pending != 1 {
						t.Fatalf("before: %d rows about %s, %d with a payload, %d unpublished; want one event, sealed, unpublished", rows, s.ID(), payload, pending)
					}
				}
				c.delete(t, sc)
				if rows, payload, pending := outboxOf(t, r, sc.gone.sub); payload != 0 || pending != 0 {
					t.Fatalf("after: %d rows about the deleted submission, %d with a payload, %d unpublished", rows, payload, pending)
				}
				kept, elsewhere := 1, 1
				if c.wholeWorkspace {
					kept = 0
				}
				if _, payload, _ := outboxOf(t, r, sc.kept.sub); payload != kept {
					t.Fatalf("the kept submission's events with a payload: %d, want %d", payload, kept)
				}
				if _, payload, _ := outboxOf(t, r, sc.elsewhere.sub); payload != elsewhere {
					t.Fatalf("another workspace's submission lost its event's payload")
				}
			})
		}
	})
}
