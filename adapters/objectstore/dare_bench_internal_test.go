package objectstore

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkDareStream20MB is the cost of encryption alone (no storage): sealing and opening a
// 20 MB file's DARE stream in memory, on every core.
func BenchmarkDareStream20MB(b *testing.B) {
	content := make([]byte, 20<<20)
	key := make([]byte, fileKeyLen)
	r, stop, err := encryptStream(bytes.NewReader(content), int64(len(content)), key, newNonce())
	if err != nil {
		b.Fatal(err)
	}
	stored, err := io.ReadAll(r)
	stop()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encrypt", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for i := 0; i < b.N; i++ {
			r, stop, err := encryptStream(bytes.NewReader(content), int64(len(content)), key, newNonce())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
			stop()
		}
	})
	b.Run("decrypt", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for i := 0; i < b.N; i++ {
			p := decryptStream(bytes.NewReader(stored), key, int64(len(content)), 0)
			n, err := io.Copy(io.Discard, p)
			p.Close()
			if err != nil || n != int64(len(content)) {
				b.Fatalf("%d bytes, %v", n, err)
			}
		}
	})
}
