package bootstrap

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the CLI with a clean FORMWARD_ environment.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "FORMWARD_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	var out, errOut bytes.Buffer
	code = Main(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// A management command run against a directory that holds no installation (the classic: run
// from another working directory) refuses, names the data dir, and creates nothing; --init
// creates it on purpose; later commands use it and say so.
func TestManagementCommandsRefuseAFreshDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "elsewhere", "data")
	code, stdout, stderr := run(t, "keys", "create", "--name", "ci", "--scope", "admin", "--data-dir", dir, "--log-level", "error")
	if code == 0 || stdout != "" {
		t.Fatalf("keys create in a fresh data dir: exit %d, stdout %q; want a refusal and no key", code, stdout)
	}
	if !strings.Contains(stderr, dir) || !strings.Contains(stderr, "--init") {
		t.Fatalf("refusal does not name the data dir and --init:\n%s", stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refused command created %s (%v)", dir, err)
	}
	for _, args := range [][]string{{"keys", "list"}, {"workspaces", "list"}, {"migrate"}} {
		if code, _, _ := run(t, append(args, "--data-dir", dir, "--log-level", "error")...); code == 0 {
			t.Fatalf("%v in a fresh data dir succeeded", args)
		}
	}

	code, stdout, stderr = run(t, "keys", "create", "--init", "--name", "ci", "--scope", "admin", "--data-dir", dir, "--log-level", "error")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(stdout), "fwk_") {
		t.Fatalf("keys create --init: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "data dir "+dir) || !strings.Contains(stderr, filepath.Join(dir, "formward.db")) {
		t.Fatalf("stderr does not say which data dir and database were used:\n%s", stderr)
	}
	code, stdout, stderr = run(t, "keys", "list", "--data-dir", dir, "--log-level", "error")
	if code != 0 || !strings.Contains(stdout, "ci") || !strings.Contains(stderr, "data dir "+dir) {
		t.Fatalf("keys list in the initialised data dir: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
