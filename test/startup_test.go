package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// What the binary does at start when it is started wrongly: with another master key, on
// PostgreSQL without one, twice on one data dir, or twice at once on a fresh data dir.

// run runs one formward command to completion, with extra NAME=value variables over the
// instance's, and returns its output and exit code; a command still running after a minute
// is killed and fails the test.
func (in *instance) run(env []string, args ...string) (stdout, stderr string, code int) {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, formwardBin, args...)
	cmd.Env = append(in.environ(), env...) // the last of a duplicated name wins
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	fmt.Fprintf(in.logs, "$ formward %s\n[stderr]\n%s\n", strings.Join(args, " "), errOut.String())
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		in.t.Errorf("formward %s still running after a minute", strings.Join(args, " "))
		return out.String(), errOut.String(), -1
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	case err != nil:
		in.t.Errorf("formward %s: %v", strings.Join(args, " "), err)
		return out.String(), errOut.String(), -1
	}
	return out.String(), errOut.String(), 0
}

// masterKeyID is the public ID of a base64 master key: the hex of the first 8 bytes of the
// SHA-256 of the key.
func masterKeyID(t *testing.T, b64 string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// A data dir written under one master key and started with another: serve, and a management
// command, exit non-zero naming both key IDs, before serving anything; with the first key
// among the previous ones (a rotation) serve starts and reads what was stored.
func TestAnotherMasterKeyStopsTheStart(t *testing.T) {
	t.Parallel()
	oldKey := randomMasterKey(t)
	in := newInstance(t, "", oldKey)
	adminKey := in.cli("keys", "create", "--name", "e2e", "--scope", "admin")
	in.startServe()
	r := in.do("POST", "/v1/forms", adminKey, map[string]any{"name": "Keys", "fields": []map[string]any{{"label": "Name", "type": "text"}}})
	r.expect(t, http.StatusCreated)
	formID := r.str(t, "id")
	fields, _ := r.obj["fields"].([]any)
	field, _ := fields[0].(map[string]any)
	in.do("PATCH", "/v1/forms/"+formID, adminKey, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	r = in.do("POST", "/v1/forms/"+formID+"/submissions", adminKey, map[string]any{"data": map[string]any{field["id"].(string): secretText}})
	r.expect(t, http.StatusCreated)
	submissionID := r.str(t, "id")
	in.stopServe()

	newKey := randomMasterKey(t)
	in.setEnv("FORMWARD_MASTER_KEY", newKey)
	for _, args := range [][]string{{"serve"}, {"keys", "list"}} {
		_, stderr, code := in.run(nil, args...)
		if code == 0 {
			t.Fatalf("formward %v with another master key exited 0", args)
		}
		for _, id := range []string{masterKeyID(t, oldKey), masterKeyID(t, newKey)} {
			if !strings.Contains(stderr, id) {
				t.Fatalf("formward %v: stderr does not name master key %s:\n%s", args, id, stderr)
			}
		}
	}

	in.setEnv("FORMWARD_PREVIOUS_MASTER_KEYS", oldKey)
	in.startServe()
	r = in.do("GET", "/v1/forms/"+formID+"/submissions/"+submissionID, adminKey, nil)
	r.expect(t, http.StatusOK)
	in.stopServe()
}

// With PostgreSQL and no FORMWARD_MASTER_KEY, serve stops with a clear error and writes no
// key file into the data dir.
func TestPostgresWithoutMasterKeyStopsTheStart(t *testing.T) {
	t.Parallel()
	in := newInstance(t, freshPostgresDatabase(t), "")
	_, stderr, code := in.run(nil, "serve")
	if code == 0 || !strings.Contains(stderr, "FORMWARD_MASTER_KEY is required with FORMWARD_DATABASE_URL") {
		t.Fatalf("serve on PostgreSQL without a master key: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(in.dataDir, "master.key")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a master key file was generated on PostgreSQL (%v)", err)
	}
}

// A second serve on a SQLite data dir exits at once naming the first one's PID; management
// commands still run next to the server.
func TestOneServePerDataDir(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	in.startServe()
	_, stderr, code := in.run([]string{"FORMWARD_HTTP_ADDR=" + freeAddr(t)}, "serve")
	if want := fmt.Sprintf("PID %d", in.serve.Process.Pid); code == 0 || !strings.Contains(stderr, want) {
		t.Fatalf("second serve on one data dir: exit %d, want non-zero and %q in stderr:\n%s", code, want, stderr)
	}
	assertLooksLikeKey(t, in.cli("keys", "create", "--name", "beside-serve", "--scope", "read-only"))
	in.stopServe()
}

// Two commands started together on a fresh data dir both succeed: they take turns on a file
// lock while each opens the database and migrates it, so neither meets the other's switch to
// WAL ("database is locked") or sees the migrations half applied.
func TestCommandsStartedTogetherOnAFreshDataDir(t *testing.T) {
	t.Parallel()
	for round := range 10 {
		in := newInstance(t, "", "")
		var wg sync.WaitGroup
		results := make([]struct {
			stdout, stderr string
			code           int
		}, 2)
		for i := range results {
			wg.Go(func() {
				r := &results[i]
				r.stdout, r.stderr, r.code = in.run(nil, "keys", "create", "--name", fmt.Sprint("together-", i), "--scope", "admin")
			})
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 {
				t.Fatalf("round %d, command %d: exit %d, stderr:\n%s", round, i, r.code, r.stderr)
			}
			assertLooksLikeKey(t, strings.TrimSpace(r.stdout))
		}
	}
}

// A misspelt variable is named in a warning at start, with the name it was probably meant to
// be, and its value is not repeated.
func TestMisspeltVariableIsWarnedAbout(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	_, stderr, code := in.run([]string{"FORMWARD_KAFKA_BROKER=127.0.0.1:19092", "FORMWARD_LOG_LEVEL=warn"}, "keys", "create", "--name", "ci", "--scope", "admin")
	if code != 0 {
		t.Fatalf("keys create: exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, `"variable":"FORMWARD_KAFKA_BROKER"`) || !strings.Contains(stderr, `"closest_known":"FORMWARD_KAFKA_BROKERS"`) {
		t.Fatalf("no warning naming FORMWARD_KAFKA_BROKER and FORMWARD_KAFKA_BROKERS:\n%s", stderr)
	}
	if strings.Contains(stderr, "19092") {
		t.Fatalf("the warning repeats the variable's value:\n%s", stderr)
	}
}
