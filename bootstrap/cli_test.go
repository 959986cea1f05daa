package bootstrap

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
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

// runToExit is run for a command expected to stop by itself (serve refusing to start): it
// fails the test when the command is still running after 30 seconds.
func runToExit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type exit struct {
		code           int
		stdout, stderr string
	}
	exited := make(chan exit, 1)
	go func() {
		code, stdout, stderr := run(t, args...)
		exited <- exit{code, stdout, stderr}
	}()
	select {
	case e := <-exited:
		return e.code, e.stdout, e.stderr
	case <-time.After(30 * time.Second):
		t.Fatalf("formward %v is still running after 30s", args)
		return 0, "", ""
	}
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

// One SQLite data dir, one server: serve exits at once when another process holds the data
// dir's serve lock, naming that process; management commands still run next to it.
func TestSecondServeOnOneDataDirExits(t *testing.T) {
	dir := t.TempDir()
	key := crypto.GenerateMasterKey().Base64()
	if code, _, stderr := run(t, "keys", "create", "--init", "--name", "ci", "--scope", "admin", "--data-dir", dir, "--master-key", key, "--log-level", "error"); code != 0 {
		t.Fatalf("keys create --init: %s", stderr)
	}
	unlock, err := persistence.LockServe(dir) // the running server, as far as serve can tell
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	code, _, stderr := runToExit(t, "serve", "--data-dir", dir, "--master-key", key, "--http-addr", "127.0.0.1:0", "--log-level", "error")
	if code == 0 || !strings.Contains(stderr, fmt.Sprintf("PID %d", os.Getpid())) || !strings.Contains(stderr, dir) {
		t.Fatalf("second serve: exit %d, stderr:\n%s", code, stderr)
	}
	if code, stdout, stderr := run(t, "keys", "list", "--data-dir", dir, "--master-key", key, "--log-level", "error"); code != 0 || !strings.Contains(stdout, "ci") {
		t.Fatalf("keys list next to a running serve: exit %d\n%s", code, stderr)
	}
}
