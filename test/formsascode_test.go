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
	write := func(i int, label string) {
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
    options: [Sales, Support]
  - key: details
    label: Details
    type: textarea
    show_if:
      match: all
      conditions:
        - field_id: topic
          operator: equals
          value: Support
`, i, i, i, label)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("form-%02d.yaml", i)), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 50; i++ {
		write(i, "Name")
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
	for _, i := range []int{3, 17, 42} {
		write(i, "Your name")
	}
	plan = in.cli("forms", "apply", "-f", dir, "--dry-run")
	t.Logf("dry run after editing 3 files:\n%s", plan)
	if !strings.Contains(plan, "Plan: 0 to create, 3 to update, 47 unchanged.") || strings.Count(plan, "~ name (relabelled)") != 3 || strings.Contains(plan, "Applied") {
		t.Fatalf("dry-run plan:\n%s", plan)
	}
	plan = in.cli("forms", "apply", "-f", dir)
	t.Logf("apply after editing 3 files:\n%s", plan)
	if !strings.Contains(plan, "Plan: 0 to create, 3 to update, 47 unchanged.") || !strings.Contains(plan, "~ update form-17") {
		t.Fatalf("third plan:\n%s", plan)
	}
	if plan = in.cli("forms", "apply", "-f", dir); !strings.Contains(plan, "Plan: 0 to create, 0 to update, 50 unchanged.") {
		t.Fatalf("after the update:\n%s", plan)
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
