package e2e_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// browserField is one field of the browser test's form: how the API creates it and the value
// the browser enters (and the API must then return).
type browserField struct {
	ID       string   `json:"id"`
	Label    string   `json:"label"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Options  []string `json:"options,omitempty"`
	Value    any      `json:"value"`
	// Help, when set, is the field's help text: the page shows it under the label and names it
	// in the control's (a group's) aria-describedby.
	Help string `json:"help,omitempty"`
}

// TestBrowserPublicForm drives the public form page in headless Chromium (Debian's
// /usr/bin/chromium through playwright-core, test/browser/form.spec.mjs): every field type, an
// error next to an empty required field with the other values kept, keyboard-only use, a file
// upload and the page's own proof-of-work, and axe-core on the form, its error states and the
// thank-you page (zero violations); then checks through the API that the submission,
// its values and its downloadable file arrived. A screenshot goes to test/artifacts/form.png.
//
// Skipped when Chromium or Node.js is missing, unless FORMWARD_TEST_REQUIRE_BROWSER=1 (CI).
func TestBrowserPublicForm(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

	in := newInstance(t, "", "")
	adminKey := in.cli("keys", "create", "--name", "browser", "--scope", "admin")
	in.startServe()

	fields := []browserField{
		{Label: "Full name", Type: "text", Required: true, Value: "Ada Lovelace", Help: "As on your ID.\nWe print it on your badge."},
		{Label: "Email", Type: "email", Required: true, Value: "ada@example.org"},
		{Label: "Age", Type: "number", Value: "36"},
		{Label: "Ticket", Type: "dropdown", Required: true, Options: []string{"Standard", "Student", "VIP"}, Value: "Student"},
		{Label: "Sessions", Type: "checkbox", Options: []string{"Keynote", "Workshops", "Dinner"}, Value: []string{"Keynote", "Dinner"}},
		{Label: "I agree to the code of conduct", Type: "checkbox", Required: true, Value: true, Help: "It is one page long."},
		{Label: "Diet", Type: "radio", Required: true, Options: []string{"None", "Vegetarian", "Vegan"}, Value: "Vegan", Help: "The caterer cooks for each diet <separately>."},
		{Label: "Comments", Type: "textarea", Value: "Looking forward to it.\nSecond line <b>not bold</b> & more."},
		{Label: "CV", Type: "file"},
		{Label: "Arrival date", Type: "date", Value: "2026-03-14"},
	}
	specs := make([]map[string]any, len(fields))
	for i, f := range fields {
		specs[i] = map[string]any{"label": f.Label, "type": f.Type, "required": f.Required}
		if len(f.Options) > 0 {
			specs[i]["options"] = f.Options
		}
		if f.Help != "" {
			specs[i]["help"] = f.Help
		}
	}
	specs[0]["placeholder"] = "Your name"
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name":        "Browser test: event registration",
		"description": "Every field type, filled in by a real browser.",
		"fields":      specs,
		"settings": map[string]any{
			"spam": map[string]any{"honeypot": true, "min_fill_seconds": 1, "proof_of_work": true},
		},
	})
	created, _ := r.obj["fields"].([]any)
	if len(created) != len(fields) {
		t.Fatalf("created form has %d fields, want %d: %s", len(created), len(fields), r.raw)
	}
	for i := range fields {
		f, _ := created[i].(map[string]any)
		fields[i].ID, _ = f["id"].(string)
	}

	// The file the browser uploads: small, with random content so the download proves it.
	upload := filepath.Join(t.TempDir(), "cv.txt")
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	uploadContent := []byte("Curriculum vitae of Ada Lovelace, " + hex.EncodeToString(nonce) + "\n")
	if err := os.WriteFile(upload, uploadContent, 0o600); err != nil {
		t.Fatal(err)
	}

	artifacts := artifactsDir(t)
	spec, err := json.Marshal(map[string]any{"fields": fields, "upload": upload, "minFillSeconds": 1})
	if err != nil {
		t.Fatal(err)
	}
	pageURL := in.baseURL + "/f/" + formID
	runNode(t, node, []string{"FORMWARD_BROWSER_FORM=" + string(spec), "FORMWARD_CHROMIUM=" + chromium},
		"form.spec.mjs", pageURL, artifacts)
	t.Logf("screenshot artifact: %s", filepath.Join(artifacts, "form.png"))

	// The owner sees exactly one submission: from the form, with every value and the file.
	r, list := submissionsOf(t, in, adminKey, formID)
	if len(list) != 1 {
		t.Fatalf("want exactly 1 submission (the error attempt must not be stored), got %d: %s", len(list), r.raw)
	}
	sub, _ := list[0].(map[string]any)
	meta, _ := sub["metadata"].(map[string]any)
	if meta["source"] != "form" {
		t.Fatalf("metadata.source = %v, want form: %s", meta["source"], r.raw)
	}
	if ua, _ := meta["user_agent"].(string); ua == "" {
		t.Errorf("metadata.user_agent is empty: %s", r.raw)
	}
	data, _ := sub["data"].(map[string]any)
	for _, f := range fields {
		got, present := data[f.ID]
		if f.Type == "file" {
			if !present {
				t.Errorf("%s: no file reference in the submission: %s", f.Label, r.raw)
			}
			continue
		}
		if !sameValue(got, f.Value) {
			t.Errorf("%s (%s) = %#v, want %#v", f.Label, f.Type, got, f.Value)
		}
	}
	if t.Failed() {
		t.Fatalf("submission: %s", r.raw)
	}

	// The file is downloadable through its signed URL, as the API presents it.
	var fileField browserField
	for _, f := range fields {
		if f.Type == "file" {
			fileField = f
		}
	}
	if len(fileURLs(data[fileField.ID])) == 0 {
		t.Fatalf("%s: no file reference (/files/...) in the submission: %s", fileField.Label, r.raw)
	}
	// The signed URL (…?expires=…&sig=…) may be presented in the value or beside the data.
	var urls []string
	for _, u := range fileURLs(sub) {
		if strings.Contains(u, "sig=") {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		t.Fatalf("the API presents no signed URL (…&sig=…) for the uploaded file: %s", r.raw)
	}
	var downloaded bool
	for _, u := range urls {
		if !strings.HasPrefix(u, "http") {
			u = in.baseURL + u
		}
		resp, err := in.client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && bytes.Equal(body, uploadContent) {
			downloaded = true
			t.Logf("file downloaded through its signed URL %s", u)
			// Without its signature, or with a tampered one, the file is refused.
			unsigned, _, _ := strings.Cut(u, "?")
			for _, bad := range []string{tamper(u), unsigned} {
				if resp, err := in.client.Get(bad); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						t.Errorf("GET %s: 200, want a refusal", bad)
					}
				}
			}
			break
		}
		t.Logf("GET %s: %d (%d bytes)", u, resp.StatusCode, len(body))
	}
	if !downloaded {
		t.Fatalf("the uploaded file could not be downloaded from %v", urls)
	}
}

// TestBrowserEmbedRecipes runs the two recipes of docs/embedding.md, copied from the doc as it
// stands, in Chromium on an owner's page served from another origin: the <iframe> shows the
// form (settings.embed.frame_ancestors), and the <script> shows a server error next to its
// field, then posts JSON with its own proof-of-work solution (settings.embed.cors_origins).
func TestBrowserEmbedRecipes(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

	doc, err := os.ReadFile(filepath.Join("..", "docs", "embedding.md"))
	if err != nil {
		t.Fatal(err)
	}
	frameRecipe := htmlBlock(t, string(doc), "<iframe")
	scriptRecipe := htmlBlock(t, string(doc), `<script type="module">`)

	// The owner's site: another origin than Formward's.
	// The pages are filled in below, once the form exists; the server's goroutines read them.
	var (
		pagesMu               sync.Mutex
		frameHTML, scriptHTML string
	)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pagesMu.Lock()
		frameHTML, scriptHTML := frameHTML, scriptHTML
		pagesMu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		case "/frame":
			fmt.Fprintf(w, "<!doctype html><html lang=en><title>Owner</title><h1>Our event</h1>\n%s", frameHTML)
		case "/script":
			fmt.Fprintf(w, "<!doctype html><html lang=en><title>Owner</title><h1>Sign up</h1>\n%s", scriptHTML)
		default:
			http.NotFound(w, r)
		}
	}))
	defer owner.Close()

	in := newInstance(t, "", "")
	adminKey := in.cli("keys", "create", "--name", "embed", "--scope", "admin")
	in.startServe()
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name": "Embedded sign-up",
		"fields": []map[string]any{
			{"label": "Email", "type": "email", "required": true},
			{"label": "Age", "type": "number"},
		},
		"settings": map[string]any{
			"spam":  map[string]any{"honeypot": true, "min_fill_seconds": 1, "proof_of_work": true},
			"embed": map[string]any{"frame_ancestors": []string{owner.URL}, "cors_origins": []string{owner.URL}},
		},
	})
	fields, _ := r.obj["fields"].([]any)
	emailID, _ := fields[0].(map[string]any)["id"].(string)
	ageID, _ := fields[1].(map[string]any)["id"].(string)

	const docForm = "https://forms.example.com/f/frm_06H0A8…"
	pageURL := in.baseURL + "/f/" + formID
	pagesMu.Lock()
	frameHTML = strings.ReplaceAll(frameRecipe, docForm, pageURL)
	scriptHTML = strings.NewReplacer(docForm, pageURL, "fld_EMAIL_FIELD_ID", emailID, "fld_AGE_FIELD_ID", ageID).Replace(scriptRecipe)
	pagesMu.Unlock()
	if frameHTML == frameRecipe || !strings.Contains(scriptHTML, emailID) || !strings.Contains(scriptHTML, pageURL) {
		t.Fatalf("docs/embedding.md no longer has the placeholders this test fills in (%s, fld_EMAIL_FIELD_ID, fld_AGE_FIELD_ID)", docForm)
	}

	artifacts := artifactsDir(t)
	runNode(t, node, []string{"FORMWARD_CHROMIUM=" + chromium, "FORMWARD_MIN_FILL_SECONDS=1"},
		"embed.spec.mjs", owner.URL+"/frame", owner.URL+"/script", artifacts)

	r, list := submissionsOf(t, in, adminKey, formID)
	if len(list) != 1 {
		t.Fatalf("want 1 submission from the script recipe, got %d: %s", len(list), r.raw)
	}
	sub, _ := list[0].(map[string]any)
	data, _ := sub["data"].(map[string]any)
	meta, _ := sub["metadata"].(map[string]any)
	if data[emailID] != "embedded@example.org" || !sameValue(data[ageID], "41") || meta["source"] != "form" {
		t.Fatalf("the script recipe's submission: %s", r.raw)
	}
	if ref, _ := meta["referrer"].(string); !strings.HasPrefix(ref, owner.URL) {
		t.Errorf("metadata.referrer = %q, want the owner's page", ref)
	}
}

// TestBrowserFormPages drives a three-page form with display rules and a hidden field in
// Chromium, with JavaScript on and off (test/browser/pages.spec.mjs): the rules skip a page,
// Next checks each page, Back keeps the answers, the hidden field is filled from the page URL,
// axe-core finds nothing on any state. Then the two submissions are read through the API: the
// campaign from the URL arrived, the skipped answers did not.
func TestBrowserFormPages(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

	in := newInstance(t, "", "")
	adminKey := in.cli("keys", "create", "--name", "pages", "--scope", "admin")
	in.startServe()
	employee := map[string]any{"match": "all", "conditions": []map[string]any{{"field_id": "role", "operator": "equals", "value": "Employee"}}}
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name": "Browser test: pages and logic",
		"fields": []map[string]any{
			{"label": "Role", "type": "radio", "required": true, "options": []string{"Student", "Employee"}},
			{"label": "Reason", "type": "text", "show_if": employee},
			{"label": "Campaign", "type": "text", "hidden": true},
			{"label": "Company", "type": "text", "required": true, "page": 2, "show_if": employee},
			{"label": "School", "type": "text", "required": true, "page": 3},
		},
		"settings": map[string]any{"spam": map[string]any{"honeypot": true, "min_fill_seconds": 1, "proof_of_work": false}},
	})
	ids := fieldIDsByKey(r)
	if len(ids) != 5 || ids["campaign"] == "" || ids["company"] == "" {
		t.Fatalf("field keys: %v (%s)", ids, r.raw)
	}

	artifacts := artifactsDir(t)
	runNode(t, node, []string{"FORMWARD_CHROMIUM=" + chromium, "FORMWARD_MIN_FILL_SECONDS=1"},
		"pages.spec.mjs", in.baseURL+"/f/"+formID, artifacts)

	r, list := submissionsOf(t, in, adminKey, formID)
	if len(list) != 2 {
		t.Fatalf("want 2 submissions (JavaScript on and off), got %d: %s", len(list), r.raw)
	}
	campaigns := map[string]bool{}
	for _, item := range list {
		sub, _ := item.(map[string]any)
		data, _ := sub["data"].(map[string]any)
		if data[ids["role"]] != "Student" || data[ids["school"]] != "MIT" {
			t.Errorf("answers: %v", data)
		}
		for _, skipped := range []string{"reason", "company"} {
			if _, ok := data[ids[skipped]]; ok {
				t.Errorf("the skipped %s was stored: %v", skipped, data)
			}
		}
		c, _ := data[ids["campaign"]].(string)
		campaigns[c] = true
	}
	if !campaigns["spring-js"] || !campaigns["spring-nojs"] {
		t.Fatalf("the hidden campaign field did not arrive from the page URL: %v (%s)", campaigns, r.raw)
	}
}

// publishedForm creates a form through the API and publishes it; created is the creation's
// answer (the form with its fields).
func publishedForm(t *testing.T, in *instance, key string, body map[string]any) (formID string, created result) {
	t.Helper()
	created = in.do("POST", "/v1/forms", key, body)
	created.expect(t, http.StatusCreated)
	formID = created.str(t, "id")
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	return formID, created
}

// submissionsOf reads the form's submissions through the API: the answer and its data list.
func submissionsOf(t *testing.T, in *instance, key, formID string) (result, []any) {
	t.Helper()
	r := in.do("GET", "/v1/forms/"+formID+"/submissions", key, nil)
	r.expect(t, http.StatusOK)
	list, _ := r.obj["data"].([]any)
	return r, list
}

// fieldIDsByKey maps the keys of a created form's fields to their IDs.
func fieldIDsByKey(created result) map[string]string {
	ids := map[string]string{}
	fields, _ := created.obj["fields"].([]any)
	for _, c := range fields {
		f, _ := c.(map[string]any)
		key, _ := f["key"].(string)
		ids[key], _ = f["id"].(string)
	}
	return ids
}

// htmlBlock returns the first ```html block of the doc that contains marker.
func htmlBlock(t *testing.T, doc, marker string) string {
	t.Helper()
	for _, part := range strings.Split(doc, "```html\n")[1:] {
		block, _, _ := strings.Cut(part, "\n```")
		if strings.Contains(block, marker) {
			return block
		}
	}
	t.Fatalf("docs/embedding.md has no html block with %q", marker)
	return ""
}

// runNode runs one script of test/browser like runNodeWithin, within three minutes.
func runNode(t *testing.T, node string, env []string, script string, args ...string) {
	t.Helper()
	runNodeWithin(t, 3*time.Minute, node, env, script, args...)
}

// browserPrerequisites returns the node and chromium paths, or skips (fails under
// FORMWARD_TEST_REQUIRE_BROWSER=1) saying what is missing. It runs `npm ci` in test/browser
// when playwright-core or axe-core is not installed yet.
func browserPrerequisites(t *testing.T) (node, chromium string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("FORMWARD_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatalf("browser test required (FORMWARD_TEST_REQUIRE_BROWSER=1) but %s", msg)
		}
		t.Skipf("skipping the browser test: %s (set FORMWARD_TEST_REQUIRE_BROWSER=1 to make this a failure; .ci/run installs everything)", msg)
	}
	chromium = os.Getenv("FORMWARD_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing("Chromium is not at %s (apt-get install chromium)", chromium)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH (apt-get install nodejs npm)")
	}
	npmOnce.Do(func() {
		installed := true
		for _, pkg := range []string{"playwright-core", "axe-core"} {
			if _, err := os.Stat(filepath.Join("browser", "node_modules", pkg, "package.json")); err != nil {
				installed = false
			}
		}
		if installed {
			return
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			npmProblem = "playwright-core is not installed in test/browser and npm is not on PATH"
			return
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = "browser"
		if out, err := cmd.CombinedOutput(); err != nil {
			npmProblem = fmt.Sprintf("npm ci in test/browser failed: %v\n%s", err, out)
		}
	})
	if npmProblem != "" {
		missing("%s", npmProblem)
	}
	return node, chromium
}

// npm ci runs at most once per test binary: the browser tests run in parallel.
var (
	npmOnce    sync.Once
	npmProblem string
)

// sameValue compares an API value with the one the browser entered: strings as strings,
// booleans as the strings "true"/"false" or JSON booleans, lists as sets of strings.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case []string:
		var g []string
		switch x := got.(type) {
		case []any:
			for _, v := range x {
				g = append(g, fmt.Sprint(v))
			}
		case []string:
			g = append(g, x...)
		default:
			return false
		}
		a, b := append([]string(nil), g...), append([]string(nil), w...)
		sort.Strings(a)
		sort.Strings(b)
		return reflect.DeepEqual(a, b)
	case bool:
		return fmt.Sprint(got) == fmt.Sprint(w)
	case string:
		if s, ok := got.(string); ok {
			return s == w || strings.ReplaceAll(s, "\r\n", "\n") == w
		}
		if f, ok := got.(float64); ok {
			return fmt.Sprint(f) == w
		}
	}
	return false
}

// fileURLs collects every string under v that looks like a served file URL (/files/...).
func fileURLs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "/files/") {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

// tamper flips the last character of a URL (its signature or expiry) to test the refusal.
func tamper(u string) string {
	if u == "" {
		return u
	}
	last := u[len(u)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return u[:len(u)-1] + string(repl)
}
