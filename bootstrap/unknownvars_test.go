package bootstrap

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// knownVariables is every FORMWARD_ variable the commands read.
func knownVariables(t *testing.T) map[string]bool {
	t.Helper()
	var out bytes.Buffer
	c, _ := newCLI(&out, &out)
	return c.known
}

// A misspelt variable is not silently ignored: each unknown FORMWARD_ variable gets a warning
// with the closest known name, and never its value. Known ones, other programs' variables
// and the tests' own FORMWARD_TEST_ variables get none.
func TestUnknownVariablesAreWarnedAboutWithTheClosestName(t *testing.T) {
	known := knownVariables(t)
	for _, name := range []string{"FORMWARD_KAFKA_BROKERS", "FORMWARD_MASTER_KEY", "FORMWARD_KEY_NAME", "FORMWARD_RETRY_DELAYS", "FORMWARD_INIT"} {
		if !known[name] {
			t.Fatalf("%s is not among the known variables", name)
		}
	}
	core, logs := observer.New(zapcore.WarnLevel)
	warnUnknownVariables(zap.New(core), []string{
		"PATH=/usr/bin",
		"FORMWARD_KAFKA_BROKER=127.0.0.1:9092",
		"FORMWARD_HTTP_ADDR=127.0.0.1:8080",
		"FORMWARD_MASTERKEY=c2VjcmV0LXZhbHVlLW5ldmVyLWxvZ2dlZA==",
		"FORMWARD_TEST_POSTGRES_URL=postgres://127.0.0.1/x",
		"FORMWARD_KEY_NAM=ci",
		"FORMWARD_RETRY_DELAY=1s,2s",
	}, known)

	want := map[string]string{
		"FORMWARD_KAFKA_BROKER": "FORMWARD_KAFKA_BROKERS",
		"FORMWARD_MASTERKEY":    "FORMWARD_MASTER_KEY",
		"FORMWARD_KEY_NAM":      "FORMWARD_KEY_NAME",
		"FORMWARD_RETRY_DELAY":  "FORMWARD_RETRY_DELAYS",
	}
	entries := logs.All()
	if len(entries) != len(want) {
		t.Fatalf("%d warnings, want %d: %v", len(entries), len(want), entries)
	}
	for _, e := range entries {
		fields := e.ContextMap()
		name, _ := fields["variable"].(string)
		if e.Level != zapcore.WarnLevel || want[name] == "" || fields["closest_known"] != want[name] {
			t.Fatalf("warning %q %v, want one per unknown variable with its closest known name %v", e.Message, fields, want)
		}
		if line := e.Message + " " + name + " " + fields["closest_known"].(string); strings.Contains(line, "c2VjcmV0") || strings.Contains(line, "127.0.0.1") {
			t.Fatalf("a warning shows the variable's value: %s", line)
		}
		delete(want, name)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"FORMWARD_KAFKA_BROKER", "FORMWARD_KAFKA_BROKERS", 1}, {"FORMWARD_MASTERKEY", "FORMWARD_MASTER_KEY", 1},
		{"FORMWARD_HTTP_ADRR", "FORMWARD_HTTP_ADDR", 1}, {"FORMWARD_HTP_ADR", "FORMWARD_HTTP_ADDR", 2},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// Every variable the operators' pages name is one the binary reads, so following them never
// draws an unknown-variable warning (deployments/ checks the shipped manifests the same way).
func TestDocumentedVariablesAreKnown(t *testing.T) {
	known := knownVariables(t)
	name := regexp.MustCompile(`FORMWARD_[A-Z0-9_]*[A-Z0-9]`)
	for _, page := range []string{"configuration.md", "deploying.md", "backups.md"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range name.FindAllString(string(b), -1) {
			misspeltOnPurpose := v == "FORMWARD_KAFKA_BROKER" // the warning's example
			if !known[v] && !misspeltOnPurpose && !strings.HasPrefix(v+"_", testVariablePrefix) {
				t.Errorf("docs/%s names %s, which no command reads", page, v)
			}
		}
	}
}
