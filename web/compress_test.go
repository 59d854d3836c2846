package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCompressedPagesRoundTrip checks that a page gzipped in cached
// segments inflates to the page, whatever was cached before.
func TestCompressedPagesRoundTrip(t *testing.T) {
	item := func(i int) string {
		return `<article id="msg-` + strings.Repeat(string(rune('a'+i%26)), 8) + `">` + strings.Repeat("Lorem ipsum dolor sit amet. ", 100+i) + `</article>`
	}
	var pages []string
	for n := 0; n < 5; n++ {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><body><section id=\"messages\">")
		for i := 0; i < 10+n; i++ {
			b.WriteString(item(i))
		}
		b.WriteString("</section>tail</body></html>")
		pages = append(pages, b.String())
	}
	pages = append(pages, "", "<p>short</p>", strings.Repeat("<", 5000))
	p := newCompressedPages(1 << 20)
	var cached int
	for round := range 2 {
		for i, page := range pages {
			zr, err := gzip.NewReader(bytes.NewReader(p.gzip([]byte(page))))
			if err != nil {
				t.Fatalf("round %d page %d: %v", round, i, err)
			}
			got, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("round %d page %d: %v", round, i, err)
			}
			if string(got) != page {
				t.Fatalf("round %d page %d: inflated %d bytes, want the page's %d", round, i, len(got), len(page))
			}
		}
		if round == 0 {
			cached = len(p.entries)
		}
	}
	// The pages grow at the end: their first segments are shared, and
	// the second round compresses nothing new.
	if cached >= 2*len(pages) || len(p.entries) != cached {
		t.Errorf("cached %d segments after one round and %d after two, want fewer than %d, then no more", cached, len(p.entries), 2*len(pages))
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   bool
	}{
		{"gzip, deflate, br", true},
		{"br;q=1.0, gzip;q=0.8", true},
		{"GZIP", true},
		{"gzip;q=0", false},
		{"deflate, br", false},
		{"", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", tt.header)
		if got := acceptsGzip(r); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
