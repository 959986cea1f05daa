package e2e_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// standardWebhooksSecret is the string a Standard Webhooks library needs for a secret as it was
// registered, the rule of docs/webhooks.md: a secret "whsec_" + standard base64 is given as is
// (its key is the decoded bytes); any other secret is given as "whsec_" + base64 of its UTF-8
// bytes (its key is the secret itself).
func standardWebhooksSecret(secret string) string {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil && len(key) > 0 {
			return secret
		}
	}
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(secret))
}

// verifyPlainHMAC is docs/webhooks.md's Go snippet without a library: X-Service-Signature keyed
// with the registered secret, webhook-signature keyed with the bytes the library string encodes.
func verifyPlainHMAC(r received, registered string) error {
	m := hmac.New(sha256.New, []byte(registered))
	m.Write(r.body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(r.header.Get("X-Service-Signature")), []byte(want)) {
		return fmt.Errorf("X-Service-Signature %q, want %q", r.header.Get("X-Service-Signature"), want)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(standardWebhooksSecret(registered), "whsec_"))
	if err != nil {
		return err
	}
	id, ts := r.header.Get("webhook-id"), r.header.Get("webhook-timestamp")
	sm := hmac.New(sha256.New, key)
	sm.Write([]byte(id + "." + ts + "."))
	sm.Write(r.body)
	wantStd := "v1," + base64.StdEncoding.EncodeToString(sm.Sum(nil))
	for _, sig := range strings.Fields(r.header.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(wantStd)) {
			return nil
		}
	}
	return fmt.Errorf("webhook-signature %q lacks %q", r.header.Get("webhook-signature"), wantStd)
}

// TestWebhookSignaturesVerifyWithTheOfficialLibrary registers three endpoints whose secrets have
// the three shapes a secret can take (Standard Webhooks "whsec_<base64>", any other text, and
// "whsec_" followed by something that is not base64), lets the embedded binary deliver
// form.published and submission.created to them over HTTPS, and verifies every delivery:
// in Go with plain HMAC, and in Node.js with the official npm `standardwebhooks` library
// (test/webhooks/verify.mjs, pinned in its package-lock.json), given the string that
// docs/webhooks.md says to give it.
//
// The Node.js half is skipped when node is missing, unless FORMWARD_TEST_REQUIRE_BROWSER=1.
func TestWebhookSignaturesVerifyWithTheOfficialLibrary(t *testing.T) {
	t.Parallel()
	in, rc := newPipelineInstance(t)
	key := in.cli("keys", "create", "--name", "signatures", "--scope", "admin")
	in.startServe()

	formID, fieldID := createForm(t, in, key, "Signed deliveries")
	secrets := map[string]string{
		"/sw/standard": newSecret(t),
		"/sw/text":     "correct horse battery staple, ünïcödé ✓",
		"/sw/prefixed": "whsec_this is not base64!",
	}
	for path, secret := range secrets {
		registerWebhook(t, in, key, rc.url(path), formID, secret, "submission.created", "form.published")
	}
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	submit(t, in, key, formID, fieldID, "first")
	submit(t, in, key, formID, fieldID, "<second> & \"quoted\" ✓")
	const want = 3 * 3 // three endpoints, three events each
	eventually(t, 15*time.Second, "9 deliveries", func() bool { return len(rc.requests("/sw/")) >= want })

	type delivery struct {
		Secret        string            `json:"secret"`
		LibrarySecret string            `json:"library_secret"`
		Headers       map[string]string `json:"headers"`
		BodyBase64    string            `json:"body_base64"`
	}
	var all []delivery
	for _, r := range rc.requests("/sw/") {
		secret := secrets[r.path]
		checkDeliveryHeaders(t, r, r.header.Get("X-Service-Event"), 1)
		if err := verifyPlainHMAC(r, secret); err != nil {
			t.Fatalf("%s: plain HMAC: %v", r.path, err)
		}
		// The wrong secret does not verify: the check can fail.
		if err := verifyPlainHMAC(r, secret+"x"); err == nil {
			t.Fatalf("%s: another secret verified too", r.path)
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("%s: body: %v", r.path, err)
		}
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"data", "event", "form_id", "timestamp"}) {
			t.Fatalf("%s: body has %v, want data, event, form_id, timestamp: %s", r.path, keys, r.body)
		}
		h := map[string]string{}
		for name := range r.header {
			h[strings.ToLower(name)] = r.header.Get(name)
		}
		all = append(all, delivery{Secret: secret, LibrarySecret: standardWebhooksSecret(secret), Headers: h,
			BodyBase64: base64.StdEncoding.EncodeToString(r.body)})
	}
	t.Logf("%d deliveries verified with plain HMAC (both signatures)", len(all))

	node := webhookNode(t)
	file := filepath.Join(t.TempDir(), "deliveries.json")
	raw, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, filepath.Join("webhooks", "verify.mjs"), file).CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		t.Log("node: " + line)
	}
	if err != nil {
		t.Fatalf("node test/webhooks/verify.mjs: %v", err)
	}
	if n := strings.Count(string(out), "ok: "); n != len(all) {
		t.Fatalf("node verified %d deliveries, want %d", n, len(all))
	}
}

// webhookNode returns node with test/webhooks' packages installed (npm ci, once), or skips
// (fails under FORMWARD_TEST_REQUIRE_BROWSER=1) saying what is missing.
func webhookNode(t *testing.T) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("FORMWARD_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatalf("Node.js required (FORMWARD_TEST_REQUIRE_BROWSER=1) but %s", msg)
		}
		t.Skipf("skipping the standardwebhooks check: %s (set FORMWARD_TEST_REQUIRE_BROWSER=1 to make this a failure)", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH (apt-get install nodejs npm)")
	}
	webhookNpmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join("webhooks", "node_modules", "standardwebhooks", "package.json")); err == nil {
			return
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			webhookNpmProblem = "standardwebhooks is not installed in test/webhooks and npm is not on PATH"
			return
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = "webhooks"
		if out, err := cmd.CombinedOutput(); err != nil {
			webhookNpmProblem = fmt.Sprintf("npm ci in test/webhooks failed: %v\n%s", err, out)
		}
	})
	if webhookNpmProblem != "" {
		missing("%s", webhookNpmProblem)
	}
	return node
}

var (
	webhookNpmOnce    sync.Once
	webhookNpmProblem string
)
