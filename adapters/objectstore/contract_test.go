package objectstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/objectstore/miniotest"
	"github.com/formward/formward/adapters/objectstore/storetest"
)

// TestLocalContract runs the contract suite against the local adapter on a temp dir.
func TestLocalContract(t *testing.T) {
	dir := t.TempDir()
	store, err := objectstore.NewLocal(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, store, storetest.Contract{})

	t.Run("permissions", func(t *testing.T) {
		key := "workspaces/w/forms/f/perm/a.txt"
		if err := store.Put(context.Background(), key, strings.NewReader("x"), 1, "text/plain"); err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]os.FileMode{
			filepath.Join(dir, "files", "workspaces"):            0o700,
			filepath.Join(dir, "files", filepath.FromSlash(key)): 0o600,
		} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("%s: mode %v, want %v", p, got, want)
			}
		}
	})
}

// TestS3Contract runs the same suite against a real MinIO server started from its binary.
func TestS3Contract(t *testing.T) {
	endpoint, _ := miniotest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := miniotest.Config(endpoint, "formward-test")
	store, err := objectstore.NewS3(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A second start finds the bucket already there.
	if _, err := objectstore.NewS3(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, store, storetest.Contract{})
}
