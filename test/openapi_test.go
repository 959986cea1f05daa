package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/formward/formward/adapters/http/openapi"
	"github.com/formward/formward/test/testkit"
)

// TestOpenAPIThirdParty checks the served OpenAPI document with third-party tools: Redocly CLI
// (recommended rules) and Spectral (spectral:oas) must report no problem at all, and Prism, as a
// validating proxy in front of the real server, must find no violation in a scripted run of
// about 160 requests covering every operation and every error status (400, 401, 403, 404, 405,
// 409, 413, 422, 429). Requests the server
// accepts must validate; requests built to be refused must be refused by the document too
// where it can say so (a wrong type, a missing property), and every response must validate.
//
// Prism runs without --errors so that it forwards the refused requests as well and reports
// what it finds in the sl-violations header of each response. A known path with a method it does
// not have is not an operation, so Prism cannot check the 405: the document's own validator
// (adapters/http/openapi) checks every response too, the 405s included.
//
// Skipped when Node.js or npm is missing, unless FORMWARD_TEST_REQUIRE_BROWSER=1 (CI).
func TestOpenAPIThirdParty(t *testing.T) {
	tools := openapiTools(t)

	in := newInstance(t, "", "")
	in.setEnv("FORMWARD_API_RATE_LIMIT", "1")
	in.setEnv("FORMWARD_API_RATE_BURST", "30")
	in.setEnv("FORMWARD_ALLOW_PRIVATE_DESTINATIONS", "true")
	// Several read-write keys in turn keep the scripted run under the rate limit; the flood key
	// alone goes over it.
	var rw []string
	for i := 0; i < 5; i++ {
		rw = append(rw, in.cli("keys", "create", "--name", fmt.Sprintf("rw%d", i), "--scope", "read-write"))
	}
	ro := in.cli("keys", "create", "--name", "ro", "--scope", "read-only")
	flood := in.cli("keys", "create", "--name", "flood", "--scope", "read-only")
	in.startServe()

	r := in.do("GET", "/v1/openapi.json", "", nil)
	r.expect(t, http.StatusOK)
	docPath := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(docPath, r.raw, 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("lint", func(t *testing.T) {
		tools.lint(t, docPath)
	})
	t.Run("prism", func(t *testing.T) {
		px := tools.startPrism(t, docPath, in.baseURL+"/v1")
		px.keys = rw
		replay(t, px, ro, flood)
		t.Logf("%d requests through Prism", px.count)
	})
}

// ---- the tools ----

type openapiToolset struct {
	dir  string // test/openapi, absolute
	node string
}

func (tl openapiToolset) bin(name string) string {
	return filepath.Join(tl.dir, "node_modules", ".bin", name)
}

// run runs one of the tools with node on PATH and returns its stdout, stderr and exit error.
func (tl openapiToolset) run(t *testing.T, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tl.bin(name), args...)
	cmd.Dir = tl.dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(tl.node)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1", "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// lint runs both linters with the rulesets picked in test/openapi and expects nothing at all.
func (tl openapiToolset) lint(t *testing.T, doc string) {
	out, stderr, err := tl.run(t, "redocly", "lint", "--config", "redocly.yaml", "--format", "json", doc)
	var redocly struct {
		Totals   struct{ Errors, Warnings, Ignored int } `json:"totals"`
		Problems []struct {
			RuleID, Severity, Message string
			Location                  []struct{ Pointer string } `json:"location"`
		} `json:"problems"`
	}
	if jerr := json.Unmarshal([]byte(out), &redocly); jerr != nil {
		t.Fatalf("redocly lint: %v; output is not its JSON report (%v):\n%s\n%s", err, jerr, out, stderr)
	}
	for _, p := range redocly.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("redocly %s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	if redocly.Totals.Errors+redocly.Totals.Warnings+redocly.Totals.Ignored != 0 || err != nil {
		t.Errorf("redocly lint: %+v (exit: %v)", redocly.Totals, err)
	}

	report := filepath.Join(t.TempDir(), "spectral.json")
	out, stderr, err = tl.run(t, "spectral", "lint", "--ruleset", ".spectral.yaml", "--format", "json", "--output", report, "--fail-severity", "hint", doc)
	raw, rerr := os.ReadFile(report)
	var spectral []struct {
		Code, Message string
		Severity      int
		Path          []any
	}
	if jerr := json.Unmarshal(raw, &spectral); rerr != nil || jerr != nil {
		t.Fatalf("spectral lint: %v; no JSON report (%v, %v):\n%s\n%s", err, rerr, jerr, out, stderr)
	}
	for _, p := range spectral {
		t.Errorf("spectral severity %d %s at %v: %s", p.Severity, p.Code, p.Path, p.Message)
	}
	if err != nil && len(spectral) == 0 {
		t.Errorf("spectral lint: %v\n%s", err, stderr)
	}
}

// openapiTools returns the tools of test/openapi, or skips (fails under
// FORMWARD_TEST_REQUIRE_BROWSER=1) saying what is missing. It runs `npm ci` there when the
// installed packages are not the pinned ones.
func openapiTools(t *testing.T) openapiToolset {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("FORMWARD_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatalf("OpenAPI tools required (FORMWARD_TEST_REQUIRE_BROWSER=1) but %s", msg)
		}
		t.Skipf("skipping the OpenAPI tools test: %s (set FORMWARD_TEST_REQUIRE_BROWSER=1 to make this a failure)", msg)
	}
	dir, err := filepath.Abs("openapi")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH (apt-get install nodejs npm)")
	}
	// Redocly CLI needs Node.js 20.19 or later (22.12 on the 22 line).
	if out, err := exec.Command(node, "--version").Output(); err != nil {
		missing("node --version: %v", err)
	} else if v := strings.TrimSpace(string(out)); !nodeAtLeast(v, 20, 19) {
		missing("node %s is older than 20.19, which Redocly CLI needs", v)
	}
	if !pinnedInstalled(t, dir) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			missing("the tools are not installed in test/openapi and npm is not on PATH")
		}
		// No install scripts: none of the tools needs one (the only one is an analytics ping).
		cmd := exec.Command(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			missing("npm ci in test/openapi failed: %v\n%s", err, out)
		}
	}
	return openapiToolset{dir: dir, node: node}
}

// nodeAtLeast says whether a `node --version` such as v20.20.2 is at least major.minor.
func nodeAtLeast(version string, major, minor int) bool {
	var ma, mi int
	if _, err := fmt.Sscanf(version, "v%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// pinnedInstalled says whether node_modules holds exactly the versions package.json pins.
func pinnedInstalled(t *testing.T, dir string) bool {
	t.Helper()
	var pkg struct{ Dependencies map[string]string }
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("test/openapi/package.json: %v", err)
	}
	for name, version := range pkg.Dependencies {
		var installed struct{ Version string }
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil || json.Unmarshal(raw, &installed) != nil || installed.Version != version {
			return false
		}
	}
	return true
}

// ---- Prism ----

type prism struct {
	t       *testing.T
	base    string
	client  *http.Client
	v       *openapi.Validator
	keys    []string // read-write keys, used in turn
	next    int
	count   int
	logs    *syncBuffer
	stopped bool
}

// startPrism starts `prism proxy` in front of upstream and waits until it answers.
func (tl openapiToolset) startPrism(t *testing.T, doc, upstream string) *prism {
	t.Helper()
	addr := freeAddr(t)
	host, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(tl.bin("prism"), "proxy", doc, upstream, "--host", host, "--port", port, "--cors=false")
	cmd.Dir = tl.dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(tl.node)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prism: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		if t.Failed() {
			t.Logf("prism output:\n%s", logs.String())
		}
	})
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	px := &prism{t: t, base: "http://" + addr, client: &http.Client{Timeout: 30 * time.Second}, v: v, logs: logs}
	if !testkit.Wait(90*time.Second, func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("prism exited before it answered: %v\n%s", err, logs.String())
		default:
		}
		var resp *http.Response
		if resp, err = px.client.Get(px.base + "/openapi.json"); err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("prism did not answer within 90s: %v\n%s", err, logs.String())
	}
	return px
}

// What the document should say about a request.
type reqKind int

const (
	// valid: the server accepts it, or refuses it for a reason the document cannot express
	// (an unknown ID, a reused idempotency key); no request violation is allowed.
	valid reqKind = iota
	// invalid: built against the document's schema (a wrong type, a missing property, a
	// limit out of range); the document must flag it.
	invalid
	// semantic: refused by a rule beyond a schema (a required field's value, a bad cursor);
	// the document may or may not flag it.
	semantic
	// noOperation: a known path with a method it does not have; Prism reports that it found no
	// route, and the 405 is checked by the document's validator.
	noOperation
)

// call is one request of the replay.
type call struct {
	method, path string
	key          string // "" for none; "rw" for the next read-write key
	body         any    // []byte is sent as is; anything else is marshalled
	contentType  string // default application/json when there is a body; "-" for none
	headers      []string
	want         []int
	kind         reqKind
}

type answer struct {
	status int
	raw    []byte
	obj    map[string]any
}

func (a answer) str(name string) string { s, _ := a.obj[name].(string); return s }

// do sends one call through Prism and checks it: status, Prism's violations, our validator.
func (px *prism) do(c call) answer {
	t := px.t
	t.Helper()
	px.count++
	var raw []byte
	switch b := c.body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(c.method, px.base+c.path, rd)
	if err != nil {
		t.Fatal(err)
	}
	ct := c.contentType
	if ct == "" && raw != nil {
		ct = "application/json"
	}
	if ct != "" && ct != "-" {
		req.Header.Set("Content-Type", ct)
	}
	key := c.key
	if key == "rw" {
		key = px.keys[px.next%len(px.keys)]
		px.next++
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(c.headers); i += 2 {
		req.Header.Set(c.headers[i], c.headers[i+1])
	}
	resp, err := px.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	a := answer{status: resp.StatusCode, raw: body}
	_ = json.Unmarshal(body, &a.obj)
	name := fmt.Sprintf("#%d %s %s (%s)", px.count, c.method, c.path, ct)

	want := c.want
	if len(want) == 0 {
		want = []int{http.StatusOK}
	}
	ok := false
	for _, w := range want {
		ok = ok || w == a.status
	}
	if !ok {
		t.Errorf("%s: status %d, want %v\n%.500s", name, a.status, want, body)
	}

	var violations []struct {
		Location []string `json:"location"`
		Severity string   `json:"severity"`
		Code     any      `json:"code"`
		Message  string   `json:"message"`
	}
	if h := resp.Header.Get("sl-violations"); h != "" {
		if err := json.Unmarshal([]byte(h), &violations); err != nil {
			t.Errorf("%s: sl-violations is not JSON: %v: %s", name, err, h)
		}
	}
	requestFlagged, routeMissing := false, false
	for _, v := range violations {
		switch {
		case len(v.Location) == 1 && v.Location[0] == "request" && v.Message == "Selected route not found":
			routeMissing = true
			if c.kind != noOperation {
				t.Errorf("%s: Prism found no route: %s", name, v.Message)
			}
		case len(v.Location) > 0 && v.Location[0] == "request":
			requestFlagged = true
			if c.kind == valid || c.kind == noOperation {
				t.Errorf("%s: request violation %v (%s, %v): %s", name, v.Location, v.Severity, v.Code, v.Message)
			}
		default:
			t.Errorf("%s: response violation %v (%s, %v): %s\n%.500s", name, v.Location, v.Severity, v.Code, v.Message, body)
		}
	}
	if c.kind == invalid && !requestFlagged {
		t.Errorf("%s: the document accepts a request the server refuses with %d", name, a.status)
	}
	if c.kind == noOperation && !routeMissing {
		t.Errorf("%s: Prism found an operation for a method the path does not have", name)
	}
	if err := px.v.ValidateResponse(c.method, c.path, a.status, body); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return a
}

// ---- the replay ----

// replay walks every operation and every error status, as the handler tests do.
func replay(t *testing.T, px *prism, ro, flood string) {
	st := func(codes ...int) []int { return codes }

	// Meta and authentication.
	px.do(call{method: "GET", path: "/openapi.json"})
	px.do(call{method: "GET", path: "/forms", want: st(401), kind: invalid})
	px.do(call{method: "GET", path: "/forms", key: "fwk_not-a-real-key", want: st(401)})
	px.do(call{method: "GET", path: "/forms", headers: []string{"Authorization", "Basic Zm9vOmJhcg=="}, want: st(401), kind: semantic})
	px.do(call{method: "PUT", path: "/forms", key: "rw", body: map[string]any{}, want: st(405), kind: noOperation})
	px.do(call{method: "DELETE", path: "/forms", key: "rw", want: st(405), kind: noOperation})
	px.do(call{method: "PUT", path: "/openapi.json", want: st(405), kind: noOperation})
	px.do(call{method: "POST", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA/submissions/sub_AAAAAAAAAAAAAAAAAAAA", key: "rw", want: st(405), kind: noOperation})
	px.do(call{method: "PATCH", path: "/integrations/int_AAAAAAAAAAAAAAAAAAAA", key: "rw", body: map[string]any{}, want: st(405), kind: noOperation})

	// Forms.
	fields := []map[string]any{
		{"label": "Name", "type": "text", "required": true, "placeholder": "Ada"},
		{"label": "Email", "type": "email", "required": true},
		{"label": "Topic", "type": "dropdown", "options": []string{"Sales", "Support"}},
		{"label": "Size", "type": "radio", "options": []string{"S", "M", "L"}},
		{"label": "Extras", "type": "checkbox", "options": []string{"x", "y"}},
		{"label": "Agree", "type": "checkbox"},
		{"label": "Age", "type": "number"},
		{"label": "Day", "type": "date"},
		{"label": "Notes", "type": "textarea"},
		{"label": "CV", "type": "file", "accept": []string{"application/pdf", "image/*"}, "max_file_size": 1048576},
	}
	settings := map[string]any{
		"redirect_url": nil, "thank_you_message": "Thanks!",
		"spam":          map[string]any{"honeypot": true, "min_fill_seconds": 2, "proof_of_work": false, "captcha": map[string]any{"provider": "turnstile", "site_key": "site", "secret": "captcha-secret"}},
		"embed":         map[string]any{"frame_ancestors": []string{"https://example.com"}, "cors_origins": []string{"https://example.com"}},
		"notifications": map[string]any{"owner": map[string]any{"enabled": true, "to": []string{"owner@example.com"}}},
	}
	form := px.do(call{method: "POST", path: "/forms", key: "rw", body: map[string]any{"name": "Everything", "description": "All field types", "fields": fields, "settings": settings}, want: st(201)})
	formID := form.str("id")
	if formID == "" {
		t.Fatalf("POST /forms gave no id: %s", form.raw)
	}
	ids := map[string]string{}
	for _, f := range form.obj["fields"].([]any) {
		f := f.(map[string]any)
		ids[f["label"].(string)] = f["id"].(string)
	}
	other := px.do(call{method: "POST", path: "/forms", key: "rw", contentType: "text/plain", body: map[string]any{"name": "Plain text"}, want: st(201)})
	// Prism checks a body without Content-Type against the first media type without parsing it
	// as JSON, although the document lists */* too: the server's answer is still checked.
	px.do(call{method: "POST", path: "/forms", key: "rw", contentType: "-", body: map[string]any{"name": "No content type"}, want: st(201), kind: semantic})
	px.do(call{method: "POST", path: "/forms", key: "rw", contentType: "application/x-www-form-urlencoded", body: map[string]any{"name": "Form-encoded"}, want: st(201)})
	px.do(call{method: "POST", path: "/forms", key: "rw", contentType: "application/json; charset=utf-8", body: map[string]any{"name": "Charset"}, want: st(201)})
	// Sending back what a read gave, read-only properties included.
	px.do(call{method: "POST", path: "/forms", key: "rw", body: form.obj, want: st(422), kind: semantic}) // a field id on create
	px.do(call{method: "POST", path: "/forms", key: "rw", body: map[string]any{"name": "Copy", "id": formID, "status": "published", "created_at": form.obj["created_at"], "updated_at": form.obj["updated_at"], "submission_count": 3}, want: st(201)})
	px.do(call{method: "POST", path: "/forms", key: "rw", body: map[string]any{"description": "no name"}, want: st(422), kind: invalid})
	px.do(call{method: "POST", path: "/forms", key: "rw", body: map[string]any{"name": "X", "owner": "me"}, want: st(422), kind: invalid})
	px.do(call{method: "POST", path: "/forms", key: "rw", body: map[string]any{"name": "X", "fields": []map[string]any{{"label": "A", "type": "slider"}}}, want: st(422), kind: invalid})
	px.do(call{method: "POST", path: "/forms", key: "rw", body: map[string]any{"name": "X", "fields": []map[string]any{{"label": "A", "type": "dropdown"}}}, want: st(422), kind: semantic})
	// Prism answers malformed JSON itself when the Content-Type says JSON; under another type it
	// forwards it, and the server reads it as JSON all the same.
	px.do(call{method: "POST", path: "/forms", key: "rw", contentType: "text/plain", body: []byte(`{"name": "X",`), want: st(400), kind: semantic})
	px.do(call{method: "POST", path: "/forms", key: "rw", body: []byte(`["not", "an", "object"]`), want: st(400), kind: invalid})
	px.do(call{method: "POST", path: "/forms", key: "rw", body: map[string]any{"name": "X", "description": strings.Repeat("x", 1<<20)}, want: st(413), kind: semantic})
	px.do(call{method: "POST", path: "/forms", key: ro, body: map[string]any{"name": "X"}, want: st(403)})
	px.do(call{method: "POST", path: "/forms", key: "rw", headers: []string{"Idempotency-Key", "openapi-1"}, body: map[string]any{"name": "Once"}, want: st(201)})
	px.do(call{method: "POST", path: "/forms", key: px.keys[0], headers: []string{"Idempotency-Key", "openapi-2"}, body: map[string]any{"name": "Twice"}, want: st(201)})
	px.do(call{method: "POST", path: "/forms", key: px.keys[0], headers: []string{"Idempotency-Key", "openapi-2"}, body: map[string]any{"name": "Twice"}, want: st(201)})
	px.do(call{method: "POST", path: "/forms", key: px.keys[0], headers: []string{"Idempotency-Key", "openapi-2"}, body: map[string]any{"name": "Other"}, want: st(409)})

	px.do(call{method: "GET", path: "/forms", key: "rw"})
	page := px.do(call{method: "GET", path: "/forms?limit=2", key: ro})
	cursor, _ := page.obj["next_cursor"].(string)
	px.do(call{method: "GET", path: "/forms?limit=2&cursor=" + cursor, key: ro})
	px.do(call{method: "GET", path: "/forms?status=draft", key: "rw"})
	px.do(call{method: "GET", path: "/forms?limit=0", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: "/forms?limit=101", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: "/forms?limit=ten", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: "/forms?status=live", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: "/forms?cursor=x" + cursor, key: "rw", want: st(400), kind: semantic})

	px.do(call{method: "GET", path: "/forms/" + formID, key: ro})
	px.do(call{method: "GET", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA", key: "rw", want: st(404)})
	px.do(call{method: "GET", path: "/forms/not-an-id", key: "rw", want: st(404), kind: semantic})
	// Publish by sending the whole form back, read-only properties included.
	back := clone(t, form.obj)
	back["status"] = "published"
	back["settings"].(map[string]any)["spam"].(map[string]any)["proof_of_work"] = true
	px.do(call{method: "PATCH", path: "/forms/" + formID, key: "rw", body: back})
	px.do(call{method: "PATCH", path: "/forms/" + formID, key: "rw", contentType: "text/plain", body: map[string]any{"description": "Changed"}})
	px.do(call{method: "PATCH", path: "/forms/" + formID, key: "rw", body: map[string]any{"name": ""}, want: st(422), kind: invalid})
	px.do(call{method: "PATCH", path: "/forms/" + formID, key: "rw", body: map[string]any{"fields": []map[string]any{{"id": "fld_AAAAAAAAAAAAAAAAAAAA", "label": "A", "type": "text"}}}, want: st(422), kind: semantic})
	px.do(call{method: "PATCH", path: "/forms/" + formID, key: "rw", body: map[string]any{"settings": map[string]any{"spam": map[string]any{"min_fill_seconds": -1}}}, want: st(422), kind: invalid})
	px.do(call{method: "PATCH", path: "/forms/" + formID, key: ro, body: map[string]any{"name": "X"}, want: st(403)})
	px.do(call{method: "PATCH", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA", key: "rw", body: map[string]any{"name": "X"}, want: st(404)})

	// Webhooks: a receiver that is never there, so deliveries fail and can be retried.
	hook := px.do(call{method: "POST", path: "/webhooks", key: "rw", body: map[string]any{"url": "https://127.0.0.1:9/hook", "events": []string{"submission.created", "submission.updated"}, "form_id": formID, "secret": "whsec-openapi"}, want: st(201)})
	hookID := hook.str("id")
	px.do(call{method: "POST", path: "/webhooks", key: "rw", body: map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"submission.created"}}, want: st(422), kind: semantic})
	px.do(call{method: "POST", path: "/webhooks", key: "rw", body: map[string]any{"url": "https://127.0.0.1:9/hook", "events": []string{}}, want: st(422), kind: invalid})
	px.do(call{method: "POST", path: "/webhooks", key: "rw", body: map[string]any{"url": "https://127.0.0.1:9/hook", "events": []string{"form.deleted"}}, want: st(422), kind: invalid})
	px.do(call{method: "GET", path: "/webhooks", key: ro})
	px.do(call{method: "GET", path: "/webhooks/" + hookID, key: "rw"})
	px.do(call{method: "GET", path: "/webhooks/whk_AAAAAAAAAAAAAAAAAAAA", key: "rw", want: st(404)})
	px.do(call{method: "PATCH", path: "/webhooks/" + hookID, key: "rw", body: hook.obj})
	px.do(call{method: "PATCH", path: "/webhooks/" + hookID, key: "rw", body: map[string]any{"secret": nil, "form_id": nil}})
	px.do(call{method: "PATCH", path: "/webhooks/" + hookID, key: "rw", body: map[string]any{"secret": "whsec-again", "form_id": formID}})
	px.do(call{method: "PATCH", path: "/webhooks/" + hookID, key: "rw", body: map[string]any{"url": 42}, want: st(422), kind: invalid})
	// Still enabled (switching it off here would skip the events the deliveries below wait for).
	px.do(call{method: "PATCH", path: "/webhooks/" + hookID, key: "rw", body: map[string]any{"enabled": true}})
	px.do(call{method: "PATCH", path: "/webhooks/" + hookID, key: "rw", body: map[string]any{"enabled": "off"}, want: st(422), kind: invalid})

	// Workflows.
	wf := px.do(call{method: "POST", path: "/workflows", key: "rw", body: map[string]any{
		"name": "Notify", "form_id": formID, "enabled": true,
		"trigger": map[string]any{"type": "submission.created", "config": map[string]any{"conditions": []map[string]any{{"field_id": ids["Topic"], "operator": "equals", "value": "Sales"}}}},
		"actions": []map[string]any{{"type": "send_webhook", "config": map[string]any{"url": "https://127.0.0.1:9/wf", "secret": "wf-secret"}}},
	}, want: st(201)})
	wfID := wf.str("id")
	px.do(call{method: "POST", path: "/workflows", key: "rw", body: map[string]any{"name": "All", "form_id": formID, "trigger": map[string]any{"type": "submission.created"}, "actions": []map[string]any{{"type": "send_webhook", "config": map[string]any{"url": "https://127.0.0.1:9/all"}}}}, want: st(201)})
	px.do(call{method: "POST", path: "/workflows", key: "rw", body: map[string]any{"name": "X", "form_id": "frm_AAAAAAAAAAAAAAAAAAAA", "trigger": map[string]any{"type": "submission.created"}, "actions": []map[string]any{}}, want: st(422), kind: semantic})
	px.do(call{method: "POST", path: "/workflows", key: "rw", body: map[string]any{"name": "X", "form_id": formID, "trigger": map[string]any{"type": "submission.created"}, "actions": []map[string]any{{"type": "fax", "config": map[string]any{}}}}, want: st(422), kind: semantic})
	px.do(call{method: "POST", path: "/workflows", key: "rw", body: map[string]any{"name": "X", "form_id": formID, "trigger": map[string]any{"type": "form.created"}, "actions": []map[string]any{}}, want: st(422), kind: invalid})
	px.do(call{method: "POST", path: "/workflows", key: ro, body: map[string]any{"name": "X", "form_id": formID, "trigger": map[string]any{"type": "submission.created"}, "actions": []map[string]any{}}, want: st(403)})
	px.do(call{method: "GET", path: "/workflows", key: ro})
	px.do(call{method: "GET", path: "/workflows?form_id=" + formID + "&limit=1", key: "rw"})
	px.do(call{method: "GET", path: "/workflows/" + wfID, key: "rw"})
	px.do(call{method: "GET", path: "/workflows/wfl_AAAAAAAAAAAAAAAAAAAA", key: "rw", want: st(404)})
	px.do(call{method: "PATCH", path: "/workflows/" + wfID, key: "rw", body: wf.obj})
	px.do(call{method: "PATCH", path: "/workflows/" + wfID, key: "rw", body: map[string]any{"enabled": "yes"}, want: st(422), kind: invalid})

	// Integrations.
	in1 := px.do(call{method: "POST", path: "/integrations", key: "rw", body: map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "xoxb-openapi"}}, want: st(201)})
	intID := in1.str("id")
	back = clone(t, in1.obj)
	back["credentials"] = map[string]any{"bot_token": "xoxb-again"}
	in2 := px.do(call{method: "POST", path: "/integrations", key: "rw", body: back, want: st(201)})
	px.do(call{method: "POST", path: "/integrations", key: "rw", body: map[string]any{"type": "google_sheets", "credentials": map[string]any{"service_account_json": "{}"}}, want: st(422), kind: semantic})
	px.do(call{method: "POST", path: "/integrations", key: "rw", body: map[string]any{"type": "teams", "credentials": map[string]any{}}, want: st(422), kind: invalid})
	px.do(call{method: "GET", path: "/integrations", key: ro})
	px.do(call{method: "GET", path: "/integrations/" + intID, key: "rw"})
	px.do(call{method: "GET", path: "/integrations/int_AAAAAAAAAAAAAAAAAAAA", key: "rw", want: st(404)})
	px.do(call{method: "DELETE", path: "/integrations/" + in2.str("id"), key: "rw", want: st(204)})
	px.do(call{method: "DELETE", path: "/integrations/" + in2.str("id"), key: "rw", want: st(404)})
	px.do(call{method: "DELETE", path: "/integrations/" + intID, key: ro, want: st(403)})

	// Submissions.
	subs := "/forms/" + formID + "/submissions"
	data := map[string]any{
		ids["Name"]: "Ada", ids["Email"]: "ada@example.com", ids["Topic"]: "Sales", ids["Size"]: "M",
		ids["Extras"]: []string{"x", "y"}, ids["Agree"]: true, ids["Age"]: 36, ids["Day"]: "2026-11-23",
		ids["Notes"]: "Hello", ids["CV"]: []string{"https://example.com/cv.pdf"},
	}
	sub := px.do(call{method: "POST", path: subs, key: "rw", body: map[string]any{"data": data}, want: st(201)})
	subID := sub.str("id")
	back = clone(t, sub.obj)
	back["created_at"] = back["submitted_at"]
	px.do(call{method: "POST", path: subs, key: "rw", body: back, want: st(201)})
	px.do(call{method: "POST", path: subs, key: "rw", contentType: "text/plain", body: map[string]any{"data": map[string]any{ids["Name"]: "Bo", ids["Email"]: "bo@example.com", ids["Age"]: "7", ids["Agree"]: "false", ids["Extras"]: "x"}}, want: st(201)})
	px.do(call{method: "POST", path: subs, key: "rw", headers: []string{"Idempotency-Key", "openapi-sub"}, body: map[string]any{"data": map[string]any{ids["Name"]: "Cy", ids["Email"]: "cy@example.com"}}, want: st(201)})
	px.do(call{method: "POST", path: subs, key: "rw", body: map[string]any{"data": map[string]any{ids["Name"]: " "}}, want: st(422), kind: semantic})
	px.do(call{method: "POST", path: subs, key: "rw", body: map[string]any{"data": map[string]any{ids["Name"]: "A", ids["Email"]: "not-an-email", "fld_AAAAAAAAAAAAAAAAAAAA": "x"}}, want: st(422), kind: semantic})
	px.do(call{method: "POST", path: subs, key: "rw", body: map[string]any{"data": map[string]any{ids["Name"]: map[string]any{"nested": true}}}, want: st(422), kind: invalid})
	px.do(call{method: "POST", path: subs, key: "rw", body: map[string]any{"values": map[string]any{}}, want: st(422), kind: invalid})
	px.do(call{method: "POST", path: subs, key: "rw", body: []byte("null"), want: st(400), kind: invalid})
	px.do(call{method: "POST", path: subs, key: ro, body: map[string]any{"data": map[string]any{}}, want: st(403)})
	px.do(call{method: "POST", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA/submissions", key: "rw", body: map[string]any{"data": map[string]any{}}, want: st(404)})
	px.do(call{method: "GET", path: subs, key: ro})
	sp := px.do(call{method: "GET", path: subs + "?limit=1&created_after=2020-01-01T00:00:00Z", key: "rw"})
	subCursor, _ := sp.obj["next_cursor"].(string)
	px.do(call{method: "GET", path: subs + "?limit=1&cursor=" + subCursor, key: "rw"})
	px.do(call{method: "GET", path: subs + "?created_before=2100-01-01T00:00:00.000Z", key: "rw"})
	px.do(call{method: "GET", path: subs + "?created_after=yesterday", key: "rw", want: st(400), kind: semantic})
	px.do(call{method: "GET", path: subs + "?cursor=" + cursor, key: "rw", want: st(400), kind: semantic}) // a cursor of the forms list
	px.do(call{method: "GET", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA/submissions", key: "rw", want: st(404)})
	px.do(call{method: "GET", path: subs + "/export", key: ro})
	px.do(call{method: "GET", path: subs + "/export?format=ndjson&created_after=2020-01-01T00:00:00Z", key: ro})
	px.do(call{method: "GET", path: subs + "/export?format=xlsx", key: "rw"})
	px.do(call{method: "GET", path: subs + "/export?format=pdf", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: subs + "/export?created_before=soon", key: "rw", want: st(400), kind: semantic})
	px.do(call{method: "GET", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA/submissions/export", key: "rw", want: st(404)})
	px.do(call{method: "GET", path: "/forms/" + formID + "/stats", key: ro})
	px.do(call{method: "GET", path: "/forms/" + formID + "/stats?days=7", key: "rw"})
	px.do(call{method: "GET", path: "/forms/" + formID + "/stats?days=0", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA/stats", key: "rw", want: st(404)})
	got := px.do(call{method: "GET", path: subs + "/" + subID, key: ro})
	px.do(call{method: "GET", path: subs + "/sub_AAAAAAAAAAAAAAAAAAAA", key: "rw", want: st(404)})
	back = clone(t, got.obj)
	back["data"].(map[string]any)[ids["Notes"]] = "Changed"
	px.do(call{method: "PATCH", path: subs + "/" + subID, key: "rw", body: back})
	px.do(call{method: "PATCH", path: subs + "/" + subID, key: "rw", body: map[string]any{"data": map[string]any{ids["Notes"]: nil}}})
	px.do(call{method: "PATCH", path: subs + "/" + subID, key: "rw", body: map[string]any{"data": map[string]any{ids["Email"]: "nope"}}, want: st(422), kind: semantic})
	px.do(call{method: "PATCH", path: subs + "/" + subID, key: "rw", body: map[string]any{"note": "x"}, want: st(422), kind: invalid})
	px.do(call{method: "PATCH", path: subs + "/" + subID, key: ro, body: map[string]any{"data": map[string]any{}}, want: st(403)})
	px.do(call{method: "PATCH", path: subs + "/sub_AAAAAAAAAAAAAAAAAAAA", key: "rw", body: map[string]any{"data": map[string]any{}}, want: st(404)})

	// Runs and deliveries appear once the submissions are processed.
	var deliveryID, runID string
	var runsRaw, deliveriesRaw string
	if !testkit.Wait(20*time.Second, func() bool {
		runs := px.do(call{method: "GET", path: "/workflows/" + wfID + "/runs", key: "rw"})
		dl := px.do(call{method: "GET", path: "/webhooks/" + hookID + "/deliveries?limit=5", key: "rw"})
		runsRaw, deliveriesRaw = string(runs.raw), string(dl.raw)
		items, _ := dl.obj["data"].([]any)
		runItems, _ := runs.obj["data"].([]any)
		if len(items) > 0 && len(runItems) > 0 {
			deliveryID, _ = items[0].(map[string]any)["id"].(string)
			runID, _ = runItems[0].(map[string]any)["id"].(string)
			return true
		}
		return false
	}) {
		t.Fatalf("no delivery or run after 20s: %s %s", deliveriesRaw, runsRaw)
	}
	px.do(call{method: "GET", path: "/workflows/" + wfID + "/runs?limit=0", key: "rw", want: st(400), kind: invalid})
	var notificationRunsRaw string
	if !testkit.Wait(20*time.Second, func() bool {
		nr := px.do(call{method: "GET", path: "/forms/" + formID + "/notification-runs?limit=2", key: ro})
		notificationRunsRaw = string(nr.raw)
		items, _ := nr.obj["data"].([]any)
		return len(items) > 0
	}) {
		t.Fatalf("no notification run after 20s: %s", notificationRunsRaw)
	}
	px.do(call{method: "GET", path: "/forms/" + formID + "/notification-runs?limit=0", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: "/forms/frm_AAAAAAAAAAAAAAAAAAAA/notification-runs", key: "rw", want: st(404)})
	px.do(call{method: "GET", path: "/workflows/wfl_AAAAAAAAAAAAAAAAAAAA/runs", key: "rw", want: st(404)})
	// A run that did not fail is not retried (409); a failed one is queued again (200).
	runRetry := "/workflows/" + wfID + "/runs/" + runID + "/retry"
	px.do(call{method: "POST", path: runRetry, key: "rw", want: st(200, 409)})
	px.do(call{method: "POST", path: runRetry, key: ro, want: st(403)})
	px.do(call{method: "POST", path: "/workflows/" + wfID + "/runs/run_AAAAAAAAAAAAAAAAAAAA/retry", key: "rw", want: st(404)})
	px.do(call{method: "GET", path: "/webhooks/" + hookID + "/deliveries?limit=500", key: "rw", want: st(400), kind: invalid})
	px.do(call{method: "GET", path: "/webhooks/whk_AAAAAAAAAAAAAAAAAAAA/deliveries", key: "rw", want: st(404)})
	retry := "/webhooks/" + hookID + "/deliveries/" + deliveryID + "/retry"
	px.do(call{method: "POST", path: retry, key: "rw", want: st(200, 409)})
	px.do(call{method: "POST", path: retry, key: ro, want: st(403)})
	px.do(call{method: "POST", path: "/webhooks/" + hookID + "/deliveries/dlv_AAAAAAAAAAAAAAAAAAAA/retry", key: "rw", want: st(404)})

	// Closing: an archived form takes no API submission.
	px.do(call{method: "PATCH", path: "/forms/" + formID, key: "rw", body: map[string]any{"status": "archived"}})
	px.do(call{method: "POST", path: subs, key: "rw", body: map[string]any{"data": data}, want: st(409)})

	// Deleting.
	px.do(call{method: "DELETE", path: subs + "/" + subID, key: ro, want: st(403)})
	px.do(call{method: "DELETE", path: subs + "/" + subID, key: "rw", want: st(204)})
	px.do(call{method: "DELETE", path: subs + "/" + subID, key: "rw", want: st(404)})
	px.do(call{method: "DELETE", path: "/workflows/" + wfID, key: "rw", want: st(204)})
	px.do(call{method: "DELETE", path: "/workflows/" + wfID, key: "rw", want: st(404)})
	px.do(call{method: "DELETE", path: "/webhooks/" + hookID, key: ro, want: st(403)})
	px.do(call{method: "DELETE", path: "/webhooks/" + hookID, key: "rw", want: st(204)})
	px.do(call{method: "DELETE", path: "/webhooks/" + hookID, key: "rw", want: st(404)})
	px.do(call{method: "DELETE", path: "/forms/" + other.str("id"), key: "rw", want: st(204)})
	px.do(call{method: "GET", path: "/forms/" + other.str("id"), key: "rw", want: st(404)})
	px.do(call{method: "DELETE", path: "/forms/" + other.str("id"), key: ro, want: st(403, 404)})

	// Over the rate limit: one key, as fast as Prism lets it.
	for i := 0; ; i++ {
		a := px.do(call{method: "GET", path: "/forms?limit=1", key: flood, want: st(200, 429)})
		if a.status == http.StatusTooManyRequests {
			break
		}
		if i > 100 {
			t.Fatalf("no 429 after %d requests", i)
		}
	}
}

func clone(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
