package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/test/testkit"
)

const (
	filesContentMarker = "Narwhal-Content-Marker-5521"
	filesNameMarker    = "Jane_Roe_passport_Wombat3319"
)

// plaintextFiles writes files the way versions before encryption did (plaintext, the name in
// the key) into the data dir's file store, for the default workspace; it returns them by key.
func plaintextFiles(t *testing.T, cfg Config) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	rt, cleanup := testRuntime(t, cfg)
	ws, err := rt.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
	cleanup()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := objectstore.NewLocal(objectstore.LocalDir(cfg.DataDir))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "workspaces/" + ws.ID() + "/forms/frm_files/"
	files := map[string][]byte{
		prefix + "submissions/sub_1/obj_1/" + filesNameMarker + ".txt":          []byte("id card " + filesContentMarker),
		prefix + "0123456789abcdef0123456789abcdef/" + filesNameMarker + ".pdf": bytes.Repeat([]byte(filesContentMarker), 10000),
	}
	for key, body := range files {
		if err := raw.Put(ctx, key, bytes.NewReader(body), int64(len(body)), "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	if found := markersUnder(t, cfg.DataDir); len(found) == 0 {
		t.Fatal("the plaintext files are not visible in the data dir: the test proves nothing")
	}
	return files
}

// markersUnder lists the paths under dir whose name or bytes hold a marker.
func markersUnder(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	// A running serve creates and removes files as the walk goes (a backup's temporary
	// journal, say): one gone before it is read holds nothing.
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if strings.Contains(p, filesNameMarker) {
			found = append(found, p)
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(filesContentMarker)) || bytes.Contains(b, []byte(filesNameMarker)) {
				found = append(found, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// testRuntime builds the runtime of cfg, quiet; cleanup closes it.
func testRuntime(t *testing.T, cfg Config) (rt *Runtime, cleanup func()) {
	t.Helper()
	rt, cleanup, err := newRuntime(context.Background(), cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return rt, cleanup
}

// readBack checks every file reads back identically, with its name, through the runtime's store.
func readBack(t *testing.T, cfg Config, files map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	rt, cleanup := testRuntime(t, cfg)
	defer cleanup()
	for key, want := range files {
		rc, info, err := rt.Files.Get(ctx, key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		got, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil || !bytes.Equal(got, want) || info.Name != filepath.Base(key) {
			t.Fatalf("%s: %d bytes, %+v, %v", key, len(got), info, err)
		}
	}
}

// `formward files encrypt` encrypts files stored in plaintext, leaves none of their bytes or
// names in the data dir, keeps them readable, and does nothing the second time.
func TestFilesEncryptCommand(t *testing.T) {
	cfg := testConfig(t)
	files := plaintextFiles(t, cfg)
	args := []string{"files", "encrypt", "--data-dir", cfg.DataDir, "--master-key", cfg.MasterKey, "--log-level", "error"}

	code, stdout, stderr := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var m objectstore.Migration
	if err := json.Unmarshal([]byte(stdout), &m); err != nil || m.Encrypted != len(files) {
		t.Fatalf("output %q (%v), want %d files encrypted", stdout, err, len(files))
	}
	if found := markersUnder(t, cfg.DataDir); len(found) > 0 {
		t.Fatalf("plaintext left in the data dir:\n%s", strings.Join(found, "\n"))
	}
	readBack(t, cfg, files)

	code, stdout, stderr = run(t, args...)
	if code != 0 || json.Unmarshal([]byte(stdout), &m) != nil || m != (objectstore.Migration{}) {
		t.Fatalf("second run: exit %d, %q, %s", code, stdout, stderr)
	}
}

// serve encrypts the plaintext files by itself when it starts.
func TestFilesEncryptedWhenServeStarts(t *testing.T) {
	cfg := testConfig(t, "--metrics-addr", "")
	files := plaintextFiles(t, cfg)

	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	c := &cli{cfg: cfg, stdout: &out, stderr: &out}
	done := make(chan error, 1)
	go func() { done <- c.serve(ctx) }()
	stopped := false
	t.Cleanup(func() { // a failure below must not leave serve writing into the temp dir
		if !stopped {
			cancel()
			<-done
		}
	})
	if !testkit.Wait(30*time.Second, func() bool {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("serve stopped: %v\n%s", err, out.String())
		default:
		}
		return len(markersUnder(t, cfg.DataDir)) == 0
	}) {
		cancel()
		t.Fatalf("plaintext still in the data dir 30s after serve started:\n%s", strings.Join(markersUnder(t, cfg.DataDir), "\n"))
	}
	cancel()
	err := <-done
	stopped = true
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	readBack(t, cfg, files)
}
