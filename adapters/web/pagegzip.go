package web

import (
	"bytes"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/flate"
)

// The clean page is compressed once per cached page, not per view: each constant part is kept
// as raw DEFLATE blocks ended with a sync flush (the last one with the final block), and a view
// is a gzip member made of those blocks with the per-view values (token, challenge, UTM inputs)
// between them as stored, uncompressed blocks. The CRC-32 of the page is combined from the
// parts' precomputed CRCs and those of the values, so a view never reads the constant bytes.
// The per-view values are never compressed together with the page: their size tells nothing
// about the rest of the page.

// gzipHeader is a gzip member header: deflate, no flags, no time, unknown OS (as compress/gzip
// writes it).
var gzipHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// gzipPart is a constant part of a cached page, compressed.
type gzipPart struct {
	deflate []byte // raw DEFLATE: ends byte-aligned (sync flush), or with the final block
	crc     uint32 // CRC-32 (IEEE) of the part
	shift   uint32 // x^(8·len(part)) mod P: what appending the part does to a CRC
}

// compressParts compresses each part on its own (no back-references across a slot, whose
// content changes per view).
func compressParts(parts []string) ([]gzipPart, error) {
	out := make([]gzipPart, len(parts))
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	for i, s := range parts {
		buf.Reset()
		fw.Reset(&buf)
		if _, err := fw.Write([]byte(s)); err != nil {
			return nil, err
		}
		if i == len(parts)-1 {
			err = fw.Close()
		} else {
			err = fw.Flush()
		}
		if err != nil {
			return nil, err
		}
		out[i] = gzipPart{deflate: bytes.Clone(buf.Bytes()), crc: crc32.ChecksumIEEE([]byte(s)), shift: crcShift(uint64(len(s)))}
	}
	return out, nil
}

// writeGzip writes the gzip member of the page with the per-view values spliced in. scratch is
// reused for the escaped values.
func (p *cachedPage) writeGzip(buf, scratch *bytes.Buffer, token, challenge string, utm []utmValue) {
	buf.Grow(len(gzipHeader) + p.gzSize + 2*len(token) + 3*len(challenge) + 160*len(utm) + 16)
	buf.Write(gzipHeader[:])
	var crc uint32
	size := 0
	for i, s := range p.slots {
		part := &p.gz[i]
		buf.Write(part.deflate)
		crc = crcCombine(crc, part.crc, part.shift)
		size += len(p.parts[i])
		scratch.Reset()
		p.writeSlot(scratch, s, token, challenge, utm)
		v := scratch.Bytes()
		crc = crcCombine(crc, crc32.ChecksumIEEE(v), crcShift(uint64(len(v))))
		size += len(v)
		writeStored(buf, v)
	}
	last := &p.gz[len(p.gz)-1]
	buf.Write(last.deflate)
	crc = crcCombine(crc, last.crc, last.shift)
	size += len(p.parts[len(p.parts)-1])
	var trailer [8]byte
	putLE32(trailer[:4], crc)
	putLE32(trailer[4:], uint32(size)) // ISIZE: the size modulo 2^32
	buf.Write(trailer[:])
}

// writeStored writes b as non-final stored DEFLATE blocks (at most 65535 bytes each); the
// stream is byte-aligned before and after.
func writeStored(buf *bytes.Buffer, b []byte) {
	for len(b) > 0 {
		n := min(len(b), 0xffff)
		buf.Write([]byte{0, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		buf.Write(b[:n])
		b = b[n:]
	}
}

func putLE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// CRC-32 combination (as zlib's crc32_combine): in the reflected representation of
// polynomials over GF(2) modulo the IEEE polynomial, CRC(A‖B) = CRC(A)·x^(8·len(B)) + CRC(B).

// crcMul multiplies a and b modulo the polynomial.
func crcMul(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
}

// crcX2n[k] is x^(2^k) modulo the polynomial.
var crcX2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = crcMul(p, p)
	}
	return t
}()

// crcShift is x^(8·n) modulo the polynomial.
func crcShift(n uint64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = crcMul(crcX2n[k&31], p)
		}
	}
	return p
}

// crcCombine is the CRC of A‖B from crcA, crcB and crcShift(len(B)).
func crcCombine(crcA, crcB, shiftB uint32) uint32 {
	return crcMul(shiftB, crcA) ^ crcB
}

// acceptsGzip reports whether the request accepts a gzip response, read as the compression
// middleware (gzhttp) reads Accept-Encoding: a "gzip" coding with a q-value above 0; never for
// HEAD.
func acceptsGzip(r *http.Request) bool {
	if r.Method == http.MethodHead {
		return false
	}
	for _, line := range r.Header.Values("Accept-Encoding") {
		for _, c := range strings.Split(line, ",") {
			name, params, _ := strings.Cut(c, ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				p = strings.TrimSpace(p)
				if len(p) >= 2 && strings.EqualFold(p[:2], "q=") {
					q, _ = strconv.ParseFloat(p[2:], 64)
				}
			}
			return q > 0
		}
	}
	return false
}

// varyAcceptEncoding adds Accept-Encoding to the response's Vary unless it is there (the
// compression middleware adds it to every response it sees).
func varyAcceptEncoding(h http.Header) {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Accept-Encoding") {
				return
			}
		}
	}
	h.Add("Vary", "Accept-Encoding")
}
