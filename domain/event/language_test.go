package event_test

import (
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
)

func TestSubmissionEventCarriesTheLanguageOfAMultilingualForm(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	de := "de"
	with := submission.UnmarshalFromDatabase("sub_1", "wsp_1", "frm_1", nil, submission.Metadata{Source: submission.SourceForm, Language: &de}, at, at)
	if e := event.ForSubmission("evt_1", event.SubmissionCreated, with, at); e.Data["language"] != "de" {
		t.Fatalf("data %v", e.Data)
	}
	without := submission.UnmarshalFromDatabase("sub_2", "wsp_1", "frm_1", nil, submission.Metadata{Source: submission.SourceForm}, at, at)
	if e := event.ForSubmission("evt_2", event.SubmissionCreated, without, at); len(e.Data) != 2 {
		t.Fatalf("a submission without a language changed the event's data: %v", e.Data)
	}
}
