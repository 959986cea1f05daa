package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/formward/formward/adapters/extend"
)

// The binary has the extension's action type beside Formward's own.
func TestBuildHasTeamsAction(t *testing.T) {
	actions := extend.Actions()
	for _, name := range []string{"teams_message", "send_email", "send_webhook", "chat_message", "spreadsheet_append", "automation_trigger"} {
		if _, ok := actions[name]; !ok {
			t.Errorf("action type %s is not in this build", name)
		}
	}
}

// The custom binary builds, is Formward's CLI, and says it has teams_message.
func TestBinaryListsTeamsAction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "formward")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "extensions")
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ActionTypes  []string `json:"action_types"`
		ObjectStores []string `json:"object_stores"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if !slices.Contains(got.ActionTypes, "teams_message") || !slices.Contains(got.ActionTypes, "send_email") || !slices.Contains(got.ObjectStores, "local") {
		t.Fatalf("the binary lists %+v", got)
	}
}
