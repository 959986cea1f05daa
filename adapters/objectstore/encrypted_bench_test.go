package objectstore_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/ports"
)

// BenchmarkFile20MB uploads (Put) and downloads (a signed link through Serve) a 20 MB file,
// with and without encryption, on the local disk and on MinIO (when its binary is installed).
//
//	go test ./adapters/objectstore -run '^$' -bench File20MB -benchtime 20x
func BenchmarkFile20MB(b *testing.B) {
	content := randomBytes(b, 20<<20)
	c, _ := fileCipher(b, crypto.NewKeyring(crypto.GenerateMasterKey()))
	b.Run("local", func(b *testing.B) {
		raw, _ := newLocalStore(b)
		benchStores(b, content, raw, objectstore.NewEncrypted(raw, c))
	})
	b.Run("s3", func(b *testing.B) {
		env := newS3Env(b)
		benchStores(b, content, env.store, objectstore.NewEncrypted(env.store, c))
	})
}

func benchStores(b *testing.B, content []byte, plain ports.ObjectStore, encrypted *objectstore.Encrypted) {
	for _, s := range []struct {
		name  string
		store ports.ObjectStore
	}{{"plain", plain}, {"encrypted", encrypted}} {
		key := "workspaces/wsp_bench/forms/frm_1/submissions/sub_1/obj_" + s.name + "/big.bin"
		b.Run(s.name+"/upload", func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for i := 0; i < b.N; i++ {
				if err := s.store.Put(context.Background(), key, bytes.NewReader(content), int64(len(content)), "application/octet-stream"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.name+"/download", func(b *testing.B) {
			now := time.Now()
			signer := objectstore.Signer{Key: []byte("secret"), BaseURL: "https://forms.example.com"}
			h := objectstore.Serve(s.store, signer, func() time.Time { return now })
			u, err := url.Parse(signer.URL(key, now.Add(time.Hour)))
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, u.RequestURI(), nil)
			b.SetBytes(int64(len(content)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := &countingWriter{header: http.Header{}}
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK || w.n != int64(len(content)) {
					b.Fatalf("status %d, %d bytes", w.status, w.n)
				}
			}
		})
	}
}

// countingWriter is a ResponseWriter that counts the body and keeps nothing of it.
type countingWriter struct {
	header http.Header
	status int
	n      int64
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *countingWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += int64(len(p))
	return len(p), nil
}
