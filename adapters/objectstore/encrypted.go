package objectstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/minio/sio"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// Encrypted keeps every uploaded file encrypted at rest in the store it wraps (the local disk
// or an S3 bucket). Each file gets its own random 256-bit key; the file's content is encrypted
// with that key in the DARE 2.0 streaming format (AES-256-GCM in 64 KiB packages,
// github.com/minio/sio), and the file key, the file name and the content type are sealed by the
// workspace's data key (ports.Cipher) into a header at the start of the same object.
//
// Keys stay what the application knows (…/<object ID>/<file name>); in the wrapped store an
// object lives at its key's directory followed by EncryptedSegment, so no stored key, file,
// sidecar or object metadata carries the file name. The directory of a key names the file:
// every upload has its own (a random object ID), and Get answers not found when the name kept
// in the header is not the key's last segment.
//
// Only keys under "workspaces/" are files of respondents; any other key (the readiness probe)
// is passed through as it is.
type Encrypted struct {
	next   ports.ObjectStore
	cipher ports.Cipher
}

var _ ports.ObjectStore = (*Encrypted)(nil)

// NewEncrypted wraps next so that what it stores is encrypted with keys sealed by cipher.
func NewEncrypted(next ports.ObjectStore, cipher ports.Cipher) *Encrypted {
	if next == nil || cipher == nil {
		panic("objectstore: NewEncrypted needs a store and a cipher")
	}
	return &Encrypted{next: next, cipher: cipher}
}

// EncryptedSegment is the last segment of the stored key of an encrypted file. No file name
// takes it: sanitised names never start with a dot.
const EncryptedSegment = ".fwenc"

// filesRoot is where the respondents' files live (ports.FormFilesPrefix).
const filesRoot = "workspaces/"

// Stored object layout:
//
//	magic "FWE1" | uint32 big-endian length of the sealed header | sealed header | DARE 2.0 stream
//
// The sealed header is ports.Cipher.Seal(workspace, JSON of fileHeader, aad = "formward file
// v1\n" + stored key): it opens only in its workspace and at its own place in the store.
const (
	fileMagic      = "FWE1"
	prefixLen      = len(fileMagic) + 4
	maxHeaderLen   = 16 << 10
	darePayload    = 1 << 16
	darePackage    = darePayload + 32
	fileKeyLen     = 32
	storedMimeType = "application/octet-stream"
)

// fileHeader is what the sealed header holds.
type fileHeader struct {
	Key         []byte `json:"k"`
	Name        string `json:"n"`
	ContentType string `json:"t"`
	Size        int64  `json:"s"`
}

// ErrCorrupt means a stored file is not in the encrypted format, or was altered.
var ErrCorrupt = errors.New("objectstore: encrypted file is corrupt")

// storedKey maps a key to where its encrypted object lives, and says which workspace's data
// key seals it; encrypted is false for keys outside filesRoot.
func storedKey(key string) (stored, workspaceID string, encrypted bool, err error) {
	if err := ValidateKey(key); err != nil {
		return "", "", false, err
	}
	rest, ok := strings.CutPrefix(key, filesRoot)
	if !ok {
		return key, "", false, nil
	}
	ws, _, _ := strings.Cut(rest, "/")
	dir, name := path.Split(key)
	if strings.Count(key, "/") < 2 || name == EncryptedSegment {
		return "", "", false, fmt.Errorf("%w: %q is not a file key", ErrInvalidKey, key)
	}
	return dir + EncryptedSegment, ws, true, nil
}

func headerAAD(stored string) []byte { return []byte("formward file v1\n" + stored) }

// Put encrypts the file under a new key of its own and stores it.
func (e *Encrypted) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	stored, ws, encrypted, err := storedKey(key)
	if err != nil {
		return err
	}
	if !encrypted {
		return e.next.Put(ctx, key, r, size, contentType)
	}
	return e.put(ctx, stored, ws, path.Base(key), r, size, contentType)
}

func (e *Encrypted) put(ctx context.Context, stored, workspaceID, name string, r io.Reader, size int64, contentType string) error {
	if size < 0 {
		return fmt.Errorf("put %s: negative size", name)
	}
	encSize, err := sio.EncryptedSize(uint64(size))
	if err != nil {
		return fmt.Errorf("put %s: %w", name, err)
	}
	h := fileHeader{Key: make([]byte, fileKeyLen), Name: name, ContentType: contentType, Size: size}
	rand.Read(h.Key) // never fails; it crashes the program instead
	plain, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode file header: %w", err)
	}
	sealed, err := e.cipher.Seal(ctx, workspaceID, plain, headerAAD(stored))
	clear(plain)
	if err != nil {
		return fmt.Errorf("seal file header: %w", err)
	}
	head := make([]byte, 0, prefixLen+len(sealed))
	head = append(head, fileMagic...)
	head = binary.BigEndian.AppendUint32(head, uint32(len(sealed)))
	head = append(head, sealed...)
	nonce := newNonce()
	total := int64(len(head)) + int64(encSize)
	if at, ok := r.(io.ReaderAt); ok {
		// The store may read the object at offsets (the local disk copies large objects on
		// every core, an S3 client uploads parts in parallel) or in order; the source is only
		// ever read at offsets.
		obj, err := newSealedObject(head, at, size, h.Key, nonce)
		if err != nil {
			return fmt.Errorf("encrypt file: %w", err)
		}
		return e.next.Put(ctx, stored, io.NewSectionReader(obj, 0, obj.Size()), total, storedMimeType)
	}
	body, stop, err := encryptStream(r, size, h.Key, nonce)
	if err != nil {
		return fmt.Errorf("encrypt file: %w", err)
	}
	defer stop()
	return e.next.Put(ctx, stored, io.MultiReader(bytes.NewReader(head), body), total, storedMimeType)
}

// errBodySize means a file's body was shorter or longer than the size declared for it.
var errBodySize = errors.New("file body does not match its declared size")

// exactReader yields exactly left bytes of r, and fails when r has fewer or more.
type exactReader struct {
	r    io.Reader
	left int64
}

func (x *exactReader) Read(p []byte) (int, error) {
	if x.left == 0 {
		var one [1]byte
		if n, _ := io.ReadFull(x.r, one[:]); n > 0 {
			return 0, errBodySize
		}
		return 0, io.EOF
	}
	if int64(len(p)) > x.left {
		p = p[:x.left]
	}
	n, err := x.r.Read(p)
	x.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if x.left > 0 {
			return n, errBodySize
		}
		err = nil
	}
	return n, err
}

// Get opens the file, decrypting as it is read; the reader also seeks (a range of a download
// decrypts from the 64 KiB package holding its first byte). A file stored before encryption
// (not yet migrated) is read as it is.
func (e *Encrypted) Get(ctx context.Context, key string) (io.ReadCloser, ports.ObjectInfo, error) {
	stored, ws, encrypted, err := storedKey(key)
	if err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	if !encrypted {
		return e.next.Get(ctx, key)
	}
	rc, info, err := e.next.Get(ctx, stored)
	if errors.Is(err, domain.ErrNotFound) {
		rc, info, err := e.next.Get(ctx, key)
		if err != nil {
			return nil, ports.ObjectInfo{}, err
		}
		info.Name = path.Base(key)
		return rc, info, nil
	}
	if err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	f, h, err := e.open(ctx, ws, stored, rc, info.Size)
	if err != nil {
		_ = rc.Close()
		return nil, ports.ObjectInfo{}, err
	}
	if h.Name != path.Base(key) {
		_ = rc.Close()
		return nil, ports.ObjectInfo{}, fmt.Errorf("object %s: %w", key, domain.ErrNotFound)
	}
	return f, ports.ObjectInfo{Size: h.Size, ContentType: h.ContentType, ModTime: info.ModTime, Name: h.Name}, nil
}

// open reads and unseals the header of a stored object of storedSize bytes and returns the
// decrypting reader positioned at the start of the content.
func (e *Encrypted) open(ctx context.Context, workspaceID, stored string, rc io.ReadCloser, storedSize int64) (*decryptingReader, fileHeader, error) {
	var prefix [prefixLen]byte
	if _, err := io.ReadFull(rc, prefix[:]); err != nil {
		return nil, fileHeader{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, stored, err)
	}
	n := binary.BigEndian.Uint32(prefix[len(fileMagic):])
	if string(prefix[:len(fileMagic)]) != fileMagic || n == 0 || n > maxHeaderLen {
		return nil, fileHeader{}, fmt.Errorf("%w: %s: bad header", ErrCorrupt, stored)
	}
	sealed := make([]byte, n)
	if _, err := io.ReadFull(rc, sealed); err != nil {
		return nil, fileHeader{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, stored, err)
	}
	plain, err := e.cipher.Open(ctx, workspaceID, sealed, headerAAD(stored))
	if err != nil {
		return nil, fileHeader{}, fmt.Errorf("open file header %s: %w", stored, err)
	}
	var h fileHeader
	err = json.Unmarshal(plain, &h)
	clear(plain)
	if err != nil || len(h.Key) != fileKeyLen || h.Size < 0 {
		return nil, fileHeader{}, fmt.Errorf("%w: %s: bad header", ErrCorrupt, stored)
	}
	encSize, err := sio.EncryptedSize(uint64(h.Size))
	base := int64(prefixLen) + int64(n)
	if err != nil || base+int64(encSize) != storedSize {
		return nil, fileHeader{}, fmt.Errorf("%w: %s: %d bytes stored for %d of content", ErrCorrupt, stored, storedSize, h.Size)
	}
	return &decryptingReader{src: rc, key: h.Key, base: base, size: h.Size, srcAt: base}, h, nil
}

// decryptingReader reads the plaintext of a DARE stream that starts at base in src. Seeking
// moves to the chunk holding the new position and decrypts from there; src must then be an
// io.Seeker (a local file and an S3 object are).
type decryptingReader struct {
	src   io.ReadCloser
	key   []byte
	base  int64 // offset of the DARE stream in src
	size  int64 // plaintext size
	pos   int64 // plaintext position of the next Read
	srcAt int64 // position of src, or -1 when a decrypting pipe consumed from it
	p     *pipe
}

func (d *decryptingReader) Read(b []byte) (int, error) {
	if d.pos >= d.size {
		return 0, io.EOF
	}
	if d.p == nil {
		if err := d.start(); err != nil {
			return 0, err
		}
	}
	if rest := d.size - d.pos; int64(len(b)) > rest {
		b = b[:rest]
	}
	n, err := d.p.Read(b)
	d.pos += int64(n)
	if errors.Is(err, io.EOF) && d.pos < d.size {
		err = fmt.Errorf("%w: %w", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	return n, err
}

// start begins decrypting at pos: at the chunk holding it, skipping what precedes pos there.
func (d *decryptingReader) start() error {
	chunk := d.pos / chunkPlain
	at := d.base + chunk*chunkStored
	if d.srcAt != at {
		s, ok := d.src.(io.Seeker)
		if !ok {
			return errors.New("objectstore: stored object does not seek")
		}
		if _, err := s.Seek(at, io.SeekStart); err != nil {
			return fmt.Errorf("seek stored object: %w", err)
		}
	}
	d.srcAt = -1
	d.p = decryptStream(d.src, d.key, d.size, int(chunk))
	if skip := d.pos - chunk*chunkPlain; skip > 0 {
		if _, err := io.CopyN(io.Discard, d.p, skip); err != nil {
			return err
		}
	}
	return nil
}

// Seek sets the plaintext position; the next Read decrypts from there.
func (d *decryptingReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = d.pos + offset
	case io.SeekEnd:
		abs = d.size + offset
	default:
		return 0, errors.New("objectstore: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("objectstore: negative position")
	}
	if abs != d.pos {
		d.pos = abs
		if d.p != nil {
			d.p.Close()
			d.p = nil
		}
	}
	return abs, nil
}

func (d *decryptingReader) Close() error {
	if d.p != nil {
		d.p.Close()
		d.p = nil
	}
	return d.src.Close()
}

// Delete removes the file (and a plaintext copy left from before encryption).
func (e *Encrypted) Delete(ctx context.Context, key string) error {
	stored, _, encrypted, err := storedKey(key)
	if err != nil {
		return err
	}
	if encrypted {
		if err := e.next.Delete(ctx, stored); err != nil {
			return err
		}
	}
	return e.next.Delete(ctx, key)
}

// DeletePrefix removes every file under prefix: stored keys keep their key's directories.
func (e *Encrypted) DeletePrefix(ctx context.Context, prefix string) error {
	return e.next.DeletePrefix(ctx, prefix)
}

// Usage is the stored (encrypted) size under prefix: each file's content plus 32 bytes per
// 64 KiB package and its sealed header (150 to 350 bytes).
func (e *Encrypted) Usage(ctx context.Context, prefix string) (int64, error) {
	return e.next.Usage(ctx, prefix)
}
