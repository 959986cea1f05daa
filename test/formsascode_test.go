package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The forms CLI against a running server: a folder of 50 forms applied to an empty workspace
// creates 50, applied again changes nothing, and after editing 3 files updates exactly 3.
func TestFormsAsCodeApplyFolder(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	key := in.cli("keys", "create", "--name", "ci", "--scope", "read-write")
	// The CLI waits out 429s; the test needs no pauses.
	in.setEnv("FORMWARD_API_RATE_LIMIT", "0")
	in.startServe()
	defer in.stopServe()
	in.setEnv("FORMWARD_API_URL", in.baseURL)
	in.setEnv("FORMWARD_API_KEY", key)

	dir := t.TempDir()
	// edit says how a file departs from the first version: a relabelled name, the details
	// question removed, or a third topic instead of Sales.
	type edit struct {
		label, topics string
		noDetails     bool
	}
	write := func(i int, e edit) {
		if e.label == "" {
			e.label = "Name"
		}
		if e.topics == "" {
			e.topics = "[Sales, Support]"
		}
		doc := fmt.Sprintf(`ref: form-%02d
name: Form %02d
description: Generated form %d
fields:
  - key: name
    label: %s
    type: text
    required: true
  - key: topic
    label: Topic
    type: radio
    options: %s
`, i, i, i, e.label, e.topics)
		if !e.noDetails {
			doc += `  - key: details
    label: Details
    type: textarea
    show_if:
      match: all
      conditions:
        - field_id: topic
          operator: equals
          value: Support
`
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("form-%02d.yaml", i)), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 50; i++ {
		write(i, edit{})
	}
	plan := in.cli("forms", "apply", "-f", dir)
	t.Logf("first apply:\n%s", plan)
	if !strings.Contains(plan, "Plan: 50 to create, 0 to update, 0 unchanged.") || strings.Count(plan, "+ create form-") != 50 {
		t.Fatalf("first plan:\n%s", plan)
	}
	plan = in.cli("forms", "apply", "-f", dir)
	t.Logf("second apply:\n%s", plan)
	if !strings.Contains(plan, "Plan: 0 to create, 0 to update, 50 unchanged.") {
		t.Fatalf("second plan:\n%s", plan)
	}

	// Two responses to form 17 answer the details question.
	forms := in.do("GET", "/v1/forms?limit=100", key, nil)
	var form17 string
	for _, f := range forms.obj["data"].([]any) {
		if f := f.(map[string]any); f["ref"] == "form-17" {
			form17 = f["id"].(string)
		}
	}
	for _, who := range []string{"Ada", "Grace"} {
		if r := in.do("POST", "/v1/forms/"+form17+"/submissions", key, map[string]any{"data": map[string]any{"name": who, "topic": "Support", "details": "Hello from " + who}}); r.status != 201 {
			t.Fatalf("submission to form 17: %d %s", r.status, r.raw)
		}
	}

	write(3, edit{label: "Your name"})
	write(17, edit{noDetails: true})
	write(42, edit{topics: "[Support, Partnerships]"})
	plan = in.cli("forms", "apply", "-f", dir, "--dry-run")
	t.Logf("dry run after editing 3 files:\n%s", plan)
	for _, want := range []string{"Plan: 0 to create, 3 to update, 47 unchanged.", "~ update form-03\n    ~ name (relabelled)\n",
		"~ update form-17\n    - details (2 stored answers, kept)\n", "~ update form-42\n    ~ topic: options (+Partnerships -Sales)\n"} {
		if !strings.Contains(plan, want) || strings.Contains(plan, "Applied") {
			t.Fatalf("dry-run plan lacks %q:\n%s", want, plan)
		}
	}
	plan = in.cli("forms", "apply", "-f", dir)
	t.Logf("apply after editing 3 files:\n%s", plan)
	if !strings.Contains(plan, "Plan: 0 to create, 3 to update, 47 unchanged.") || !strings.Contains(plan, "Applied: 0 created, 3 updated.") {
		t.Fatalf("third plan:\n%s", plan)
	}
	if plan = in.cli("forms", "apply", "-f", dir); !strings.Contains(plan, "Plan: 0 to create, 0 to update, 50 unchanged.") {
		t.Fatalf("after the update:\n%s", plan)
	}
	// The removed question's answers are kept.
	subs := in.do("GET", "/v1/forms/"+form17+"/submissions?include_removed=true", key, nil)
	if d := subs.obj["data"].([]any); len(d) != 2 || !strings.Contains(string(subs.raw), "Hello from Grace") {
		t.Fatalf("form 17's answers after the removal: %s", subs.raw)
	}

	// Export writes each form back as <ref>.yaml, and applying the export changes nothing.
	out := t.TempDir()
	log := in.cli("forms", "export", "-o", out)
	if n := strings.Count(log, "wrote "); n != 50 {
		t.Fatalf("export wrote %d files:\n%s", n, log)
	}
	if plan = in.cli("forms", "apply", "-f", out); !strings.Contains(plan, "Plan: 0 to create, 0 to update, 50 unchanged.") {
		t.Fatalf("apply of the export:\n%s", plan)
	}
}
