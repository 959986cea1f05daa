package workflow_test

import (
	"testing"
	"time"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workflow"
)

func TestTemplatesNameFieldsByKey(t *testing.T) {
	vars := workflow.TemplateVars(map[string]submission.Value{"fld_1": submission.Single("ada@example.org"), "fld_2": submission.List([]string{"a", "b"})},
		"sub_1", "frm_1", "Contact", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	workflow.AddFieldKeys(vars, []form.Field{{ID: "fld_1", Key: "email"}, {ID: "fld_2", Key: "topics"}, {ID: "fld_3", Key: "empty"}, {ID: "fld_4", Key: "form_name"}})
	got := workflow.Render("{{email}} / {{ fld_1 }} / {{topics}} / [{{empty}}] / {{form_name}}", vars, false)
	if want := "ada@example.org / ada@example.org / a, b / [] / Contact"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
