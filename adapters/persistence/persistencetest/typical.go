package persistencetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// TypicalFields are the ten fields of the large-form benchmarks (export, responses table): nine
// text questions and, fourth, a checkbox "Sessions" (Keynote, Workshops, Dinner).
func TypicalFields() []form.FieldSpec {
	specs := make([]form.FieldSpec, 10)
	for i := range specs {
		specs[i] = form.FieldSpec{Label: fmt.Sprintf("Question %d", i+1), Type: string(form.TypeText)}
	}
	specs[3] = form.FieldSpec{Label: "Sessions", Type: string(form.TypeCheckbox), Options: []string{"Keynote", "Workshops", "Dinner"}}
	return specs
}

// TypicalID is the ID ImportTypical gives submission i.
func TypicalID(i int) string { return fmt.Sprintf("sub_%026d", i) }

// ImportTypical stores n submissions of f (a form of TypicalFields) through subs, 10,000 per
// transaction: submission i has the ID TypicalID(i) and is received at at + i ms; each text
// answer is a sentence of typical length, the checkbox holds two options, and every one came
// from the public form with a referrer and a UTM source.
func ImportTypical(tb testing.TB, subs *persistence.SubmissionRepository, f *form.Form, at time.Time, n int) {
	tb.Helper()
	const chunk = 10_000
	ref := "https://example.com/landing"
	batch := make([]*submission.Submission, 0, chunk)
	for i := range n {
		data := make(map[string]submission.Value, 10)
		for j, fl := range f.Fields() {
			if fl.Type == form.TypeCheckbox {
				data[fl.ID] = submission.List([]string{"Keynote", "Dinner"})
				continue
			}
			data[fl.ID] = submission.Single(fmt.Sprintf("Answer %d to question %d, of typical length", i, j+1))
		}
		batch = append(batch, submission.UnmarshalFromDatabase(TypicalID(i), f.WorkspaceID(), f.ID(), data,
			submission.Metadata{Source: submission.SourceForm, Referrer: &ref, UTM: map[string]string{"utm_source": "newsletter"}},
			at.Add(time.Duration(i)*time.Millisecond), at))
		if len(batch) == chunk || i == n-1 {
			if err := subs.Import(context.Background(), batch...); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}
