package web

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/labstack/echo/v4"
)

// Pages are mostly the same from one view to the next: the same messages,
// the same review items. compressedPages gzips a page as a sequence of
// independently compressed segments of segmentSize bytes, and keeps each
// segment's compressed form under its exact text. A view then compresses
// only what changed since the last one: messages added at the end, or
// everything after a change in the middle (which shifts the cuts), once.
// Keyed by content, an entry can never be stale: changed HTML is a
// different key. Cutting at fixed offsets costs nothing to find; looking
// for tags to cut at cost more than it saved.
//
// The segments are raw DEFLATE ending in a sync flush (an empty stored
// block), so they end on a byte boundary and can be laid end to end; one
// final empty block closes the stream. Each segment's matches stay inside
// it, which costs a few per cent of size at 16 KiB.
type compressedPages struct {
	mu      sync.RWMutex
	entries map[string][]byte
	bytes   int // keys and values held
	max     int // bytes held before starting over
}

func newCompressedPages(maxBytes int) *compressedPages {
	return &compressedPages{entries: make(map[string][]byte), max: maxBytes}
}

// segmentSize is the length of the pieces a page is compressed and cached in.
const segmentSize = 16 << 10

// gzipHeader is a gzip member header: no name, no time, OS unknown.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// finalBlock is an empty final DEFLATE block with fixed codes.
var finalBlock = []byte{0x03, 0x00}

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// gzip returns page as a gzip stream.
func (p *compressedPages) gzip(page []byte) []byte {
	var trailer [10]byte
	parts, n := p.gzipParts(page, nil, &trailer)
	out := make([]byte, 0, n)
	for _, part := range parts {
		out = append(out, part...)
	}
	return out
}

// gzipParts appends to parts the pieces of page's gzip stream, in order,
// and returns them with their total length: the header, the compressed
// segments (the cache's own: never change them), and the final block
// with the checksum and length, written into trailer. Writing the pieces
// one after the other copies nothing.
func (p *compressedPages) gzipParts(page []byte, parts [][]byte, trailer *[10]byte) ([][]byte, int) {
	parts = append(parts, gzipHeader)
	n := len(gzipHeader)
	for off := 0; off < len(page); off += segmentSize {
		z := p.deflate(page[off:min(off+segmentSize, len(page))])
		parts = append(parts, z)
		n += len(z)
	}
	t := append(trailer[:0], finalBlock...)
	t = binary.LittleEndian.AppendUint32(t, crc32.ChecksumIEEE(page))
	t = binary.LittleEndian.AppendUint32(t, uint32(len(page)))
	return append(parts, t), n + len(t)
}

// deflate returns seg compressed and sync-flushed, from the cache when
// the same text was compressed before.
func (p *compressedPages) deflate(seg []byte) []byte {
	p.mu.RLock()
	z, ok := p.entries[string(seg)] // no allocation for the lookup
	p.mu.RUnlock()
	if ok {
		return z
	}
	var buf bytes.Buffer
	buf.Grow(len(seg)/3 + 16)
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	w.Write(seg) // a bytes.Buffer does not fail
	w.Flush()    // sync flush: byte-aligned, not final
	deflaters.Put(w)
	z = buf.Bytes()

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+len(seg)+len(z) > p.max {
		clear(p.entries)
		p.bytes = 0
	}
	if _, ok := p.entries[string(seg)]; !ok {
		p.entries[string(seg)] = z
		p.bytes += len(seg) + len(z)
	}
	return z
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		if _, q, ok := strings.Cut(params, "q="); ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(q), 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// writeGzip writes page gzipped through s.pages. The compression
// middleware leaves a response alone that names its own encoding.
func (s *Server) writeGzip(c echo.Context, status int, page []byte) error {
	var buf [16][]byte
	var trailer [10]byte
	parts, n := s.pages.gzipParts(page, buf[:0], &trailer)
	h := c.Response().Header()
	h.Set(echo.HeaderContentEncoding, "gzip")
	if !slices.Contains(h.Values(echo.HeaderVary), echo.HeaderAcceptEncoding) {
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	}
	h.Set(echo.HeaderContentLength, strconv.Itoa(n))
	c.Response().WriteHeader(status)
	for _, part := range parts {
		if _, err := c.Response().Write(part); err != nil {
			return err
		}
	}
	return nil
}
