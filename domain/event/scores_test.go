package event_test

import (
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
)

// A scored submission's events carry data.score; other submissions' events do not.
func TestSubmissionEventScore(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	score := 2.5
	scored := submission.UnmarshalFromDatabase("sub_1", "wsp_1", "frm_1", map[string]submission.Value{"f1": submission.Single("a")},
		submission.Metadata{Source: submission.SourceAPI, Score: &score}, at, at)
	e := event.ForSubmission("evt_1", event.SubmissionCreated, scored, at)
	if e.Data["score"] != 2.5 {
		t.Fatalf("data %v", e.Data)
	}
	plain := submission.UnmarshalFromDatabase("sub_2", "wsp_1", "frm_1", map[string]submission.Value{"f1": submission.Single("a")},
		submission.Metadata{Source: submission.SourceAPI}, at, at)
	if _, ok := event.ForSubmission("evt_2", event.SubmissionCreated, plain, at).Data["score"]; ok {
		t.Fatal("an unscored submission's event carries a score")
	}
}
