// Package e2e_test builds the real formward binary and walks the README quickstart as a user
// would: CLI for keys and workspaces, `formward serve` as a subprocess, curl-like HTTP calls.
package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/formward/formward/test/testkit"
)

const (
	defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	shutdownTimeout    = 10 * time.Second

	// Distinctive submitted values that must never appear in plaintext in storage.
	secretText  = "zebra-unicorn-42"
	secretEmail = "okapi-narwhal-7@example.org"
)

var formwardBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "formward-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		root, err := filepath.Abs("..")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: module root:", err)
			return 1
		}
		bin := filepath.Join(dir, "formward")
		build := exec.Command("go", "build", "-o", bin, "github.com/formward/formward")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building formward: %v\n%s\n", err, out)
			return 1
		}
		formwardBin = bin
		return m.Run()
	}()
	os.Exit(code)
}

// TestQuickstartSQLite is the embedded default: no configuration but a data dir and an address;
// the master key is generated into the data dir.
func TestQuickstartSQLite(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	state := walkQuickstart(t, in)

	// Raw-dump check: the SQLite files hold no submitted value in plaintext.
	db := filepath.Join(in.dataDir, "formward.db")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("expected the SQLite database at %s: %v", db, err)
	}
	assertNoPlaintext(t, in.dataDir)
	assertKeyFilesPrivate(t, in.dataDir)

	// The generated master key is kept: after a restart the submission still decrypts.
	in.startServe()
	assertSubmissionReadable(t, in, state)
	in.stopServe()
}

// TestQuickstartPostgres is the scaled-out mode: a fresh PostgreSQL database, `formward migrate`,
// then the same walk, a raw-dump check of every table and a master-key rotation.
func TestQuickstartPostgres(t *testing.T) {
	t.Parallel()
	dbURL := freshPostgresDatabase(t)
	oldKey := randomMasterKey(t)
	in := newInstance(t, dbURL, oldKey)
	in.cli("migrate")
	state := walkQuickstart(t, in)

	assertNoPlaintextInPostgres(t, dbURL)

	// Zero-downtime rotation: run with the new key and the old one as previous, rotate, then
	// drop the old key; the submission must still decrypt.
	newKey := randomMasterKey(t)
	in.setEnv("FORMWARD_MASTER_KEY", newKey)
	in.setEnv("FORMWARD_PREVIOUS_MASTER_KEYS", oldKey)
	in.startServe()
	assertSubmissionReadable(t, in, state)
	in.cli("keys", "rotate-master")
	assertSubmissionReadable(t, in, state)
	in.stopServe()

	in.setEnv("FORMWARD_PREVIOUS_MASTER_KEYS", "")
	in.startServe()
	assertSubmissionReadable(t, in, state)
	in.stopServe()
}

// quickstart is what the walk created, for checks after it.
type quickstart struct {
	adminKey     string
	formID       string
	submissionID string
	textFieldID  string
	emailFieldID string
}

func walkQuickstart(t *testing.T, in *instance) quickstart {
	t.Helper()
	var qs quickstart

	if v := in.cli("version"); v == "" {
		t.Fatalf("formward version printed nothing")
	}

	// The first key, created before the server ever ran.
	qs.adminKey = in.cli("keys", "create", "--name", "e2e", "--scope", "admin")
	assertLooksLikeKey(t, qs.adminKey)

	in.startServe()

	// Unauthenticated endpoints.
	r := in.do("GET", "/v1/openapi.json", "", nil)
	r.expect(t, http.StatusOK)
	if v, _ := r.obj["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Fatalf("openapi.json: openapi = %q, want 3.x", v)
	}
	if _, ok := r.obj["paths"].(map[string]any); !ok {
		t.Fatalf("openapi.json has no paths object")
	}
	assertUnknownPathsAnswerInKind(t, in)
	in.do("GET", "/v1/forms", "", nil).expectError(t, http.StatusUnauthorized, "unauthorized")
	in.do("GET", "/v1/forms", "fwk_not-a-real-key", nil).expectError(t, http.StatusUnauthorized, "unauthorized")

	// Create a form with a text, an email and a dropdown field.
	r = in.do("POST", "/v1/forms", qs.adminKey, map[string]any{
		"name":        "Contact us",
		"description": "Questions for the team",
		"fields": []map[string]any{
			{"label": "Name", "type": "text", "required": true, "placeholder": "Ada Lovelace"},
			{"label": "Email", "type": "email", "required": true},
			{"label": "Topic", "type": "dropdown", "options": []string{"Sales", "Support", "Other"}},
		},
	})
	r.expect(t, http.StatusCreated)
	qs.formID = r.str(t, "id")
	assertPrefix(t, "form id", qs.formID, "frm_")
	if s := r.str(t, "status"); s != "draft" {
		t.Fatalf("new form status = %q, want draft", s)
	}
	fields, _ := r.obj["fields"].([]any)
	if len(fields) != 3 {
		t.Fatalf("new form has %d fields, want 3: %s", len(fields), r.raw)
	}
	var fieldIDs []string
	for i, wantType := range []string{"text", "email", "dropdown"} {
		f, _ := fields[i].(map[string]any)
		id, _ := f["id"].(string)
		assertPrefix(t, fmt.Sprintf("fields[%d].id", i), id, "fld_")
		if f["type"] != wantType {
			t.Fatalf("fields[%d].type = %v, want %s", i, f["type"], wantType)
		}
		fieldIDs = append(fieldIDs, id)
	}
	qs.textFieldID, qs.emailFieldID = fieldIDs[0], fieldIDs[1]

	// Publish it.
	r = in.do("PATCH", "/v1/forms/"+qs.formID, qs.adminKey, map[string]any{"status": "published"})
	r.expect(t, http.StatusOK)
	if s := r.str(t, "status"); s != "published" {
		t.Fatalf("patched form status = %q, want published", s)
	}

	// Submit a response through the API.
	r = in.do("POST", "/v1/forms/"+qs.formID+"/submissions", qs.adminKey, map[string]any{
		"data": map[string]any{
			fieldIDs[0]: secretText,
			fieldIDs[1]: secretEmail,
			fieldIDs[2]: "Support",
		},
	})
	r.expect(t, http.StatusCreated)
	qs.submissionID = r.str(t, "id")
	assertPrefix(t, "submission id", qs.submissionID, "sub_")
	if got := r.str(t, "form_id"); got != qs.formID {
		t.Fatalf("submission form_id = %q, want %q", got, qs.formID)
	}
	meta, _ := r.obj["metadata"].(map[string]any)
	if meta["source"] != "api" {
		t.Fatalf("submission metadata.source = %v, want api: %s", meta["source"], r.raw)
	}
	if data, _ := r.obj["data"].(map[string]any); data[fieldIDs[0]] != secretText {
		t.Fatalf("submission data not echoed: %s", r.raw)
	}
	if _, err := time.Parse(time.RFC3339, r.str(t, "submitted_at")); err != nil {
		t.Fatalf("submitted_at is not RFC 3339: %v", err)
	}

	// List, get, count.
	r = in.do("GET", "/v1/forms/"+qs.formID+"/submissions", qs.adminKey, nil)
	r.expect(t, http.StatusOK)
	items, ok := r.obj["data"].([]any)
	if !ok || len(items) != 1 {
		t.Fatalf("submission list: want one item in data: %s", r.raw)
	}
	if first, _ := items[0].(map[string]any); first["id"] != qs.submissionID {
		t.Fatalf("submission list item id = %v, want %s", first["id"], qs.submissionID)
	}
	if r.obj["has_more"] != false {
		t.Fatalf("submission list has_more = %v, want false", r.obj["has_more"])
	}
	if v, present := r.obj["next_cursor"]; !present || v != nil {
		t.Fatalf("submission list next_cursor = %v (present %v), want null", v, present)
	}
	assertSubmissionReadable(t, in, qs)

	r = in.do("GET", "/v1/forms/"+qs.formID, qs.adminKey, nil)
	r.expect(t, http.StatusOK)
	if n, _ := r.obj["submission_count"].(float64); n != 1 {
		t.Fatalf("submission_count = %v, want 1", r.obj["submission_count"])
	}

	// A retried POST with the same Idempotency-Key is answered once; the stored replay is
	// covered by the raw-dump check too.
	retry := map[string]any{"data": map[string]any{
		fieldIDs[0]: secretText + " (retried)",
		fieldIDs[1]: secretEmail,
	}}
	first := in.doWith("POST", "/v1/forms/"+qs.formID+"/submissions", qs.adminKey, retry, "Idempotency-Key", "e2e-retry-1")
	first.expect(t, http.StatusCreated)
	again := in.doWith("POST", "/v1/forms/"+qs.formID+"/submissions", qs.adminKey, retry, "Idempotency-Key", "e2e-retry-1")
	again.expect(t, http.StatusCreated)
	if first.str(t, "id") != again.str(t, "id") {
		t.Fatalf("Idempotency-Key replay made a second submission: %s then %s", first.str(t, "id"), again.str(t, "id"))
	}
	r = in.do("GET", "/v1/forms/"+qs.formID, qs.adminKey, nil)
	r.expect(t, http.StatusOK)
	if n, _ := r.obj["submission_count"].(float64); n != 2 {
		t.Fatalf("submission_count after an idempotent retry = %v, want 2", r.obj["submission_count"])
	}

	// A read-only key reads but cannot write.
	var ro struct {
		ID          string `json:"id"`
		Key         string `json:"key"`
		Name        string `json:"name"`
		Scope       string `json:"scope"`
		WorkspaceID string `json:"workspace_id"`
	}
	out := in.cli("keys", "create", "--name", "reader", "--scope", "read-only", "--json")
	if err := json.Unmarshal([]byte(out), &ro); err != nil {
		t.Fatalf("keys create --json printed %q: %v", out, err)
	}
	if ro.ID == "" || ro.Name != "reader" || ro.Scope != "read-only" || ro.WorkspaceID == "" {
		t.Fatalf("keys create --json: unexpected object %s", out)
	}
	assertLooksLikeKey(t, ro.Key)
	in.do("GET", "/v1/forms/"+qs.formID, ro.Key, nil).expect(t, http.StatusOK)
	in.do("POST", "/v1/forms", ro.Key, map[string]any{"name": "Nope"}).
		expectError(t, http.StatusForbidden, "forbidden")
	in.do("POST", "/v1/forms/"+qs.formID+"/submissions", ro.Key, map[string]any{
		"data": map[string]any{fieldIDs[0]: "x", fieldIDs[1]: "x@example.com"},
	}).expectError(t, http.StatusForbidden, "forbidden")

	// Keys are shown once: listing them never prints a full key.
	for _, args := range [][]string{{"keys", "list"}, {"keys", "list", "--json"}} {
		listing := in.cli(args...)
		if !strings.Contains(listing, "reader") || !strings.Contains(listing, ro.ID) {
			t.Fatalf("%s does not show the reader key: %s", strings.Join(args, " "), listing)
		}
		if strings.Contains(listing, ro.Key) || strings.Contains(listing, qs.adminKey) {
			t.Fatalf("%s prints a full key", strings.Join(args, " "))
		}
	}

	// Revoked in another process while the server runs: rejected on the next request.
	in.cli("keys", "revoke", ro.ID)
	in.do("GET", "/v1/forms/"+qs.formID, ro.Key, nil).expectError(t, http.StatusUnauthorized, "unauthorized")
	in.do("GET", "/v1/forms/"+qs.formID, qs.adminKey, nil).expect(t, http.StatusOK)

	// Another workspace sees nothing of the first.
	wsID := in.cli("workspaces", "create", "--name", "Other")
	if wsID == "" || strings.ContainsAny(wsID, " \n\t") {
		t.Fatalf("workspaces create printed %q, want a single ID", wsID)
	}
	if ws := in.cli("workspaces", "list", "--json"); !strings.Contains(ws, wsID) {
		t.Fatalf("workspaces list --json does not show %s: %s", wsID, ws)
	}
	otherKey := in.cli("keys", "create", "--name", "other", "--scope", "admin", "--workspace", wsID)
	assertLooksLikeKey(t, otherKey)
	in.do("GET", "/v1/forms/"+qs.formID, otherKey, nil).expectError(t, http.StatusNotFound, "not_found")
	in.do("GET", "/v1/forms/"+qs.formID+"/submissions/"+qs.submissionID, otherKey, nil).
		expectError(t, http.StatusNotFound, "not_found")
	r = in.do("GET", "/v1/forms", otherKey, nil)
	r.expect(t, http.StatusOK)
	if items, _ := r.obj["data"].([]any); len(items) != 0 {
		t.Fatalf("other workspace lists %d forms, want 0", len(items))
	}

	// Graceful stop: SIGTERM, exit 0 within the shutdown timeout.
	in.stopServe()
	return qs
}

func assertSubmissionReadable(t *testing.T, in *instance, qs quickstart) {
	t.Helper()
	r := in.do("GET", "/v1/forms/"+qs.formID+"/submissions/"+qs.submissionID, qs.adminKey, nil)
	r.expect(t, http.StatusOK)
	if got := r.str(t, "id"); got != qs.submissionID {
		t.Fatalf("submission id = %q, want %q", got, qs.submissionID)
	}
	data, _ := r.obj["data"].(map[string]any)
	if data[qs.textFieldID] != secretText || data[qs.emailFieldID] != secretEmail {
		t.Fatalf("submission data does not read back: %s", r.raw)
	}
}

// ---- a formward installation: env, data dir, CLI runs and one serve process ----

type instance struct {
	t       *testing.T
	env     map[string]string
	dataDir string
	baseURL string
	client  *http.Client
	logs    *syncBuffer

	serve     *exec.Cmd
	serveDone chan error
}

func newInstance(t *testing.T, databaseURL, masterKey string) *instance {
	t.Helper()
	addr := freeAddr(t)
	in := &instance{
		t:       t,
		dataDir: t.TempDir(),
		baseURL: "http://" + addr,
		client:  &http.Client{Timeout: 15 * time.Second},
		logs:    &syncBuffer{},
	}
	in.env = map[string]string{
		"FORMWARD_DATA_DIR":         in.dataDir,
		"FORMWARD_HTTP_ADDR":        addr,
		"FORMWARD_LOG_LEVEL":        "info",
		"FORMWARD_SHUTDOWN_TIMEOUT": shutdownTimeout.String(),
		// Each instance starts from a fresh data dir, often with a key made before serve ran.
		"FORMWARD_INIT": "1",
	}
	if databaseURL != "" {
		in.env["FORMWARD_DATABASE_URL"] = databaseURL
	}
	if masterKey != "" {
		in.env["FORMWARD_MASTER_KEY"] = masterKey
	}
	t.Cleanup(func() {
		if in.serve != nil && in.serveDone != nil {
			_ = in.serve.Process.Kill()
			<-in.serveDone
		}
		if t.Failed() {
			t.Logf("formward output:\n%s", in.logs.String())
		}
	})
	return in
}

func (in *instance) setEnv(name, value string) {
	if value == "" {
		delete(in.env, name)
		return
	}
	in.env[name] = value
}

// environ is the parent environment without any FORMWARD_ variable, plus the instance's own.
func (in *instance) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FORMWARD_") {
			env = append(env, kv)
		}
	}
	for k, v := range in.env {
		env = append(env, k+"="+v)
	}
	return env
}

// cli runs one formward command to completion and returns its trimmed stdout.
func (in *instance) cli(args ...string) string {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, formwardBin, args...)
	cmd.Env = in.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	fmt.Fprintf(in.logs, "$ formward %s\n[stderr]\n%s\n", strings.Join(args, " "), stderr.String())
	if err != nil {
		in.t.Fatalf("formward %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

func (in *instance) startServe() {
	in.t.Helper()
	if in.serve != nil {
		in.t.Fatalf("serve already running")
	}
	cmd := exec.Command(formwardBin, "serve")
	cmd.Env = in.environ()
	fmt.Fprintf(in.logs, "$ formward serve\n")
	cmd.Stdout = in.logs
	cmd.Stderr = in.logs
	if err := cmd.Start(); err != nil {
		in.t.Fatalf("start formward serve: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	in.serve, in.serveDone = cmd, done

	deadline := time.Now().Add(30 * time.Second)
	for _, path := range []string{"/healthz", "/readyz"} {
		var resp *http.Response
		var err error
		if !testkit.Wait(max(time.Until(deadline), time.Nanosecond), func() bool {
			select {
			case err := <-done:
				in.serve, in.serveDone = nil, nil
				in.t.Fatalf("formward serve exited before %s answered: %v", path, err)
			default:
			}
			if resp, err = in.client.Get(in.baseURL + path); err != nil {
				return false
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}) {
			in.t.Fatalf("formward serve: %s did not answer 200 within 30s (last: %v)", path, describe(resp, err))
		}
	}
}

func describe(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// stopServe sends SIGTERM and expects a clean exit within the shutdown timeout.
func (in *instance) stopServe() {
	in.t.Helper()
	if in.serve == nil {
		in.t.Fatalf("serve is not running")
	}
	cmd, done := in.serve, in.serveDone
	in.serve, in.serveDone = nil, nil
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		in.t.Fatalf("SIGTERM formward serve: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			in.t.Fatalf("formward serve after SIGTERM: %v, want exit status 0", err)
		}
	case <-time.After(shutdownTimeout + 5*time.Second):
		_ = cmd.Process.Kill()
		<-done
		in.t.Fatalf("formward serve did not exit within %s of SIGTERM", shutdownTimeout+5*time.Second)
	}
}

// ---- HTTP ----

type result struct {
	method, path string
	status       int
	raw          []byte
	obj          map[string]any
}

func (in *instance) do(method, path, key string, body any) result {
	in.t.Helper()
	return in.doWith(method, path, key, body)
}

// doWith sends one request with extra headers given as name, value pairs.
func (in *instance) doWith(method, path, key string, body any, headers ...string) result {
	in.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			in.t.Fatalf("marshal body: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, in.baseURL+path, rd)
	if err != nil {
		in.t.Fatalf("%s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := in.client.Do(req)
	if err != nil {
		in.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		in.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := result{method: method, path: path, status: resp.StatusCode, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.obj); err != nil {
			in.t.Fatalf("%s %s: %d with a body that is not a JSON object: %v\n%s", method, path, resp.StatusCode, err, raw)
		}
	}
	return r
}

func (r result) expect(t *testing.T, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s %s: status %d, want %d\n%s", r.method, r.path, r.status, status, r.raw)
	}
}

func (r result) expectError(t *testing.T, status int, code string) {
	t.Helper()
	r.expect(t, status)
	e, _ := r.obj["error"].(map[string]any)
	if e == nil || e["code"] != code || e["status"] != float64(status) {
		t.Fatalf("%s %s: error body %s, want code %q and status %d", r.method, r.path, r.raw, code, status)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Fatalf("%s %s: error body without a message: %s", r.method, r.path, r.raw)
	}
}

func (r result) str(t *testing.T, name string) string {
	t.Helper()
	s, ok := r.obj[name].(string)
	if !ok {
		t.Fatalf("%s %s: %q is not a string in %s", r.method, r.path, name, r.raw)
	}
	return s
}

// ---- checks ----

func assertPrefix(t *testing.T, what, id, prefix string) {
	t.Helper()
	if !strings.HasPrefix(id, prefix) || len(id) <= len(prefix)+10 {
		t.Fatalf("%s = %q, want %s followed by a random part", what, id, prefix)
	}
}

func assertLooksLikeKey(t *testing.T, key string) {
	t.Helper()
	if len(key) < 20 || strings.ContainsAny(key, " \t\r\n{}\"") {
		t.Fatalf("expected the full API key alone on stdout, got %q", key)
	}
}

// assertNoPlaintext reads every file under dir (formward.db, -wal, -shm, …) as raw bytes.
func assertNoPlaintext(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed by the running server as the walk went
		}
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, secret := range []string{secretText, secretEmail} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the submitted value %q in plaintext", path, secret)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the data dir: %v", err)
	}
}

// assertKeyFilesPrivate checks that a generated key file in the data dir is readable by its owner only.
func assertKeyFilesPrivate(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the data dir: %v", err)
	}
	found := false
	for _, e := range entries {
		if e.IsDir() || !strings.Contains(strings.ToLower(e.Name()), "key") {
			continue
		}
		found = true
		info, err := e.Info()
		if err != nil {
			t.Fatalf("stat %s: %v", e.Name(), err)
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %o, want 0600", e.Name(), perm)
		}
	}
	if !found {
		t.Logf("no generated key file found by name in %s", dir)
	}
}

// assertNoPlaintextInPostgres reads every row of every table as text (bytea as hex).
func assertNoPlaintextInPostgres(t *testing.T, dbURL string) {
	t.Helper()
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatalf("open %s: %v", redactURL(dbURL), err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)
		FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatalf("list tables: %v", err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("list tables: %v", err)
	}
	rows.Close()
	if len(tables) == 0 {
		t.Fatalf("no tables in the migrated database")
	}
	var needles []string
	for _, s := range []string{secretText, secretEmail} {
		needles = append(needles, s, hex.EncodeToString([]byte(s)))
	}
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, "SELECT t::text FROM "+table+" t")
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatalf("dump %s: %v", table, err)
			}
			for _, n := range needles {
				if strings.Contains(row, n) {
					t.Errorf("table %s holds a submitted value in plaintext (%q)", table, n)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		rows.Close()
	}
}

// ---- PostgreSQL ----

// freshPostgresDatabase creates formward_e2e_<random> through the admin URL and drops it after
// the test. It skips when PostgreSQL is unreachable, unless FORMWARD_TEST_REQUIRE_POSTGRES=1.
func freshPostgresDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("FORMWARD_TEST_POSTGRES_URL")
	if admin == "" {
		admin = defaultPostgresURL
	}
	required := os.Getenv("FORMWARD_TEST_REQUIRE_POSTGRES") == "1"
	db, err := sql.Open("pgx", admin)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		if required {
			t.Fatalf("PostgreSQL at %s is unreachable: %v", redactURL(admin), err)
		}
		t.Skipf("PostgreSQL at %s is unreachable (%v); set FORMWARD_TEST_POSTGRES_URL", redactURL(admin), err)
	}

	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "formward_e2e_" + hex.EncodeToString(b[:])
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer db.Close()
		if _, err := db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})

	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse FORMWARD_TEST_POSTGRES_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// ---- small helpers ----

func randomMasterKey(t *testing.T) string {
	t.Helper()
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k[:])
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer collects the output of formward processes; written by os/exec goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// assertUnknownPathsAnswerInKind: an unknown dashboard path is the dashboard's own 404 page,
// with its security headers; an unknown API path stays the API's JSON error.
func assertUnknownPathsAnswerInKind(t *testing.T, in *instance) {
	t.Helper()
	for _, path := range []string{"/app/no-such-page", "/app/forms/frm_x/no-such-tab"} {
		resp, err := in.client.Get(in.baseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Frame-Options") != "DENY" ||
			!strings.Contains(string(body), "Not found") {
			t.Fatalf("GET %s: %d %q, CSP %q, framing %q\n%s", path, resp.StatusCode, resp.Header.Get("Content-Type"),
				resp.Header.Get("Content-Security-Policy"), resp.Header.Get("X-Frame-Options"), body)
		}
	}
	in.do("GET", "/v1/no-such-thing", "", nil).expectError(t, http.StatusNotFound, "not_found")
}
