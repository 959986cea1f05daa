// Package storetest is the contract every ports.ObjectStore must pass: Formward's local and
// S3 stores, the encrypting wrapper over them, and an extension's store (adapters/extend) run it
// in their tests.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// Contract describes a store for Run.
type Contract struct {
	// Encrypted is true for a store wrapped in objectstore.NewEncrypted: Usage then counts the
	// stored (encrypted) size, a little more than the content, never less.
	Encrypted bool
}

// Run checks what every ObjectStore must do, on an empty store: a round trip keeps the bytes and
// the content type; a missing object is domain.ErrNotFound; Delete is idempotent; Usage and
// DeletePrefix respect folder boundaries; a 5 MiB object; a body shorter than its declared
// size is refused and leaves nothing behind; unsafe keys and prefixes are refused with
// objectstore.ErrInvalidKey (objectstore.ValidateKey and ValidatePrefix say which); the keys
// objectstore.NewKey makes are accepted.
func Run(t *testing.T, store ports.ObjectStore, c Contract) {
	t.Helper()
	encrypted := c.Encrypted
	ctx := context.Background()
	usage := func(t *testing.T, prefix string, content int64, files int) {
		t.Helper()
		n, err := store.Usage(ctx, prefix)
		if err != nil {
			t.Fatalf("usage %s: %v", prefix, err)
		}
		if !encrypted && n != content || encrypted && (n < content || n > content+encryptionOverhead(content, files)) {
			t.Fatalf("usage %s = %d for %d bytes in %d files", prefix, n, content, files)
		}
	}
	put := func(t *testing.T, key, body, ct string) {
		t.Helper()
		if err := store.Put(ctx, key, strings.NewReader(body), int64(len(body)), ct); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	read := func(t *testing.T, key string) ([]byte, ports.ObjectInfo) {
		t.Helper()
		rc, info, err := store.Get(ctx, key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		defer func() { _ = rc.Close() }()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b, info
	}

	t.Run("round trip keeps bytes and content type", func(t *testing.T) {
		key := "workspaces/wsp_1/forms/frm_1/0123abcd/report.pdf"
		before := time.Now().Add(-time.Minute)
		put(t, key, "%PDF-1.4 hello", "application/pdf")
		b, info := read(t, key)
		if string(b) != "%PDF-1.4 hello" || info.Size != 14 || info.ContentType != "application/pdf" {
			t.Fatalf("got %q %+v", b, info)
		}
		if info.ModTime.Before(before) {
			t.Fatalf("mod time %v", info.ModTime)
		}
		put(t, key, "replaced", "text/plain")
		b, info = read(t, key)
		if string(b) != "replaced" || info.ContentType != "text/plain" {
			t.Fatalf("overwrite: got %q %+v", b, info)
		}
	})

	t.Run("missing object is ErrNotFound", func(t *testing.T) {
		_, _, err := store.Get(ctx, "workspaces/wsp_1/forms/frm_1/nothing/here.txt")
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("delete is idempotent", func(t *testing.T) {
		key := "workspaces/wsp_1/forms/frm_1/del/x.txt"
		put(t, key, "x", "text/plain")
		for i := 0; i < 2; i++ {
			if err := store.Delete(ctx, key); err != nil {
				t.Fatalf("delete %d: %v", i, err)
			}
		}
		if _, _, err := store.Get(ctx, key); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
	})

	t.Run("usage and delete prefix", func(t *testing.T) {
		a := "workspaces/wsp_2/forms/frm_a/"
		b := "workspaces/wsp_2/forms/frm_ab/" // shares a string prefix with frm_a but not the folder
		put(t, a+"k1/one.txt", "12345", "text/plain")
		put(t, a+"k2/two.bin", "1234567890", "application/octet-stream")
		put(t, b+"k3/three.txt", "123", "text/plain")
		usage(t, a, 15, 2)
		usage(t, "workspaces/wsp_2/", 18, 3)
		usage(t, "workspaces/nobody/", 0, 0)
		if err := store.DeletePrefix(ctx, a+"k1/"); err != nil {
			t.Fatal(err)
		}
		usage(t, a, 10, 1) // after deleting one submission's files
		if err := store.DeletePrefix(ctx, a); err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.Get(ctx, a+"k2/two.bin"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("after delete prefix: %v", err)
		}
		usage(t, a, 0, 0)
		if got, _ := read(t, b+"k3/three.txt"); string(got) != "123" {
			t.Fatalf("sibling form lost its file: %q", got)
		}
		if err := store.DeletePrefix(ctx, "workspaces/nobody/"); err != nil {
			t.Fatalf("delete of an empty prefix: %v", err)
		}
	})

	t.Run("large object", func(t *testing.T) {
		key := "workspaces/wsp_3/forms/frm_1/big/blob.bin"
		data := make([]byte, 5<<20)
		if _, err := rand.Read(data); err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, key, bytes.NewReader(data), int64(len(data)), "application/octet-stream"); err != nil {
			t.Fatal(err)
		}
		got, info := read(t, key)
		if !bytes.Equal(got, data) || info.Size != int64(len(data)) {
			t.Fatalf("5 MiB object came back with %d bytes", len(got))
		}
		usage(t, "workspaces/wsp_3/", int64(len(data)), 1)
	})

	t.Run("short body is refused", func(t *testing.T) {
		key := "workspaces/wsp_4/forms/frm_1/short/a.txt"
		if err := store.Put(ctx, key, strings.NewReader("abc"), 10, "text/plain"); err == nil {
			t.Fatal("put of 3 bytes declared as 10 succeeded")
		}
		if _, _, err := store.Get(ctx, key); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a failed put left an object: %v", err)
		}
	})

	t.Run("key validation", func(t *testing.T) {
		for _, key := range []string{"", "/abs/path", "a/../b", "../escape", "a//b", "a/./b", "dir/", "sp ace", "uni/ç", "a\\b", "q?x", "p%2e"} {
			if err := store.Put(ctx, key, strings.NewReader("x"), 1, "text/plain"); !errors.Is(err, objectstore.ErrInvalidKey) {
				t.Errorf("put %q: %v", key, err)
			}
			if _, _, err := store.Get(ctx, key); !errors.Is(err, objectstore.ErrInvalidKey) {
				t.Errorf("get %q: %v", key, err)
			}
			if err := store.Delete(ctx, key); !errors.Is(err, objectstore.ErrInvalidKey) {
				t.Errorf("delete %q: %v", key, err)
			}
		}
		for _, prefix := range []string{"", "/", "../", "a/../"} {
			if err := store.DeletePrefix(ctx, prefix); !errors.Is(err, objectstore.ErrInvalidKey) {
				t.Errorf("delete prefix %q: %v", prefix, err)
			}
			if _, err := store.Usage(ctx, prefix); !errors.Is(err, objectstore.ErrInvalidKey) {
				t.Errorf("usage %q: %v", prefix, err)
			}
		}
	})

	t.Run("generated keys are accepted and unique", func(t *testing.T) {
		seen := map[string]bool{}
		for i := 0; i < 20; i++ {
			key, err := objectstore.NewKey("wsp_5", "frm_1", fmt.Sprintf("../../My Report %d (final).PDF", i))
			if err != nil {
				t.Fatal(err)
			}
			if seen[key] {
				t.Fatalf("duplicate key %s", key)
			}
			seen[key] = true
			put(t, key, "x", "application/pdf")
		}
		usage(t, objectstore.FormPrefix("wsp_5", "frm_1"), 20, 20)
	})
}

// encryptionOverhead bounds what encryption adds to files of content bytes in all: a sealed
// header of at most 1 KiB per file, 32 bytes per 64 KiB package.
func encryptionOverhead(content int64, files int) int64 {
	return int64(files)*(1024+32) + content/(64<<10)*32
}
