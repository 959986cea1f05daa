package objectstore

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/minio/sio"
)

// A file's content is a DARE 2.0 stream (github.com/minio/sio). Its 64 KiB packages are
// independent (each has its sequence number in its nonce), so both directions work on chunks
// of packagesPerChunk packages: one goroutine does the I/O in order, the cores seal or open
// the chunks in parallel, and the results come out in order. Every package read is opened
// back with openChunk, which checks what sio's reader checks; both mirror sio's package layout
// (a test holds them to sio itself in both directions):
//
//	version 0x20 | cipher suite | uint16 LE payload length - 1 | 12-byte nonce (top bit: final) | payload | 16-byte tag
//
// with AES-256-GCM under the file key, the nonce's last 4 bytes XORed with the sequence
// number, and the first 4 header bytes as additional data.
const (
	packagesPerChunk = 16
	chunkPlain       = packagesPerChunk * darePayload
	chunkStored      = packagesPerChunk * darePackage
	dareHeader       = 16
	dareVersion20    = 0x20
)

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkStored); return &b }}

// pipe runs produce(0), produce(1), … in one goroutine (the ordered I/O); each returns the
// work of one chunk, run on up to GOMAXPROCS goroutines; Read yields the chunks' output in
// order. produce returns ok=false after the last chunk.
type pipe struct {
	results chan chan chunkResult
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	cur     *[]byte
	off     int
	err     error
}

type chunkResult struct {
	buf *[]byte // from chunkPool; its used length is len(*buf)
	err error
}

func newPipe(produce func(i int) (work func() (*[]byte, error), ok bool, err error)) *pipe {
	workers := runtime.GOMAXPROCS(0)
	p := &pipe{results: make(chan chan chunkResult, 2*workers), stop: make(chan struct{}), done: make(chan struct{})}
	sem := make(chan struct{}, workers)
	go func() {
		defer close(p.done)
		defer close(p.results)
		for i := 0; ; i++ {
			work, ok, err := produce(i)
			if !ok && err == nil {
				return
			}
			ch := make(chan chunkResult, 1)
			select {
			case p.results <- ch:
			case <-p.stop:
				return
			}
			if err != nil {
				ch <- chunkResult{err: err}
				return
			}
			select {
			case sem <- struct{}{}:
			case <-p.stop:
				ch <- chunkResult{err: errors.New("objectstore: stopped")}
				return
			}
			go func() {
				defer func() { <-sem }()
				buf, err := work()
				ch <- chunkResult{buf: buf, err: err}
			}()
		}
	}()
	return p
}

func (p *pipe) Read(b []byte) (int, error) {
	for p.cur == nil || p.off == len(*p.cur) {
		if p.err != nil {
			return 0, p.err
		}
		p.release()
		ch, ok := <-p.results
		if !ok {
			p.err = io.EOF
			return 0, io.EOF
		}
		r := <-ch
		if r.err != nil {
			p.err = r.err
			return 0, r.err
		}
		p.cur, p.off = r.buf, 0
	}
	n := copy(b, (*p.cur)[p.off:])
	p.off += n
	return n, nil
}

func (p *pipe) release() {
	if p.cur != nil {
		*p.cur = (*p.cur)[:cap(*p.cur)]
		chunkPool.Put(p.cur)
		p.cur = nil
	}
}

// Close stops the producer and waits for it; chunks still being worked on finish on their own.
func (p *pipe) Close() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
	p.release()
	for ch := range p.results {
		go func() {
			if r := <-ch; r.buf != nil {
				*r.buf = (*r.buf)[:cap(*r.buf)]
				chunkPool.Put(r.buf)
			}
		}()
	}
}

// newDareAEAD is the package cipher of a file key.
func newDareAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// newNonce is a new stream's random nonce (its packages' nonces derive from it).
func newNonce() (nonce [12]byte) {
	rand.Read(nonce[:]) // never fails; it crashes the program instead
	return nonce
}

// encryptStream returns the DARE 2.0 encryption of exactly size bytes of r under key and
// nonce, and a stop function to call once the stream is no longer read.
func encryptStream(r io.Reader, size int64, key []byte, nonce [12]byte) (io.Reader, func(), error) {
	if size == 0 {
		// An empty file has no package; r must be empty too.
		if n, _ := io.ReadFull(r, make([]byte, 1)); n > 0 {
			return nil, nil, errBodySize
		}
		return bytes.NewReader(nil), func() {}, nil
	}
	aead, err := newDareAEAD(key)
	if err != nil {
		return nil, nil, err
	}
	src := &exactReader{r: r, left: size}
	chunks := int((size + chunkPlain - 1) / chunkPlain)
	p := newPipe(func(i int) (func() (*[]byte, error), bool, error) {
		if i == chunks {
			// exactReader fails when r holds more than size bytes.
			if _, err := src.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				return nil, false, errBodySize
			}
			return nil, false, nil
		}
		plain := chunkPool.Get().(*[]byte)
		n := chunkPlain
		if rest := size - int64(i)*chunkPlain; rest < int64(n) {
			n = int(rest)
		}
		if _, err := io.ReadFull(src, (*plain)[:n]); err != nil {
			chunkPool.Put(plain)
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				err = errBodySize
			}
			return nil, false, err
		}
		final := i == chunks-1
		return func() (*[]byte, error) {
			defer chunkPool.Put(plain)
			out := chunkPool.Get().(*[]byte)
			*out = sealChunk((*out)[:0], aead, nonce, uint32(i*packagesPerChunk), (*plain)[:n], final)
			return out, nil
		}, true, nil
	})
	return p, p.Close, nil
}

// sealChunk appends the packages of plain, the first with sequence number seq; the last is
// marked final when final is set.
func sealChunk(dst []byte, aead cipher.AEAD, randVal [12]byte, seq uint32, plain []byte, final bool) []byte {
	for len(plain) > 0 {
		n := min(len(plain), darePayload)
		last := final && n == len(plain)
		var h [dareHeader]byte
		h[0], h[1] = dareVersion20, sio.AES_256_GCM
		binary.LittleEndian.PutUint16(h[2:4], uint16(n-1))
		copy(h[4:], randVal[:])
		if last {
			h[4] |= 0x80
		} else {
			h[4] &= 0x7F
		}
		var nonce [12]byte
		copy(nonce[:], h[4:])
		binary.LittleEndian.PutUint32(nonce[8:], binary.LittleEndian.Uint32(nonce[8:])^seq)
		dst = append(dst, h[:]...)
		dst = aead.Seal(dst, nonce[:], plain[:n], h[:4])
		plain, seq = plain[n:], seq+1
	}
	return dst
}

// errPackage is a DARE package that is not what sealChunk writes.
var errPackage = fmt.Errorf("%w: malformed package", ErrCorrupt)

// openChunk appends the plaintext of stored, the packages of one chunk whose first has sequence
// number seq, to dst. It checks what sio's reader checks (version, cipher suite, lengths, one
// nonce for all packages, the tag) and more: the final flag must be on the stream's last
// package and on no other (endsStream says this chunk ends the stream). Each package is opened
// straight into dst, with no intermediate buffer.
func openChunk(dst []byte, aead cipher.AEAD, stored []byte, seq uint32, endsStream bool) ([]byte, error) {
	const tag = darePackage - darePayload - dareHeader
	var ref [12]byte // the nonce but its final bit
	for i := 0; len(stored) > 0; i++ {
		if len(stored) <= dareHeader+tag {
			return nil, errPackage
		}
		h := stored[:dareHeader]
		n := int(binary.LittleEndian.Uint16(h[2:4])) + 1
		size := dareHeader + n + tag
		if h[0] != dareVersion20 || h[1] != sio.AES_256_GCM || len(stored) < size {
			return nil, errPackage
		}
		final := h[4]&0x80 != 0
		if final != (endsStream && len(stored) == size) || (!final && n != darePayload) {
			return nil, errPackage
		}
		shared := [12]byte(h[4:16])
		shared[0] &= 0x7F
		if i == 0 {
			ref = shared
		} else if shared != ref {
			return nil, errPackage
		}
		nonce := [12]byte(h[4:16])
		binary.LittleEndian.PutUint32(nonce[8:], binary.LittleEndian.Uint32(nonce[8:])^seq)
		var err error
		if dst, err = aead.Open(dst, nonce[:], stored[dareHeader:size], h[:4]); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		stored, seq = stored[size:], seq+1
	}
	return dst, nil
}

// decryptStream reads the DARE stream in src from the start of chunk first (src is positioned
// there) and returns the plaintext from that chunk on: size is the file's plaintext size.
func decryptStream(src io.Reader, key []byte, size int64, first int) *pipe {
	chunks := int((size + chunkPlain - 1) / chunkPlain)
	aead, aeadErr := newDareAEAD(key)
	return newPipe(func(i int) (func() (*[]byte, error), bool, error) {
		if aeadErr != nil {
			return nil, false, aeadErr
		}
		c := first + i
		if c >= chunks {
			return nil, false, nil
		}
		plainLen := chunkPlain
		if rest := size - int64(c)*chunkPlain; rest < int64(plainLen) {
			plainLen = int(rest)
		}
		storedLen := plainLen + (plainLen+darePayload-1)/darePayload*(darePackage-darePayload)
		stored := chunkPool.Get().(*[]byte)
		if _, err := io.ReadFull(src, (*stored)[:storedLen]); err != nil {
			chunkPool.Put(stored)
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			return nil, false, err
		}
		return func() (*[]byte, error) {
			defer chunkPool.Put(stored)
			out := chunkPool.Get().(*[]byte)
			plain, err := openChunk((*out)[:0], aead, (*stored)[:storedLen], uint32(c*packagesPerChunk), c == chunks-1)
			if err == nil && len(plain) != plainLen {
				err = errPackage
			}
			if err != nil {
				chunkPool.Put(out)
				return nil, err
			}
			*out = plain
			return out, nil
		}, true, nil
	})
}

// sealedObject is a stored encrypted object (head, then the DARE 2.0 stream of src's first
// size bytes under key and nonce) read at any offset: ReadAt seals the packages it covers from
// src, straight into the caller's buffer when a package fits there whole, and keeps the
// packages it sealed for a part of a read (the next read's first package is usually the one
// the last read ended in). A package always seals to the same bytes, so a store may read a range
// twice (a retried part); src must not change meanwhile, as an upload's spool does not. It is
// what encryptStream yields for the same key and nonce, byte for byte.
type sealedObject struct {
	head   []byte
	src    io.ReaderAt
	size   int64 // plaintext bytes of src
	stream int64 // bytes of the DARE stream
	aead   cipher.AEAD
	nonce  [12]byte

	kept [8]keptPackage // packages sealed for parts of reads: package n in slot n mod 8
}

// keptPackage is one package sealed for reads that take part of it; its lock lets reads of
// packages in other slots (another part of an upload) seal at the same time.
type keptPackage struct {
	mu    sync.Mutex
	pkg   int64
	valid bool
	buf   []byte
}

func newSealedObject(head []byte, src io.ReaderAt, size int64, key []byte, nonce [12]byte) (*sealedObject, error) {
	// src must hold exactly size bytes.
	var one [1]byte
	if size > 0 {
		if n, err := src.ReadAt(one[:], size-1); n != 1 {
			if err == nil || errors.Is(err, io.EOF) {
				err = errBodySize
			}
			return nil, err
		}
	}
	if n, _ := src.ReadAt(one[:], size); n > 0 {
		return nil, errBodySize
	}
	stream, err := sio.EncryptedSize(uint64(size))
	if err != nil {
		return nil, err
	}
	aead, err := newDareAEAD(key)
	if err != nil {
		return nil, err
	}
	return &sealedObject{head: head, src: src, size: size, stream: int64(stream), aead: aead, nonce: nonce}, nil
}

// Size is the stored object's length.
func (o *sealedObject) Size() int64 { return int64(len(o.head)) + o.stream }

func (o *sealedObject) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("objectstore: negative offset")
	}
	n := 0
	if off < int64(len(o.head)) {
		n = copy(p, o.head[off:])
	}
	for n < len(p) {
		at := off + int64(n) - int64(len(o.head)) // in the stream
		if at >= o.stream {
			return n, io.EOF
		}
		pkg, within := at/darePackage, int(at%darePackage)
		if within == 0 && len(p)-n >= o.packageLen(pkg) {
			k, err := o.seal(p[n:], pkg)
			if err != nil {
				return n, err
			}
			n += k
			continue
		}
		k, err := o.part(p[n:], pkg, within)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// packageLen is the stored length of package pkg.
func (o *sealedObject) packageLen(pkg int64) int {
	return int(min(darePayload, o.size-pkg*darePayload)) + darePackage - darePayload
}

// seal writes package pkg at the start of dst (which has room for it) and returns its length.
// The plaintext is read where the package's payload goes, and sealed in place.
func (o *sealedObject) seal(dst []byte, pkg int64) (int, error) {
	plainAt := pkg * darePayload
	plainLen := int(min(darePayload, o.size-plainAt))
	plain := dst[dareHeader : dareHeader+plainLen]
	if k, err := o.src.ReadAt(plain, plainAt); k != plainLen {
		if err == nil || errors.Is(err, io.EOF) {
			err = errBodySize
		}
		return 0, err
	}
	sealChunk(dst[:0], o.aead, o.nonce, uint32(pkg), plain, plainAt+int64(plainLen) == o.size)
	return o.packageLen(pkg), nil
}

// part copies package pkg from byte within on into dst: from its slot, sealed there first
// unless the slot holds it already.
func (o *sealedObject) part(dst []byte, pkg int64, within int) (int, error) {
	k := &o.kept[pkg%int64(len(o.kept))]
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.valid || k.pkg != pkg {
		if k.buf == nil {
			k.buf = make([]byte, darePackage)
		}
		k.valid = false
		n, err := o.seal(k.buf[:cap(k.buf)], pkg)
		if err != nil {
			return 0, err
		}
		k.pkg, k.valid, k.buf = pkg, true, k.buf[:n]
	}
	return copy(dst, k.buf[within:]), nil
}
