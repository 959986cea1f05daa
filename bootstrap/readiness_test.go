package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
)

// smallDisk mounts a tmpfs of the given size on a fresh directory (root only).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs and fill it (run the bootstrap tests as root to cover full-disk handling)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes one file until the filesystem is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return p
			}
			t.Fatal(err)
		}
	}
}

// A full disk answers 503 `unavailable` with Retry-After (never 500), /readyz answers 503
// until writes succeed again, and everything recovers once space is freed.
func TestFullDiskIsUnavailableAndNotReady(t *testing.T) {
	dataDir := smallDisk(t, "16m")
	cfg := testConfig(t, "--data-dir", dataDir)
	ctx := context.Background()
	rt, cleanup := testRuntime(t, cfg)
	defer cleanup()
	ws, err := rt.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, err := rt.App.Commands.CreateAPIKey.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID())), accounts.CreateAPIKey{Name: "t", Scope: "read-write"})
	if err != nil {
		t.Fatal(err)
	}
	handler, _, err := newServeHandler(cfg, rt)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	call := func(method, path string, body any) (*http.Response, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+key.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp, out
	}
	resp, created := call("POST", "/v1/forms", map[string]any{"name": "Contact", "status": "published",
		"fields": []any{map[string]any{"label": "Message", "type": "text"}}})
	if resp.StatusCode != 201 {
		t.Fatalf("create form: %d %v", resp.StatusCode, created)
	}
	formID, _ := created["id"].(string)
	fieldID := created["fields"].([]any)[0].(map[string]any)["id"].(string)
	submit := func() (*http.Response, map[string]any) {
		return call("POST", "/v1/forms/"+formID+"/submissions", map[string]any{"data": map[string]any{fieldID: "hello"}})
	}
	if resp, body := submit(); resp.StatusCode != 201 {
		t.Fatalf("submission before the disk is full: %d %v", resp.StatusCode, body)
	}
	ready := func() int {
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := ready(); s != 200 {
		t.Fatalf("/readyz before the disk is full: %d", s)
	}

	filler := fill(t, dataDir)
	// A write that fails outside any HTTP request (here a use case called directly) is enough
	// for readiness to fail.
	// The first writes may still fit where the write-ahead log already had its blocks (it
	// starts over once checkpointed); the first that needs space must fail, and as unavailable.
	for i := 0; ; i++ {
		_, err := rt.App.Commands.CreateWorkspace.Handle(ctx, workspace.CreateWorkspace{Name: "Other"})
		if errors.Is(err, domain.ErrUnavailable) {
			break
		}
		if err != nil || i == 1000 {
			t.Fatalf("write %d on a full disk: %v, want ErrUnavailable", i, err)
		}
	}
	if s := ready(); s != 503 {
		t.Fatalf("/readyz after a failed write: %d, want 503", s)
	}
	resp, body := submit()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("submission on a full disk: %d Retry-After=%q %v, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if e, _ := body["error"].(map[string]any); e["code"] != "unavailable" {
		t.Fatalf("error body %v, want code unavailable", body)
	}
	if s := ready(); s != 503 {
		t.Fatalf("/readyz on a full disk: %d, want 503", s)
	}
	if s := ready(); s != 503 {
		t.Fatalf("/readyz asked again on a full disk: %d, want 503", s)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if s := ready(); s != 200 {
		t.Fatalf("/readyz after space was freed: %d, want 200", s)
	}
	if resp, body := submit(); resp.StatusCode != 201 {
		t.Fatalf("submission after space was freed: %d %v", resp.StatusCode, body)
	}
}
