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

// Pages are mostly the same pieces from one view to the next: the same
// messages, the same review items. compressedPages gzips a page as a
// sequence of independently compressed segments, split where a message or
// an item starts, and keeps each segment's compressed form under its exact
// text. A view then compresses only what changed. Keyed by content, an
// entry can never be stale: changed HTML is a different key.
//
// The segments are raw DEFLATE ending in a sync flush (an empty stored
// block), so they end on a byte boundary and can be laid end to end; one
// final empty block closes the stream. Each segment's matches stay inside
// it, which costs a few per cent of size for a page split at 8 KiB or more.
type compressedPages struct {
	mu      sync.RWMutex
	entries map[string][]byte
	bytes   int // keys and values held
	max     int // bytes held before starting over
}

func newCompressedPages(maxBytes int) *compressedPages {
	return &compressedPages{entries: make(map[string][]byte), max: maxBytes}
}

// Segments shorter than minSegment are joined with the next: compressing
// tiny pieces alone would cost size, and caching them would cost more than
// it saves.
const minSegment = 8 << 10

// maxScan bounds the search for a tag to split at.
const maxScan = 8 << 10

// segmentStarts are the tags where a page may be split: a message, a
// review item, a section.
var segmentStarts = []string{`<article `, `<li id="item-`, `<section `}

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
	out := make([]byte, 0, len(page)/4+64)
	out = append(out, gzipHeader...)
	for seg := range segments(page) {
		out = append(out, p.deflate(seg)...)
	}
	out = append(out, finalBlock...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(page))
	return binary.LittleEndian.AppendUint32(out, uint32(len(page)))
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

// segments splits page before each segmentStarts tag, joining pieces
// shorter than minSegment with the next.
func segments(page []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		start := 0
		for start < len(page) {
			cut := nextSegment(page, start+minSegment)
			if cut < 0 {
				break
			}
			if !yield(page[start:cut]) {
				return
			}
			start = cut
		}
		yield(page[start:])
	}
}

// nextSegment is where the segment that reaches from should end: at the
// first segmentStarts tag at or after from, or, if none comes within
// maxScan, right there (any cut is correct; tags only make cuts land in
// the same places from one view to the next). -1 means the page ends first.
func nextSegment(page []byte, from int) int {
	end := min(len(page), from+maxScan)
	for i := from; i < end; i++ {
		j := bytes.IndexByte(page[i:end], '<')
		if j < 0 {
			break
		}
		i += j
		if startsSegment(page[i:]) {
			return i
		}
	}
	if end == len(page) {
		return -1
	}
	return end
}

func startsSegment(b []byte) bool {
	for _, s := range segmentStarts {
		if len(b) >= len(s) && string(b[:len(s)]) == s {
			return true
		}
	}
	return false
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
	z := s.pages.gzip(page)
	h := c.Response().Header()
	h.Set(echo.HeaderContentEncoding, "gzip")
	if !slices.Contains(h.Values(echo.HeaderVary), echo.HeaderAcceptEncoding) {
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	}
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(z)))
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(z)
	return err
}
