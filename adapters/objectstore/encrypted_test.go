package objectstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/objectstore/miniotest"
	"github.com/formward/formward/adapters/objectstore/storetest"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// rawStore is a backend as the encrypting store sees it.
type rawStore interface {
	ports.ObjectStore
	objectstore.Lister
}

// fileCipher is the real crypto adapter over data keys kept in a SQLite database.
func fileCipher(t testing.TB, ring *crypto.Keyring) (*crypto.Cipher, ports.DataKeyRepository) {
	t.Helper()
	keys := persistence.NewDataKeyRepository(persistencetest.SQLite(t, nil))
	return crypto.NewCipher(ring, keys, system.NewIDs(), system.Clock{}), keys
}

func newLocalStore(t testing.TB) (raw *objectstore.Local, dataDir string) {
	t.Helper()
	dataDir = t.TempDir()
	raw, err := objectstore.NewLocal(objectstore.LocalDir(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	return raw, dataDir
}

// newEncryptedLocal is a local store, raw, in dataDir, and enc sealing it with a fresh master key.
func newEncryptedLocal(t testing.TB) (enc *objectstore.Encrypted, raw *objectstore.Local, dataDir string) {
	t.Helper()
	raw, dataDir = newLocalStore(t)
	c, _ := fileCipher(t, crypto.NewKeyring(crypto.GenerateMasterKey()))
	return objectstore.NewEncrypted(raw, c), raw, dataDir
}

// s3Env is one MinIO server for a test: the store, a raw client and the server's data dir.
type s3Env struct {
	store   *objectstore.S3
	client  *minio.Client
	bucket  string
	dataDir string
}

func newS3Env(t testing.TB) s3Env {
	t.Helper()
	endpoint, dataDir := miniotest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := miniotest.Config(endpoint, "formward-enc")
	store, err := objectstore.NewS3(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	client, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Region: cfg.Region})
	if err != nil {
		t.Fatal(err)
	}
	return s3Env{store: store, client: client, bucket: cfg.Bucket, dataDir: dataDir}
}

func TestEncryptedLocalContract(t *testing.T) {
	enc, _, _ := newEncryptedLocal(t)
	storetest.Run(t, enc, storetest.Contract{Encrypted: true})
}

// TestEncryptedS3 runs every encrypted-store test against one real MinIO server.
func TestEncryptedS3(t *testing.T) {
	env := newS3Env(t)
	c, _ := fileCipher(t, crypto.NewKeyring(crypto.GenerateMasterKey()))
	enc := objectstore.NewEncrypted(env.store, c)
	dump := func(t *testing.T) []rawItem {
		return append(dumpTree(t, env.dataDir), dumpBucket(t, env)...)
	}
	t.Run("contract", func(t *testing.T) { storetest.Run(t, enc, storetest.Contract{Encrypted: true}) })
	t.Run("raw dump", func(t *testing.T) { testRawDump(t, enc, dump) })
	t.Run("plaintext is visible without encryption", func(t *testing.T) { testRawDumpControl(t, env.store, dump) })
	t.Run("ranges", func(t *testing.T) { testServeRanges(t, enc) })
	t.Run("migration", func(t *testing.T) { testEncryptPlaintext(t, env.store, enc, dump) })
}

func TestEncryptedLocalRawDump(t *testing.T) {
	enc, raw, dataDir := newEncryptedLocal(t)
	dump := func(t *testing.T) []rawItem { return dumpTree(t, dataDir) }
	testRawDump(t, enc, dump)
	t.Run("plaintext is visible without encryption", func(t *testing.T) { testRawDumpControl(t, raw, dump) })
}

func TestEncryptedLocalRanges(t *testing.T) {
	enc, _, _ := newEncryptedLocal(t)
	testServeRanges(t, enc)
}

func TestEncryptPlaintextLocal(t *testing.T) {
	enc, raw, dataDir := newEncryptedLocal(t)

	// A write interrupted by a crash of an older version left a temporary file of plaintext.
	dir := filepath.Join(objectstore.LocalDir(dataDir), "workspaces", "wsp_m", "forms", "frm_m", "crashed")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".tmp-123456")
	if err := os.WriteFile(tmp, []byte("half a file "+contentMarker), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	testEncryptPlaintext(t, raw, enc, func(t *testing.T) []rawItem { return dumpTree(t, dataDir) })
}

// Master key rotation re-wraps the data keys; files sealed before it still open with the new
// master key alone.
func TestEncryptedFilesSurviveMasterKeyRotation(t *testing.T) {
	ctx := context.Background()
	raw, _ := newLocalStore(t)
	oldKey, newKey := crypto.GenerateMasterKey(), crypto.GenerateMasterKey()
	keys := persistence.NewDataKeyRepository(persistencetest.SQLite(t, nil))
	before := objectstore.NewEncrypted(raw, crypto.NewCipher(crypto.NewKeyring(oldKey), keys, system.NewIDs(), system.Clock{}))
	content := randomBytes(t, 200<<10)
	key := "workspaces/wsp_r/forms/frm_r/submissions/sub_r/obj_r/scan.pdf"
	if err := before.Put(ctx, key, bytes.NewReader(content), int64(len(content)), "application/pdf"); err != nil {
		t.Fatal(err)
	}

	n, err := crypto.RotateMaster(ctx, crypto.NewKeyring(newKey, oldKey), keys)
	if err != nil || n != 1 {
		t.Fatalf("rotate: re-wrapped %d, %v", n, err)
	}
	after := objectstore.NewEncrypted(raw, crypto.NewCipher(crypto.NewKeyring(newKey), keys, system.NewIDs(), system.Clock{}))
	got, info := readAll(t, after, key)
	if !bytes.Equal(got, content) || info.Name != "scan.pdf" || info.ContentType != "application/pdf" {
		t.Fatalf("after rotation: %d bytes, %+v", len(got), info)
	}
	// Without rotation, the new master key alone opens nothing: the check above is not vacuous.
	keys2 := persistence.NewDataKeyRepository(persistencetest.SQLite(t, nil))
	raw2, _ := newLocalStore(t)
	sealed := objectstore.NewEncrypted(raw2, crypto.NewCipher(crypto.NewKeyring(oldKey), keys2, system.NewIDs(), system.Clock{}))
	if err := sealed.Put(ctx, key, bytes.NewReader(content), int64(len(content)), "application/pdf"); err != nil {
		t.Fatal(err)
	}
	unrotated := objectstore.NewEncrypted(raw2, crypto.NewCipher(crypto.NewKeyring(newKey), keys2, system.NewIDs(), system.Clock{}))
	var missing *crypto.MissingMasterKeyError
	if _, _, err := unrotated.Get(ctx, key); !errors.As(err, &missing) {
		t.Fatalf("unrotated data key opened with another master key: %v", err)
	}
}

// A stored file opens only in its own place, workspace and name, and any altered byte fails.
func TestEncryptedRefusesTamperingAndMisplacing(t *testing.T) {
	ctx := context.Background()
	enc, raw, dataDir := newEncryptedLocal(t)
	content := randomBytes(t, 150<<10)
	a := "workspaces/wsp_a/forms/frm_a/submissions/sub_a/obj_a/a.txt"
	b := "workspaces/wsp_b/forms/frm_b/submissions/sub_b/obj_b/a.txt"
	if err := enc.Put(ctx, a, bytes.NewReader(content), int64(len(content)), "text/plain"); err != nil {
		t.Fatal(err)
	}
	storedA := filepath.Join(objectstore.LocalDir(dataDir), filepath.FromSlash("workspaces/wsp_a/forms/frm_a/submissions/sub_a/obj_a/"+objectstore.EncryptedSegment))
	blob, err := os.ReadFile(storedA)
	if err != nil {
		t.Fatal(err)
	}

	if _, _, err := enc.Get(ctx, "workspaces/wsp_a/forms/frm_a/submissions/sub_a/obj_a/other.txt"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another name in the same directory: %v", err)
	}

	// The same bytes copied to another workspace's place do not open.
	if err := raw.Put(ctx, "workspaces/wsp_b/forms/frm_b/submissions/sub_b/obj_b/"+objectstore.EncryptedSegment, bytes.NewReader(blob), int64(len(blob)), "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := enc.Get(ctx, b); err == nil {
		t.Error("a file copied to another workspace opened there")
	}

	// One flipped byte in the last package: the header opens, reading fails before the end.
	blob[len(blob)-100] ^= 1
	if err := os.WriteFile(storedA, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	rc, _, err := enc.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	_ = rc.Close()
	if !errors.Is(err, objectstore.ErrCorrupt) {
		t.Errorf("altered content read back: %v", err)
	}
	// A truncated object is refused when opened.
	if err := os.WriteFile(storedA, blob[:len(blob)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := enc.Get(ctx, a); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Errorf("truncated object: %v", err)
	}
}

// A body shorter or longer than its declared size stores nothing.
func TestEncryptedRefusesWrongBodySizes(t *testing.T) {
	ctx := context.Background()
	enc, _, _ := newEncryptedLocal(t)
	body := randomBytes(t, 3<<20)
	key := "workspaces/wsp_s/forms/frm_s/submissions/sub_s/obj_s/a.bin"
	for _, declared := range []int64{int64(len(body)) - 1, int64(len(body)) + 1, 1 << 20, 0} {
		if err := enc.Put(ctx, key, bytes.NewReader(body), declared, "application/octet-stream"); err == nil {
			t.Errorf("%d bytes declared as %d: stored", len(body), declared)
		}
		if _, _, err := enc.Get(ctx, key); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%d bytes declared as %d: %v", len(body), declared, err)
		}
	}
}

const (
	contentMarker = "Zebra-Content-Marker-9137"
	nameMarker    = "John_Doe_passport_Quokka7741"
)

// rawItem is one thing at rest: a path (or object key) and its bytes.
type rawItem struct {
	where string
	data  []byte
}

// dumpTree reads every file under root, with its path.
func dumpTree(t *testing.T, root string) []rawItem {
	t.Helper()
	var items []rawItem
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		items = append(items, rawItem{where: p})
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			items[len(items)-1].data = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// dumpBucket reads every object of the bucket through the S3 API: key, metadata and bytes.
func dumpBucket(t *testing.T, env s3Env) []rawItem {
	t.Helper()
	ctx := context.Background()
	var items []rawItem
	for o := range env.client.ListObjects(ctx, env.bucket, minio.ListObjectsOptions{Recursive: true, WithMetadata: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		st, err := env.client.StatObject(ctx, env.bucket, o.Key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		obj, err := env.client.GetObject(ctx, env.bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(obj)
		_ = obj.Close()
		if err != nil {
			t.Fatal(err)
		}
		meta := fmt.Sprintf("%s %v %v %v", st.ContentType, st.Metadata, st.UserMetadata, o.UserMetadata)
		items = append(items, rawItem{where: "s3://" + env.bucket + "/" + o.Key, data: append([]byte(meta+"\n"), b...)})
	}
	return items
}

// findMarkers lists where any marker appears, as is, in hex or in base64, in a path or in bytes.
func findMarkers(items []rawItem, markers ...string) []string {
	var found []string
	for _, it := range items {
		for _, m := range markers {
			for _, enc := range []string{m, strings.ToLower(m), hex.EncodeToString([]byte(m)), base64.StdEncoding.EncodeToString([]byte(m))} {
				if strings.Contains(it.where, enc) || bytes.Contains(it.data, []byte(enc)) {
					found = append(found, fmt.Sprintf("%q in %s", enc, it.where))
				}
			}
		}
	}
	return found
}

// putMarkedFiles stores files whose content and name carry the markers, small and spanning
// several packages, under a submission's prefix as capture does.
func putMarkedFiles(t *testing.T, store ports.ObjectStore, ws string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	files := map[string][]byte{
		"workspaces/" + ws + "/forms/frm_1/submissions/sub_1/obj_1/" + nameMarker + ".txt": []byte("passport number 1234 " + contentMarker),
		"workspaces/" + ws + "/forms/frm_1/submissions/sub_2/obj_2/" + nameMarker + ".pdf": bytes.Repeat([]byte(contentMarker+" "), 20000),
		"workspaces/" + ws + "/forms/frm_1/0123456789abcdef0123456789abcdef/" + nameMarker: []byte(contentMarker),
	}
	for key, body := range files {
		if err := store.Put(ctx, key, bytes.NewReader(body), int64(len(body)), "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// testRawDump: nothing of a file's content or name is found at rest, in any form.
func testRawDump(t *testing.T, enc *objectstore.Encrypted, dump func(*testing.T) []rawItem) {
	files := putMarkedFiles(t, enc, "wsp_dump")
	for key, want := range files {
		if got, info := readAll(t, enc, key); !bytes.Equal(got, want) || info.Name == "" || !strings.HasPrefix(info.Name, nameMarker) {
			t.Fatalf("%s read back %d bytes, %+v", key, len(got), info)
		}
	}
	noMarkers(t, dump, "", false)
}

// noMarkers fails when a marker is at rest. A storage server may finish a deletion later:
// MinIO moves deleted objects to its trash (.minio.sys/tmp/.trash) and erases it every five
// minutes. Where plaintext was deleted (the migration), a marker found only there is allowed
// and logged; everywhere else, and wherever plaintext was never written, nothing is.
func noMarkers(t *testing.T, dump func(*testing.T) []rawItem, when string, allowDeleted bool) {
	t.Helper()
	found := findMarkers(dump(t), contentMarker, nameMarker)
	var fatal []string
	for _, f := range found {
		if allowDeleted && strings.Contains(f, minioTrash) {
			t.Logf("deleted plaintext still in MinIO's trash: %s", f)
			continue
		}
		fatal = append(fatal, f)
	}
	if len(fatal) > 0 {
		t.Fatalf("plaintext at rest %s:\n%s", when, strings.Join(fatal, "\n"))
	}
}

// minioTrash is where MinIO moves deleted data before erasing it.
var minioTrash = string(filepath.Separator) + filepath.Join(".minio.sys", "tmp", ".trash") + string(filepath.Separator)

// testRawDumpControl shows the dump would find plaintext: the same files through the bare store.
func testRawDumpControl(t *testing.T, raw ports.ObjectStore, dump func(*testing.T) []rawItem) {
	putMarkedFiles(t, raw, "wsp_plain")
	found := findMarkers(dump(t), contentMarker, nameMarker)
	if len(found) == 0 {
		t.Fatal("the raw dump does not see plaintext files: it would miss a leak")
	}
	if err := raw.DeletePrefix(context.Background(), "workspaces/wsp_plain/"); err != nil {
		t.Fatal(err)
	}
}

// testEncryptPlaintext: files written the old way (plaintext, named keys) are encrypted in
// place, read back identically, and leave no plaintext anywhere; a second pass does nothing.
func testEncryptPlaintext(t *testing.T, raw rawStore, enc *objectstore.Encrypted, dump func(*testing.T) []rawItem) {
	ctx := context.Background()
	files := putMarkedFiles(t, raw, "wsp_mig")
	empty := "workspaces/wsp_mig/forms/frm_1/submissions/sub_3/obj_3/empty.txt"
	if err := raw.Put(ctx, empty, strings.NewReader(""), 0, "text/plain"); err != nil {
		t.Fatal(err)
	}
	files[empty] = []byte{}
	// A pass interrupted after writing the encrypted copy, before deleting the plaintext.
	half := "workspaces/wsp_mig/forms/frm_2/submissions/sub_4/obj_4/" + nameMarker + ".csv"
	halfBody := []byte("a,b\n" + contentMarker + "\n")
	for _, s := range []ports.ObjectStore{enc, raw} {
		if err := s.Put(ctx, half, bytes.NewReader(halfBody), int64(len(halfBody)), "text/csv"); err != nil {
			t.Fatal(err)
		}
	}
	files[half] = halfBody

	// Before the migration the plaintext files are still served, with their names.
	for key, want := range files {
		if got, info := readAll(t, enc, key); !bytes.Equal(got, want) || info.Name == "" {
			t.Fatalf("before migration %s: %d bytes, %+v", key, len(got), info)
		}
	}
	if len(findMarkers(dump(t), contentMarker, nameMarker)) == 0 {
		t.Fatal("no plaintext before the migration: the test proves nothing")
	}

	m, err := enc.EncryptPlaintext(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if m.Encrypted != len(files)-1 || m.Removed != 1 {
		t.Fatalf("migration: %+v, want %d encrypted and 1 removed", m, len(files)-1)
	}
	for key, want := range files {
		if got, info := readAll(t, enc, key); !bytes.Equal(got, want) || info.Name == "" || info.ContentType == "" {
			t.Fatalf("after migration %s: %d bytes, %+v", key, len(got), info)
		}
	}
	err = raw.List(ctx, "workspaces/", func(key string) error {
		if !strings.HasSuffix(key, "/"+objectstore.EncryptedSegment) {
			return fmt.Errorf("plaintext object %s left", key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	noMarkers(t, dump, "after the migration", true)
	again, err := enc.EncryptPlaintext(ctx, time.Now())
	if err != nil || again != (objectstore.Migration{}) {
		t.Fatalf("second pass: %+v, %v", again, err)
	}
}

// testServeRanges downloads an encrypted file through a signed link: whole, HEAD, and byte
// ranges at the start, across a package boundary in the middle, and at the end.
func testServeRanges(t *testing.T, enc *objectstore.Encrypted) {
	ctx := context.Background()
	// Two 1 MiB chunks of 16 packages, then five packages and a partial one.
	content := randomBytes(t, 2<<20+5*65536+1234)
	key := "workspaces/wsp_rng/forms/frm_1/submissions/sub_1/obj_1/" + nameMarker + ".bin"
	if err := enc.Put(ctx, key, bytes.NewReader(content), int64(len(content)), "application/x-test"); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	signer := objectstore.Signer{Key: []byte("secret"), BaseURL: "https://forms.example.com"}
	h := objectstore.Serve(enc, signer, func() time.Time { return now })
	u, err := url.Parse(signer.URL(key, now.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, rng string) (*http.Response, []byte) {
		req := httptest.NewRequest(method, u.RequestURI(), nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		resp := rec.Result()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	size := len(content)

	resp, body := do(http.MethodGet, "")
	if resp.StatusCode != 200 || !bytes.Equal(body, content) || resp.Header.Get("Content-Length") != strconv.Itoa(size) {
		t.Fatalf("whole: %d, %d bytes, length %q", resp.StatusCode, len(body), resp.Header.Get("Content-Length"))
	}
	for k, want := range map[string]string{
		"Content-Type":        "application/x-test",
		"Content-Disposition": "attachment; filename=" + nameMarker + ".bin",
		"Accept-Ranges":       "bytes",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	resp, body = do(http.MethodHead, "")
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(size) {
		t.Fatalf("head: %d, %d bytes, length %q", resp.StatusCode, len(body), resp.Header.Get("Content-Length"))
	}

	for _, tc := range []struct {
		rng        string
		start, end int // inclusive
	}{
		{"bytes=0-9", 0, 9},
		{"bytes=100000-200000", 100000, 200000},     // the middle, across the boundary at 131072
		{"bytes=131072-131072", 131072, 131072},     // the first byte of a package
		{"bytes=1048000-1050000", 1048000, 1050000}, // across the boundary of two chunks
		{"bytes=2097152-2097153", 2097152, 2097153}, // the start of the third chunk
		{"bytes=-1000", size - 1000, size - 1},      // the last 1,000 bytes
		{fmt.Sprintf("bytes=%d-", size-1), size - 1, size - 1},
		{fmt.Sprintf("bytes=%d-%d", size-5000, size+5000), size - 5000, size - 1},
	} {
		resp, body := do(http.MethodGet, tc.rng)
		want := content[tc.start : tc.end+1]
		if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, want) {
			t.Errorf("%s: status %d, %d bytes (want %d)", tc.rng, resp.StatusCode, len(body), len(want))
			continue
		}
		if got, want := resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", tc.start, tc.end, size); got != want {
			t.Errorf("%s: Content-Range %q, want %q", tc.rng, got, want)
		}
		if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(len(want)) {
			t.Errorf("%s: Content-Length %q", tc.rng, got)
		}
	}
	if resp, _ := do(http.MethodGet, fmt.Sprintf("bytes=%d-", size)); resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("range past the end: status %d", resp.StatusCode)
	}
}

func readAll(t testing.TB, store ports.ObjectStore, key string) ([]byte, ports.ObjectInfo) {
	t.Helper()
	rc, info, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if int64(len(b)) != info.Size {
		t.Fatalf("%s: read %d bytes, size says %d", key, len(b), info.Size)
	}
	return b, info
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
