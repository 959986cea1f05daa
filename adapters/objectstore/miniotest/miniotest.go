// Package miniotest starts a real MinIO server for tests: the binary `make tools` builds (on
// PATH or in $(go env GOPATH)/bin), on a temporary directory and free loopback ports.
package miniotest

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/objectstore"
)

// The credentials of every server Start runs.
const (
	AccessKey = "formward"
	SecretKey = "formward-secret"
	Region    = "us-east-1"
)

// Binary returns the path of the minio binary, or "" when there is none.
func Binary() string {
	if p, err := exec.LookPath("minio"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "minio")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// Start runs `minio server` until the test ends and returns its address and the directory
// holding its data. Without the binary the test is skipped, or fails under
// FORMWARD_TEST_REQUIRE_MINIO=1.
func Start(t testing.TB) (addr, dataDir string) {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if os.Getenv("FORMWARD_TEST_REQUIRE_MINIO") == "1" {
			t.Fatal("minio binary not found on PATH or in $(go env GOPATH)/bin; run `make tools`")
		}
		t.Skip("minio binary not found; run `make tools` (FORMWARD_TEST_REQUIRE_MINIO=1 makes this a failure)")
	}
	addr, console := freePort(t), freePort(t)
	dataDir = t.TempDir()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "server", dataDir, "--address", addr, "--console-address", console, "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "HOME="+t.TempDir())
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/minio/health/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr, dataDir
			}
		}
		select {
		case <-done:
			t.Fatalf("minio exited before it was ready:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("minio not ready after 60s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Config is the S3 configuration of bucket on the server at addr.
func Config(addr, bucket string) objectstore.S3Config {
	return objectstore.S3Config{Endpoint: addr, Bucket: bucket, AccessKey: AccessKey, SecretKey: SecretKey, Region: Region}
}

// Bucket starts a server and returns the S3 store on a new bucket of it.
func Bucket(t testing.TB, bucket string) *objectstore.S3 {
	t.Helper()
	addr, _ := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s3, err := objectstore.NewS3(ctx, Config(addr, bucket))
	if err != nil {
		t.Fatal(err)
	}
	return s3
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}
