package objectstore

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/minio/sio"
)

func dareSizes() []int {
	return []int{1, 100, darePayload - 1, darePayload, darePayload + 1, chunkPlain, chunkPlain + 1, 3*chunkPlain + 12345}
}

func sealAll(t *testing.T, content, key []byte) []byte {
	t.Helper()
	r, stop, err := encryptStream(bytes.NewReader(content), int64(len(content)), key, newNonce())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	stored, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// What we seal, sio opens; what sio seals, we open: the stored format is DARE 2.0 itself.
func TestDareInteroperatesWithSio(t *testing.T) {
	key := make([]byte, fileKeyLen)
	rand.Read(key)
	cfg := sio.Config{Key: key, MinVersion: sio.Version20, MaxVersion: sio.Version20, CipherSuites: []byte{sio.AES_256_GCM}}
	for _, size := range dareSizes() {
		content := make([]byte, size)
		rand.Read(content)

		stored := sealAll(t, content, key)
		if want, _ := sio.EncryptedSize(uint64(size)); uint64(len(stored)) != want {
			t.Fatalf("%d bytes: sealed %d, sio says %d", size, len(stored), want)
		}
		var got bytes.Buffer
		if _, err := sio.Decrypt(&got, bytes.NewReader(stored), cfg); err != nil || !bytes.Equal(got.Bytes(), content) {
			t.Fatalf("%d bytes: sio cannot open what we seal: %v", size, err)
		}

		var bySio bytes.Buffer
		if _, err := sio.Encrypt(&bySio, bytes.NewReader(content), cfg); err != nil {
			t.Fatal(err)
		}
		p := decryptStream(bytes.NewReader(bySio.Bytes()), key, int64(size), 0)
		opened, err := io.ReadAll(p)
		p.Close()
		if err != nil || !bytes.Equal(opened, content) {
			t.Fatalf("%d bytes: we cannot open what sio seals: %v", size, err)
		}
	}
}

// Every alteration of the stream is refused: a flipped bit, packages swapped, the final flag
// moved or dropped, another package's nonce, a wrong length.
func TestDareRefusesAlteredStreams(t *testing.T) {
	key := make([]byte, fileKeyLen)
	rand.Read(key)
	size := 2*chunkPlain + 3*darePayload + 10
	content := make([]byte, size)
	rand.Read(content)
	stored := sealAll(t, content, key)
	pkg := func(i int) int { return i * darePackage } // offset of package i
	last := (size + darePayload - 1) / darePayload
	alter := map[string]func(b []byte){
		"bit flipped in a payload":       func(b []byte) { b[pkg(5)+dareHeader+7] ^= 1 },
		"bit flipped in a tag":           func(b []byte) { b[pkg(6)-1] ^= 1 },
		"final flag on a middle package": func(b []byte) { b[pkg(3)+4] |= 0x80 },
		"final flag on a chunk's last":   func(b []byte) { b[pkg(packagesPerChunk-1)+4] |= 0x80 },
		"final flag dropped":             func(b []byte) { b[pkg(last-1)+4] &= 0x7F },
		"nonce changed":                  func(b []byte) { b[pkg(2)+9] ^= 1 },
		"length changed":                 func(b []byte) { b[pkg(1)+2] = 0 },
		"version changed":                func(b []byte) { b[pkg(4)] = 0x10 },
		"packages swapped": func(b []byte) {
			a := bytes.Clone(b[pkg(1):pkg(2)])
			copy(b[pkg(1):pkg(2)], b[pkg(2):pkg(3)])
			copy(b[pkg(2):pkg(3)], a)
		},
	}
	for name, f := range alter {
		b := bytes.Clone(stored)
		f(b)
		p := decryptStream(bytes.NewReader(b), key, int64(size), 0)
		_, err := io.ReadAll(p)
		p.Close()
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	p := decryptStream(bytes.NewReader(stored[:len(stored)-1]), key, int64(size), 0)
	if _, err := io.ReadAll(p); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: err = %v, want ErrCorrupt", err)
	}
	p.Close()
}

// Read at any offsets, in any order and from several goroutines at once, the sealed object is
// the head followed by exactly the stream encryptStream seals with the same key and nonce.
func TestSealedObjectReadsAtOffsetsAsTheStream(t *testing.T) {
	key := make([]byte, fileKeyLen)
	rand.Read(key)
	head := []byte("FWE1 a head of a few bytes")
	for _, size := range append([]int{0}, dareSizes()...) {
		content := make([]byte, size)
		rand.Read(content)
		nonce := newNonce()
		r, stop, err := encryptStream(bytes.NewReader(content), int64(size), key, nonce)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := io.ReadAll(r)
		stop()
		if err != nil {
			t.Fatal(err)
		}
		want := append(bytes.Clone(head), stream...)
		obj, err := newSealedObject(head, bytes.NewReader(content), int64(size), key, nonce)
		if err != nil {
			t.Fatal(err)
		}
		if obj.Size() != int64(len(want)) {
			t.Fatalf("%d bytes: Size %d, want %d", size, obj.Size(), len(want))
		}
		// Whole, in one read.
		got := make([]byte, len(want)+10)
		n, err := obj.ReadAt(got, 0)
		if n != len(want) || !errors.Is(err, io.EOF) || !bytes.Equal(got[:n], want) {
			t.Fatalf("%d bytes: one read: %d bytes, %v, equal %v", size, n, err, bytes.Equal(got[:n], want))
		}
		// In pieces of odd sizes that straddle packages, from four goroutines.
		var wg sync.WaitGroup
		for _, piece := range []int{1000, 32 << 10, 64 << 10, darePackage + 7} {
			wg.Go(func() {
				buf := make([]byte, piece)
				for off := len(want) - 1; off >= 0; off -= piece {
					start := max(0, off-piece+1)
					n, err := obj.ReadAt(buf[:off+1-start], int64(start))
					if n != off+1-start || (err != nil && !errors.Is(err, io.EOF)) || !bytes.Equal(buf[:n], want[start:off+1]) {
						t.Errorf("%d bytes: read [%d, %d]: %d bytes, %v", size, start, off, n, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if n, err := obj.ReadAt(got[:1], int64(len(want))); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("%d bytes: read at the end: %d, %v", size, n, err)
		}
	}
}

// A source shorter or longer than the size declared for it is refused before anything is read.
func TestSealedObjectRefusesAWrongSize(t *testing.T) {
	key := make([]byte, fileKeyLen)
	for _, c := range []struct{ have, declared int }{{99, 100}, {101, 100}, {1, 0}, {0, 1}} {
		if _, err := newSealedObject(nil, bytes.NewReader(make([]byte, c.have)), int64(c.declared), key, newNonce()); !errors.Is(err, errBodySize) {
			t.Errorf("%d bytes declared %d: err = %v, want errBodySize", c.have, c.declared, err)
		}
	}
}
